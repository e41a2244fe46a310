// Bad ONNX input: every case gives a one-line ridge::Error naming the file (and node), never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "load/onnx_tiny_model.hpp"
#include "ridge/error.hpp"
#include "ridge/onnx_import.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

using test::set_attr;
using test::TinyModel;

TinyModel valid_model() {
  TinyModel m;
  m.input("x", {-1, 3, 8, 8}).weight("w", {4, 3, 3, 3});
  m.node("Conv", {"x", "w"}, {"c"}, "/conv/Conv");
  m.node("Relu", {"c"}, {"y"}, "/relu/Relu");
  m.output("y");
  return m;
}

/// The error message of importing `bytes`, or "" when it imported.
std::string error_of(const std::string& bytes, const std::string& label = "bad.onnx") {
  try {
    import_onnx_bytes(bytes, label, LoadOptions{});
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(what.rfind(label, 0), 0u) << what;
    return what;
  }
  return "";
}

void expect_error(const std::string& bytes, const std::string& fragment) {
  const std::string what = error_of(bytes);
  EXPECT_NE(what.find(fragment), std::string::npos) << "error was: '" << what << "'";
}

TEST(OnnxMalformed, ValidModelImports) { EXPECT_EQ(error_of(valid_model().bytes()), ""); }

TEST(OnnxMalformed, TruncatedFileAtEveryLength) {
  const std::string bytes = valid_model().bytes();
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string what = error_of(bytes.substr(0, n));
    // Some prefixes are themselves valid protobuf; those must still fail as a model or import cleanly.
    if (n < 8) {
      EXPECT_FALSE(what.empty()) << n;
    }
  }
}

TEST(OnnxMalformed, RandomBytes) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    std::string bytes(1 + rng() % 512, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    EXPECT_FALSE(error_of(bytes).empty());
  }
}

TEST(OnnxMalformed, WrongWireTypesAndFlippedBytesNeverCrash) {
  const std::string bytes = valid_model().bytes();
  for (size_t i = 0; i < bytes.size(); ++i)
    for (unsigned char flip : {0x01, 0x80, 0xff}) {
      std::string mutated = bytes;
      mutated[i] = static_cast<char>(static_cast<unsigned char>(mutated[i]) ^ flip);
      error_of(mutated);  // either imports or throws ridge::Error; never crashes
    }
}

TEST(OnnxMalformed, Cycle) {
  TinyModel m;
  m.input("x", {1, 4});
  m.node("Add", {"x", "b"}, {"a"}, "/first/Add");
  m.node("Relu", {"a"}, {"b"}, "/second/Relu");
  m.output("b");
  expect_error(m.bytes(), "cycle");
}

TEST(OnnxMalformed, MissingNodeInput) {
  TinyModel m;
  m.input("x", {1, 4});
  m.node("Add", {"x", "ghost"}, {"y"}, "/add/Add");
  m.output("y");
  expect_error(m.bytes(), "node '/add/Add' (Add): input 'ghost' is not produced");
}

TEST(OnnxMalformed, NegativeAndAbsurdDims) {
  TinyModel neg = valid_model();
  neg.weight("bad", {-3, 2});
  neg.node("Add", {"y", "bad"}, {"z"}, "/add/Add");
  expect_error(neg.bytes(), "negative");
  TinyModel huge;
  huge.input("x", {1'000'000'000'000'000, 4});
  huge.node("Relu", {"x"}, {"y"});
  huge.output("y");
  expect_error(huge.bytes(), "absurd");
  TinyModel reshape;
  reshape.input("x", {2, 4}).ints("shape", {1'000'000'000'000, 1'000'000'000'000});
  reshape.node("Reshape", {"x", "shape"}, {"y"}, "/Reshape");
  reshape.output("y");
  EXPECT_FALSE(error_of(reshape.bytes()).empty());
}

TEST(OnnxMalformed, DomainNotImported) {
  TinyModel m = valid_model();
  m.node("Fancy", {"y"}, {"z"}, "/fancy").set_domain("com.unknown");
  expect_error(m.bytes(), "domain 'com.unknown'");
}

TEST(OnnxMalformed, OpsetNewerThanTheLibrary) {
  TinyModel m(99);
  m.input("x", {1, 4});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  expect_error(m.bytes(), "newer");
}

TEST(OnnxMalformed, NoGraph) { expect_error(std::string("\x08\x07", 2), "no graph"); }

TEST(OnnxMalformed, InconsistentShapesNameTheNode) {
  TinyModel m;
  m.input("x", {2, 3, 8, 8}).weight("w", {4, 5, 3, 3});
  m.node("Conv", {"x", "w"}, {"y"}, "/conv/Conv");
  m.output("y");
  EXPECT_FALSE(error_of(m.bytes()).empty());
  TinyModel r;
  r.input("x", {2, 5}).ints("shape", {3, 3});
  r.node("Reshape", {"x", "shape"}, {"y"}, "/Reshape");
  r.output("y");
  expect_error(r.bytes(), "/Reshape");
}

TEST(OnnxMalformed, DuplicateTensorName) {
  TinyModel m;
  m.input("x", {1, 4});
  m.node("Relu", {"x"}, {"y"}, "/a");
  m.node("Relu", {"x"}, {"y"}, "/b");
  m.output("y");
  expect_error(m.bytes(), "defined twice");
}

TEST(OnnxMalformed, InputFlagNamingNoInput) {
  LoadOptions o;
  o.input_shapes = {{"nope", Shape{{1, 3, 8, 8}}}};
  try {
    import_onnx_bytes(valid_model().bytes(), "m.onnx", o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--input nope"), std::string::npos) << e.what();
  }
  o.input_shapes = {{"x", Shape{{1, 3, 8}}}};
  EXPECT_THROW(import_onnx_bytes(valid_model().bytes(), "m.onnx", o), Error);
}

TEST(OnnxMalformed, FilesThatAreNotThere) {
  EXPECT_THROW(import_onnx("/nonexistent/model.onnx", LoadOptions{}), Error);
  EXPECT_THROW(import_onnx(test::temp_dir(), LoadOptions{}), Error);
}

TEST(OnnxMalformed, RegressionInputsFromFuzzingImportOrFailCleanly) {
  const std::filesystem::path dir = std::filesystem::path(RIDGE_SOURCE_DIR) / "tests/load/onnx_regressions";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no regression inputs";
  int replayed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().extension() == ".md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    error_of(bytes, entry.path().filename().string());
    ++replayed;
  }
  std::cout << "replayed " << replayed << " fuzzer regression input(s)\n";
}

}  // namespace
}  // namespace ridge
