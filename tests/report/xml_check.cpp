#include "report/xml_check.hpp"

#include <cctype>
#include <string_view>

namespace ridge::test {
namespace {

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.'; }

// Validates text content (entities only of known forms); returns an error or "".
std::string check_text(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<') return "stray '<'";
    if (text[i] != '&') continue;
    size_t end = text.find(';', i);
    if (end == std::string_view::npos || end - i > 10) return "unterminated entity";
    std::string_view ent = text.substr(i + 1, end - i - 1);
    bool known = ent == "amp" || ent == "lt" || ent == "gt" || ent == "quot" || ent == "apos" ||
                 (ent.size() > 1 && ent[0] == '#');
    if (!known) return "unknown entity &" + std::string(ent) + ";";
  }
  return "";
}

std::string decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') { out += text[i]; continue; }
    size_t end = text.find(';', i);
    std::string_view ent = text.substr(i + 1, end - i - 1);
    out += ent == "amp" ? "&" : ent == "lt" ? "<" : ent == "gt" ? ">" : ent == "quot" ? "\"" : "'";
    i = end;
  }
  return out;
}

}  // namespace

XmlInfo check_xml(const std::string& xml) {
  XmlInfo info;
  struct Open { std::string name, cls; std::string text; };
  std::vector<Open> stack;
  size_t i = 0;
  auto fail = [&](const std::string& why) {
    info.ok = false;
    info.error = why + " at byte " + std::to_string(i);
    return info;
  };
  bool root_closed = false;
  while (i < xml.size()) {
    size_t lt = xml.find('<', i);
    std::string_view text(xml.data() + i, (lt == std::string::npos ? xml.size() : lt) - i);
    if (std::string e = check_text(text); !e.empty()) return fail(e);
    if (stack.empty() && text.find_first_not_of(" \t\r\n") != std::string_view::npos) return fail("text outside the root");
    for (auto& o : stack) o.text += decode(text);
    if (lt == std::string::npos) break;
    i = lt;
    if (xml.compare(i, 4, "<!--") == 0) {
      size_t end = xml.find("-->", i);
      if (end == std::string::npos) return fail("unterminated comment");
      i = end + 3;
      continue;
    }
    if (xml.compare(i, 2, "<?") == 0) {
      size_t end = xml.find("?>", i);
      if (end == std::string::npos) return fail("unterminated declaration");
      i = end + 2;
      continue;
    }
    bool closing = xml.compare(i, 2, "</") == 0;
    size_t p = i + (closing ? 2 : 1);
    size_t name_start = p;
    while (p < xml.size() && name_char(xml[p])) ++p;
    std::string name = xml.substr(name_start, p - name_start);
    if (name.empty()) return fail("bad tag name");
    if (closing) {
      while (p < xml.size() && std::isspace(static_cast<unsigned char>(xml[p]))) ++p;
      if (p >= xml.size() || xml[p] != '>') return fail("bad closing tag");
      if (stack.empty() || stack.back().name != name) return fail("mismatched </" + name + ">");
      if (!stack.back().cls.empty()) info.text_by_class[stack.back().cls].push_back(stack.back().text);
      stack.pop_back();
      if (stack.empty()) root_closed = true;
      i = p + 1;
      continue;
    }
    if (root_closed) return fail("second root element");
    if (stack.empty()) info.root = name;
    std::string cls;
    bool self_closing = false;
    while (true) {
      while (p < xml.size() && std::isspace(static_cast<unsigned char>(xml[p]))) ++p;
      if (p >= xml.size()) return fail("unterminated tag <" + name);
      if (xml[p] == '>') { ++p; break; }
      if (xml.compare(p, 2, "/>") == 0) { p += 2; self_closing = true; break; }
      size_t a = p;
      while (p < xml.size() && name_char(xml[p])) ++p;
      std::string attr = xml.substr(a, p - a);
      if (attr.empty() || p >= xml.size() || xml[p] != '=') return fail("bad attribute in <" + name);
      ++p;
      if (p >= xml.size() || (xml[p] != '"' && xml[p] != '\'')) return fail("unquoted attribute " + attr);
      char q = xml[p];
      size_t end = xml.find(q, p + 1);
      if (end == std::string::npos) return fail("unterminated attribute " + attr);
      std::string_view value(xml.data() + p + 1, end - p - 1);
      if (std::string e = check_text(value); !e.empty()) return fail(e + " in attribute " + attr);
      if (attr == "class") cls = decode(value);
      p = end + 1;
    }
    ++info.elements[name];
    if (!cls.empty()) ++info.classes[cls];
    if (self_closing) {
      if (!cls.empty()) info.text_by_class[cls].push_back("");
      if (stack.empty()) root_closed = true;
    } else {
      stack.push_back({name, cls, ""});
    }
    i = p;
  }
  if (!stack.empty()) return fail("unclosed <" + stack.back().name + ">");
  if (info.root.empty()) return fail("no root element");
  info.ok = true;
  return info;
}

std::vector<std::string> svg_fragments(const std::string& html) {
  std::vector<std::string> out;
  size_t i = 0;
  while ((i = html.find("<svg", i)) != std::string::npos) {
    size_t end = html.find("</svg>", i);
    if (end == std::string::npos) break;
    out.push_back(html.substr(i, end + 6 - i));
    i = end + 6;
  }
  return out;
}

}  // namespace ridge::test
