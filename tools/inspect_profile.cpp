// graft-inspect profile TRACE.json: where a traced program's time went, from
// the trace profiler::stop_trace writes (any Chrome trace event file with
// complete "X" events). Kernel spans are summed by kind (the op family) and
// by name; annotations (TraceAnnotation) and control-flow spans enclose
// kernels, so they are listed apart and not added to the kernels' time.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "graft/errors.h"
#include "inspect.h"

namespace graft::inspect {
namespace {

struct Total {
  double us = 0, flops = 0, bytes = 0;
  int64_t count = 0;
};

std::string ms(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", us / 1000.0);
  return buf;
}

std::string share(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

// Per microsecond times 1e-3: giga per second.
std::string giga_per_second(double amount, double us) {
  if (us <= 0 || amount <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", amount / (us * 1e3));
  return buf;
}

}  // namespace

int print_profile(const std::string& path, std::ostream& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) throw Error(path + ": not JSON (a trace from profiler::stop_trace?)");
  const nlohmann::json* events = doc.is_array() ? &doc : nullptr;
  if (doc.is_object() && doc.contains("traceEvents") && doc["traceEvents"].is_array()) events = &doc["traceEvents"];
  if (events == nullptr) throw Error(path + ": no traceEvents array");

  std::map<std::string, Total> by_kind, by_name, enclosing;
  double kernels_us = 0, first = 1e300, last = -1e300;
  for (const nlohmann::json& e : *events) {
    if (!e.is_object() || e.value("ph", "") != "X" || !e.contains("dur") || !e["dur"].is_number()) continue;
    const std::string kind = e.value("cat", "?"), name = e.value("name", "?");
    const double dur = e["dur"].get<double>(), ts = e.value("ts", 0.0);
    first = std::min(first, ts);
    last = std::max(last, ts + dur);
    if (kind == "annotation" || kind == "control") {
      Total& t = enclosing[kind + ": " + name];
      t.us += dur;
      ++t.count;
      continue;
    }
    double flops = 0, bytes = 0;
    std::string shapes;
    if (e.contains("args") && e["args"].is_object()) {
      const nlohmann::json& a = e["args"];
      if (a.contains("flops") && a["flops"].is_number()) flops = a["flops"].get<double>();
      if (a.contains("bytes") && a["bytes"].is_number()) bytes = a["bytes"].get<double>();
      if (a.contains("shapes") && a["shapes"].is_string()) shapes = a["shapes"].get<std::string>();
    }
    // Kernels by name and shapes: each GEMM of the step on its own row.
    for (Total* t : {&by_kind[kind], &by_name[shapes.empty() ? name : name + " " + shapes]}) {
      t->us += dur;
      t->flops += flops;
      t->bytes += bytes;
      ++t->count;
    }
    kernels_us += dur;
  }
  if (by_kind.empty() && enclosing.empty()) throw Error(path + ": no complete (\"X\") spans in the trace");

  auto sorted = [](const std::map<std::string, Total>& m) {
    std::vector<std::pair<std::string, Total>> v(m.begin(), m.end());
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.us > b.second.us; });
    return v;
  };
  out << "trace: " << path << "\n";
  out << "kernels: " << ms(kernels_us) << " ms in " << by_name.size()
      << " distinct kernels (op and shapes); the trace spans " << ms(last > first ? last - first : 0) << " ms\n\n";
  out << "| kind | ms | share | kernels | GFLOP/s | GB/s |\n|---|---|---|---|---|---|\n";
  for (const auto& [kind, t] : sorted(by_kind))
    out << "| " << kind << " | " << ms(t.us) << " | " << share(t.us, kernels_us) << " | " << t.count << " | "
        << giga_per_second(t.flops, t.us) << " | " << giga_per_second(t.bytes, t.us) << " |\n";
  out << "\nmost time (of " << by_name.size() << "):\n\n| kernel | ms | share | calls |\n|---|---|---|---|\n";
  int shown = 0;
  for (const auto& [name, t] : sorted(by_name)) {
    if (shown++ == 15) break;
    out << "| " << name << " | " << ms(t.us) << " | " << share(t.us, kernels_us) << " | " << t.count << " |\n";
  }
  if (!enclosing.empty()) {
    out << "\nenclosing spans (annotations, control flow; their kernels are counted above):\n\n"
        << "| span | ms | calls |\n|---|---|---|\n";
    for (const auto& [name, t] : sorted(enclosing))
      out << "| " << name << " | " << ms(t.us) << " | " << t.count << " |\n";
  }
  return 0;
}

}  // namespace graft::inspect
