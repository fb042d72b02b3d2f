// graft-inspect html in a real browser: headless Chromium opens the page the
// built graft-inspect writes and runs the page's self-test
// (tools/html/view_selftest.js), which works the page through its own
// controls (clicks a box, a frame's header, a search hit) and reports what
// it then drew, counted from the SVG. These tests check that report against
// what the graph holds. CI installs Chromium with scripts/setup.sh.
#ifdef GRAFT_INSPECT
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "ir/cost.h"
#include "support/shell.h"
#include "tools/model_graphs.h"

using namespace graft;

namespace {

const std::filesystem::path kDir = std::filesystem::path(GRAFT_TEST_TMPDIR) / "html_view";

// Generous bounds on one layout and one drawing of the 3,056-node graph,
// for a loaded CI machine; they take about 10 ms each on a developer's one.
constexpr double kLayoutMsLimit = 300, kDrawMsLimit = 300;

// One step of the self-test's report: the action, then its "name=value" lines.
struct Step {
  std::string action;
  std::map<std::string, std::vector<std::string>> fields;

  std::string get(const std::string& name) const {
    auto it = fields.find(name);
    return it == fields.end() ? "(missing " + name + ")" : it->second.front();
  }
  double number(const std::string& name) const { return std::stod(get(name)); }
  std::vector<double> numbers(const std::string& name) const {
    std::vector<double> values;
    std::stringstream in(get(name));
    for (std::string item; std::getline(in, item, ',');) values.push_back(std::stod(item));
    return values;
  }
  std::set<std::string> list(const std::string& name) const {
    std::set<std::string> items;
    std::stringstream in(get(name));
    for (std::string item; std::getline(in, item, ',');) items.insert(item);
    return items;
  }
};

std::string unescape_html(std::string s) {
  for (const auto& [entity, text] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&nbsp;", " "}, {"&amp;", "&"}}) {
    for (size_t at = s.find(entity); at != std::string::npos; at = s.find(entity, at + text.size()))
      s.replace(at, entity.size(), text);
  }
  return s;
}

// The report in <pre id="selftest"> of a page's DOM, one Step per action.
std::vector<Step> parse_report(const std::string& dom) {
  const size_t pre = dom.find("<pre id=\"selftest\"");
  REQUIRE(pre != std::string::npos);
  const size_t begin = dom.find('>', pre) + 1, end = dom.find("</pre>", begin);
  REQUIRE(end != std::string::npos);
  std::vector<Step> steps;
  std::stringstream in(unescape_html(dom.substr(begin, end - begin)));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("step ", 0) == 0) {
      steps.push_back({line.substr(line.find(": ") + 2), {}});
    } else if (const size_t eq = line.find('='); eq != std::string::npos && !steps.empty()) {
      steps.back().fields[line.substr(0, eq)].push_back(line.substr(eq + 1));
    }
  }
  return steps;
}

