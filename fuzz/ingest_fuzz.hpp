// Shared body of the ingest fuzzers: parse the input as the given formats, derive, sum. Any crash, sanitizer
// report or exception escaping parse_text is a bug (parsers turn bad content into warnings).
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "ridge/ingest.hpp"

inline int fuzz_ingest(const uint8_t* data, size_t size, std::initializer_list<ridge::ingest::Format> formats) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto f : formats) {
    ridge::ingest::ReadOptions o;
    o.format = f;
    ridge::ingest::Profile p = ridge::ingest::parse_text(text, "fuzz-input", o);
    ridge::ingest::derive(p);
    ridge::ingest::totals(p);
  }
  return 0;
}
