// A small XML well-formedness checker for chart tests: balanced tags, quoted attributes, known entities, no
// stray '<' or '&' in text. Also counts elements and class attributes, and collects the text of elements.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace ridge::test {

/// What check_xml() found.
struct XmlInfo {
  bool ok = false;
  std::string error;                      ///< first problem, with its byte offset
  std::map<std::string, int> elements;    ///< element name -> count
  std::map<std::string, int> classes;     ///< class attribute value -> count
  std::map<std::string, std::vector<std::string>> text_by_class;  ///< class -> text content of those elements
  std::string root;                       ///< name of the root element
};

/// Checks that `xml` is one well-formed XML document (an optional declaration, one root element).
XmlInfo check_xml(const std::string& xml);

/// Every <svg ...>...</svg> fragment of an HTML page, in order.
std::vector<std::string> svg_fragments(const std::string& html);

}  // namespace ridge::test
