// graft-inspect html: the graph as one interactive page. The page (tools/html:
// its HTML, CSS and JavaScript) is compiled into the binary
// (cmake/embed_text.cmake), so graft-inspect needs no files beside it, and
// the page it writes holds the graph and its costs, so that it works from
// file:// with no server and no network.
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>

#include "graft/errors.h"
#include "inspect.h"
#include "inspect_html_assets.h"  // generated from tools/html
#include "ir/cost.h"
#include "ir/graph.h"

namespace graft::inspect {
namespace {

// The template's markers, /*@NAME@*/: an asset's name, or one of these.
constexpr std::string_view kMarkerOpen = "/*@", kMarkerClose = "@*/";
constexpr std::string_view kGraphMarker = "graph", kCostMarker = "cost";

const html_assets::Asset& find_asset(std::string_view name) {
  for (const html_assets::Asset& asset : html_assets::kAssets)
    if (asset.name == name) return asset;
  throw Error("graft-inspect html: the page template names no asset '" + std::string(name) + "'");
}

void write_asset(std::string_view name, std::ostream& out) {
  const html_assets::Asset& asset = find_asset(name);
  for (size_t k = 0; k < asset.count; ++k) out << asset.chunks[k];
}

// JSON inside a <script> element: the HTML parser ends the element at the
// first "</script" and reads "<!--" specially, even inside a JSON string, so
// every '<' is written as \u003c, which JSON.parse reads back as '<' (outside
// strings JSON has no '<').
void write_script_json(std::string_view json, std::ostream& out) {
  size_t begin = 0;
  for (size_t lt = json.find('<'); lt != std::string_view::npos; lt = json.find('<', begin)) {
    out << json.substr(begin, lt - begin) << "\\u003c";
    begin = lt + 1;
  }
  out << json.substr(begin);
}

// A JSON number; a cost that is not finite (none should be) as 0, which
// JSON cannot spell otherwise.
std::string json_number(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// The overlay's figures: node id -> [flops, bytes], and a third element 1
// when the cost is one trip of a while loop's body.
void write_costs(const ir::Graph& g, std::ostream& out) {
  out << '{';
  bool first = true;
  for (const ir::Node& n : g.nodes()) {
    const ir::Cost c = ir::node_cost(g, n);
    out << (first ? "" : ",") << '"' << n.id << "\":[" << json_number(c.flops) << ',' << json_number(c.bytes)
        << (c.per_trip ? ",1" : "") << ']';
    first = false;
  }
  out << '}';
}

}  // namespace

void write_html(const Graph& g, std::ostream& out) {
  std::ostringstream joined;  // the template, whole (it is stored in chunks)
  write_asset("view.html", joined);
  const std::string page = joined.str();
  size_t begin = 0;
  for (size_t open = page.find(kMarkerOpen); open != std::string::npos; open = page.find(kMarkerOpen, begin)) {
    const size_t close = page.find(kMarkerClose, open);
    if (close == std::string::npos) throw Error("graft-inspect html: an unclosed marker in the page template");
    out << page.substr(begin, open - begin);
    const std::string_view name =
        std::string_view(page).substr(open + kMarkerOpen.size(), close - open - kMarkerOpen.size());
    if (name == kGraphMarker)
      write_script_json(g.to_json(-1), out);
    else if (name == kCostMarker)
      write_costs(g.ir(), out);
    else
      write_asset(name, out);
    begin = close + kMarkerClose.size();
  }
  out << page.substr(begin);
}

}  // namespace graft::inspect
