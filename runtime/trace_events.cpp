#include "runtime/trace_events.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "graft/errors.h"

namespace graft::runtime {

namespace detail {
std::atomic<bool> tracing_on{false};
}

namespace {

struct Span {
  std::string name;
  const char* kind;
  double start_us, dur_us;
  int64_t tid;
  std::string args;
};

struct Recorder {
  std::mutex mutex;
  std::string dir;
  std::vector<Span> spans;
};

Recorder& recorder() {
  static Recorder* r = new Recorder;  // never destroyed: spans may end during exit
  return *r;
}

int64_t thread_id() {
  thread_local const int64_t tid = static_cast<int64_t>(syscall(SYS_gettid));
  return tid;
}

const std::chrono::steady_clock::time_point kEpoch = std::chrono::steady_clock::now();

}  // namespace

double trace_now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - kEpoch).count();
}

std::string json_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

void start_tracing(const std::string& dir) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (tracing()) throw Error("profiler: start_trace: a trace is already being recorded (into " + r.dir + ")");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw Error("profiler: start_trace: cannot make the directory " + dir + (ec ? ": " + ec.message() : ""));
  r.dir = dir;
  r.spans.clear();
  detail::tracing_on.store(true);
}

std::string stop_tracing() {
  Recorder& r = recorder();
  std::vector<Span> spans;
  std::string dir;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!tracing()) throw Error("profiler: stop_trace: no trace is being recorded (start_trace starts one)");
    detail::tracing_on.store(false);
    spans.swap(r.spans);
    dir = r.dir;
  }
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  const std::string path =
      (std::filesystem::path(dir) / ("graft-" + std::string(stamp) + "-" + std::to_string(getpid()) + ".trace.json"))
          .string();
  std::ofstream out(path);
  if (!out) throw Error("profiler: stop_trace: cannot write " + path);
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  out << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " << getpid() << ", \"args\": {\"name\": \"graft\"}}";
  char num[64];
  for (const Span& s : spans) {
    out << ",\n{\"name\": \"" << json_escape(s.name) << "\", \"cat\": \"" << s.kind
        << "\", \"ph\": \"X\", \"pid\": " << getpid() << ", \"tid\": " << s.tid;
    std::snprintf(num, sizeof num, ", \"ts\": %.3f, \"dur\": %.3f", s.start_us, s.dur_us);
    out << num << ", \"args\": {" << s.args << "}}";
  }
  out << "\n]}\n";
  out.close();
  if (!out) throw Error("profiler: stop_trace: cannot write " + path);
  return path;
}

void record_span(const std::string& name, const char* kind, double start_us, double end_us, const std::string& args) {
  Recorder& r = recorder();
  const int64_t tid = thread_id();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!tracing()) return;  // stopped while the span ran
  r.spans.push_back(Span{name, kind, start_us, end_us - start_us, tid, args});
}

}  // namespace graft::runtime