// An action's argument in the URL's fragment: all but letters and digits
// percent-encoded (the page decodes it), so quotes and brackets in input
// names pass the shell and the URL unchanged.
std::string percent_encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '/' || c == ':') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// Writes `g`'s page with graft-inspect html, opens it in headless Chromium
// with the self-test running `actions` and returns its report.
std::vector<Step> browse(const Graph& g, const std::string& name, const std::vector<std::string>& actions) {
  if (std::system("command -v chromium >/dev/null 2>&1") != 0)
    FAIL("chromium is not on PATH: scripts/setup.sh installs it (headless Chromium runs graft-inspect html's page)");
  std::filesystem::create_directories(kDir);
  const std::filesystem::path json = kDir / (name + ".json"), page = kDir / (name + ".html");
  std::ofstream(json) << g.to_json();
  int status = -1;
  const std::string written = test::run(
      std::string("'") + GRAFT_INSPECT + "' html '" + json.string() + "' -o '" + page.string() + "'", &status);
  INFO(written);
  REQUIRE(status == 0);
  std::string hash = "#selftest=";
  for (const std::string& action : actions) hash += percent_encode(action) + ";";
  // A profile of its own per run, so that test processes running at once do
  // not share one; the browser's own messages go to a log, not the DOM.
  const std::filesystem::path profile = kDir / (name + "-profile"), log = kDir / (name + "-chromium.log");
  const std::string command =
      "(timeout 120 chromium --headless --no-sandbox --disable-gpu --window-size=1280,800 "
      "--virtual-time-budget=10000 --user-data-dir='" +
      profile.string() + "' --dump-dom 'file://" + percent_encode(page.string()) + hash + "' 2>'" + log.string() + "')";
  const std::string dom = test::run(command, &status);
  INFO("chromium log: " + log.string());
  REQUIRE(status == 0);
  std::vector<Step> steps = parse_report(dom);
  REQUIRE(steps.size() == actions.size());
  for (const Step& step : steps) {
    INFO(step.action);
    CHECK(step.fields.count("error") == 0);
  }
  CHECK(steps.back().get("errors") == "0");  // no uncaught script error
  CHECK(steps.back().get("done") == "1");
  return steps;
}

// What shows a node when the groups in `open` are expanded: the outermost
// collapsed scope holding it, or (its scope open) the node itself.
std::string shown_as(const ir::Node& n, const std::set<std::string>& open) {
  for (size_t slash = n.scope.find('/'); !n.scope.empty(); slash = n.scope.find('/', slash + 1)) {
    const std::string prefix = n.scope.substr(0, slash);
    if (!open.count(prefix)) return prefix;
    if (slash == std::string::npos) break;
  }
  return "node " + std::to_string(n.id);
}

// The edges the page should draw: one per pair of shown items that a value
// passes between (the graph's inputs and outputs collapsed into one box each).
size_t bundled_edges(const ir::Graph& g, const std::set<std::string>& open) {
  std::map<ir::ValueId, std::string> shown;
  for (ir::ValueId v : g.inputs()) shown[v] = "(inputs)";
  std::set<std::pair<std::string, std::string>> pairs;
  for (const ir::Node& n : g.nodes()) {
    const std::string item = shown_as(n, open);
    for (ir::ValueId v : n.inputs)
      if (shown.at(v) != item) pairs.insert({shown.at(v), item});
    for (ir::ValueId v : n.outputs) shown[v] = item;
  }
  for (ir::ValueId v : g.outputs()) pairs.insert({shown.at(v), "(outputs)"});
  return pairs.size();
}

// The first-level groups under `parent` ("" for the top level).
std::set<std::string> child_scopes(const ir::Graph& g, const std::string& parent) {
  std::set<std::string> children;
  const std::string prefix = parent.empty() ? "" : parent + "/";
  for (const ir::Node& n : g.nodes()) {
    if (n.scope.size() <= prefix.size() || n.scope.rfind(prefix, 0) != 0) continue;
    children.insert(n.scope.substr(0, n.scope.find('/', prefix.size())));
  }
  return children;
}

}  // namespace

