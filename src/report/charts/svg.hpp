// Internal to the report stage: charts drawn as SVG fragments, composed into documents.
#pragma once
#include <string>
#include <vector>

#include "ridge/chart.hpp"

namespace ridge::chart::detail {

/// A drawn chart: SVG elements (no <svg> wrapper) and the size they occupy.
struct Drawn {
  std::string body;
  double width = 0;
  double height = 0;
};

/// Draws one chart. `id` prefixes element ids (clip paths) so that several charts can share one HTML page.
Drawn draw_chart(const Chart& chart, const std::string& id);
/// Wraps drawn charts, side by side, in one <svg> element (with an XML declaration unless `inline_svg`).
std::string svg_document(const std::vector<Drawn>& charts, bool inline_svg);
/// Escapes text for XML content and attribute values.
std::string xml_escape(const std::string& text);

}  // namespace ridge::chart::detail