// (Test names hold no ',' or ';': ctest passes a name to Catch as a test spec.)
TEST_CASE("graft-inspect html: a 21-block transformer gradient opens collapsed and clicks and search open it",
          "[tools][html]") {
  constexpr int kBlocks = 21;  // past 3,000 nodes
  const Graph graph = test::transformer_grad_graph(kBlocks);
  const ir::Graph& g = graph.ir();
  REQUIRE(g.num_nodes() > 3000);
  REQUIRE(g.inputs().size() > 12);  // so the page groups the inputs and the outputs into a box each
  REQUIRE(g.outputs().size() > 12);

  // A dot_general of the backward pass, and a parameter, to search for.
  const std::string mlp7 = "backward/block07/mlp";
  std::vector<const ir::Node*> dots;
  for (const ir::Node& n : g.nodes())
    if (n.op == ir::Op::dot_general && n.scope.find(mlp7) != std::string::npos) dots.push_back(&n);
  REQUIRE(!dots.empty());
  size_t wq = 0;
  while (wq < g.input_names().size() && g.input_names()[wq].find("['block05']['wq']") == std::string::npos) ++wq;
  REQUIRE(wq < g.input_names().size());

  const std::vector<Step> steps = browse(graph, "transformer21",
                                         {"open", "overlay:flops", "expand:block03", "search:dot_general " + mlp7,
                                          "pick:0", "search:" + g.input_names()[wq], "pick:0", "collapse:block03"});
  const Step &open = steps[0], &overlay = steps[1], &expand = steps[2], &search = steps[3], &pick = steps[4],
             &name_search = steps[5], &name_pick = steps[6], &collapse = steps[7];

  // Opened: one box per top-level scope (the blocks, loss, backward) and
  // for the inputs and the outputs; the top-level nodes as nodes.
  std::set<std::string> top = child_scopes(g, "");
  REQUIRE(top.size() == kBlocks + 2);
  int top_nodes = 0;
  for (const ir::Node& n : g.nodes()) top_nodes += n.scope.empty();
  std::set<std::string> collapsed = top;
  collapsed.insert({"(inputs)", "(outputs)"});
  CHECK(open.list("collapsed") == collapsed);
  CHECK(open.number("visible_boxes") == kBlocks + 4);
  CHECK(open.number("visible_nodes") == top_nodes);
  CHECK(open.number("visible_frames") == 0);
  CHECK(open.get("expanded") == "");
  CHECK(open.number("backward_boxes") == 1);  // the gradient pass, shaded
  CHECK(open.number("visible_edges") == bundled_edges(g, {}));
  CHECK(open.number("layout_ms") < kLayoutMsLimit);
  CHECK(open.number("draw_ms") < kDrawMsLimit);

  // The overlay colours every box and node with flops: each scope's sum.
  std::map<std::string, double> flops;
  for (const ir::Node& n : g.nodes()) flops[shown_as(n, {})] += ir::node_cost(g, n).flops;
  int heated = 0;
  for (const auto& [item, f] : flops) heated += f > 0;
  CHECK(overlay.number("heated") == heated);
  CHECK(overlay.get("legend").find("FLOP") != std::string::npos);

  // A click on block03 draws it open with its child scopes as boxes.
  const std::set<std::string> block03 = child_scopes(g, "block03");
  CHECK(block03 == std::set<std::string>{"block03/attention", "block03/mlp"});
  collapsed.erase("block03");
  collapsed.insert(block03.begin(), block03.end());
  CHECK(expand.get("expanded") == "block03");
  CHECK(expand.list("collapsed") == collapsed);
  CHECK(expand.number("visible_boxes") == kBlocks + 5);
  CHECK(expand.number("visible_frames") == 1);
  CHECK(expand.number("visible_edges") == bundled_edges(g, {"block03"}));
  CHECK(expand.get("selected") == "group block03");
  CHECK(expand.number("layout_ms") < kLayoutMsLimit);
  CHECK(expand.number("draw_ms") < kDrawMsLimit);
  INFO("layout ms: collapsed " << open.get("layout_ms") << ", block03 expanded " << expand.get("layout_ms"));

  // Search lists every dot_general of that scope (and marks the collapsed
  // backward box that holds them); picking the first opens its scopes,
  // selects it and centres it, its details in the panel.
  CHECK(search.number("search_hits") == dots.size());
  CHECK(search.number("listed") == dots.size());
  CHECK(search.get("hit_marks") == "0,1");
  CHECK(pick.get("selected") == "node " + std::to_string(dots[0]->id));
  CHECK(pick.get("selected_scope") == dots[0]->scope);
  CHECK(pick.number("selected_drawn") == 1);
  CHECK(pick.get("centred") == "1");
  CHECK(pick.get("panel_title") == "dot_general");
  for (const char* row : {"scope", "source", "outputs", "inputs", "flops", "bytes"})
    CHECK(pick.list("panel_rows").count(row) == 1);
  std::set<std::string> opened{"block03"};
  for (size_t slash = dots[0]->scope.find('/'); slash != std::string::npos; slash = dots[0]->scope.find('/', slash + 1))
    opened.insert(dots[0]->scope.substr(0, slash));
  opened.insert(dots[0]->scope);
  CHECK(pick.list("expanded") == opened);
  CHECK(pick.number("visible_nodes") > top_nodes);

  // A parameter's pytree name finds the graph input; picking it opens the inputs box.
  CHECK(name_search.number("search_hits") == 1);
  CHECK(name_pick.get("selected") == "input " + std::to_string(wq));
  CHECK(name_pick.get("selected_label") == g.input_names()[wq]);
  CHECK(name_pick.number("selected_drawn") == 1);
  CHECK(name_pick.get("centred") == "1");
  CHECK(name_pick.list("expanded").count("(inputs)") == 1);

  // A click on block03's header collapses it again.
  CHECK(collapse.list("collapsed").count("block03") == 1);
  CHECK(collapse.list("expanded").count("block03") == 0);
}

TEST_CASE("graft-inspect html: a scan body is summarised and a script end tag in a name stays data", "[tools][html]") {
  const Graph rnn = test::rnn_graph();
  int scan_id = -1;
  for (const ir::Node& n : rnn.ir().nodes())
    if (n.op == ir::Op::scan) scan_id = n.id;
  REQUIRE(scan_id >= 0);
  const std::vector<Step> steps =
      browse(rnn, "rnn", {"open", "select:" + std::to_string(scan_id), "pan:40,30", "zoom:-300"});
  CHECK(steps[0].number("visible_boxes") == 0);  // no scopes, 3 inputs and 1 output drawn as they are
  CHECK(steps[0].number("visible_nodes") == rnn.num_nodes());
  CHECK(steps[0].number("visible_io") == 4);
  CHECK(steps[1].get("selected") == "node " + std::to_string(scan_id));
  CHECK(steps[1].get("panel_title") == "scan [1 body]");
  CHECK(steps[1].list("panel_rows").count("body") == 1);
  CHECK(steps[1].list("panel_rows").count("length") == 1);

  // A drag pans by as much (and is no click: the selection stays); the wheel
  // zooms by exp(-deltaY * 0.0015) about the pointer.
  const std::vector<double> before = steps[1].numbers("transform"), panned = steps[2].numbers("transform"),
                            zoomed = steps[3].numbers("transform");
  CHECK(panned[0] == Approx(before[0] + 40));
  CHECK(panned[1] == Approx(before[1] + 30));
  CHECK(panned[2] == Approx(before[2]));
  CHECK(steps[2].get("selected") == "node " + std::to_string(scan_id));
  CHECK(zoomed[2] == Approx(panned[2] * std::exp(0.45)).epsilon(1e-3));

  // The graph's JSON is embedded in a <script> element: a name that would end it must not.
  const std::string name = "</script><!--<script>";
  auto f = [&](const std::map<std::string, Array>& p) { return p.at(name) * 2.0f; };
  const Graph tricky = make_graph(f)(std::map<std::string, Array>{{name, zeros({2})}});
  const std::vector<Step> found = browse(tricky, "tricky", {"search:" + name, "pick:0"});
  CHECK(found[0].number("search_hits") == 1);
  CHECK(found[1].get("selected_label").find(name) != std::string::npos);

  int status = -1;
  const std::string out = test::run(std::string("'") + GRAFT_INSPECT + "' html x.json", &status);
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(out.find("html needs -o FILE") != std::string::npos);
}
#endif  // GRAFT_INSPECT
