// The system-compiler driver and module cache (see compiler.h).
#include "codegen/cpu/compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "codegen/cache_files.h"
#include "codegen/cpu/cpp_text.h"
#include "codegen/cpu/math.h"
#include "graft/errors.h"

extern char** environ;

namespace graft::codegen::cpu {
namespace {

namespace fs = std::filesystem;

using detail::cat;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// The compilers running now. Modules compile on background threads (see
// background_compile.h) that may still be waiting for one when the process
// exits. A compile into the cache lands itself (it moves its module and key
// into place when done, compile_into), so the exit leaves it running: a
// short program's next run finds the module. Other children are killed.
void mark_exiting();  // below, with the exit guard

class Children;
Children& children();

class Children {
 public:
  // `files`: what the child writes, removed if the exit kills it; a child
  // that `lands_itself` is left to finish at exit.
  void add(pid_t pid, std::vector<std::string> files, bool lands_itself) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!registered_) registered_ = std::atexit([] { children().kill_all(); }) == 0;
    running_.push_back({pid, std::move(files), lands_itself});
  }
  void remove(pid_t pid) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < running_.size(); ++i)
      if (running_[i].pid == pid) {
        running_[i] = std::move(running_.back());
        running_.pop_back();
        break;
      }
  }
  void kill_all() {
    mark_exiting();  // first: the compiles killed here must not report a failure
    std::lock_guard<std::mutex> lock(mu_);
    for (const Child& c : running_) {
      if (c.lands_itself) continue;  // finishes after us and moves its module into the cache
      kill(c.pid, SIGKILL);
      waitpid(c.pid, nullptr, 0);
      for (const std::string& f : c.files) unlink(f.c_str());
    }
    running_.clear();
  }

 private:
  struct Child {
    pid_t pid;
    std::vector<std::string> files;
    bool lands_itself = false;
  };
  std::mutex mu_;
  std::vector<Child> running_;
  bool registered_ = false;
};

// Never destroyed (nor is the rest of this file's state): a background
// compile may still use it while the process exits.
Children& children() {
  static Children* c = new Children;
  return *c;
}

// Runs argv (PATH lookup for argv[0]) with stdin from /dev/null; returns its
// exit status (-1 when it could not start or was killed) and its stdout and
// stderr, interleaved, in *output. `temporaries`: files it writes, removed
// when the process exits before it does, unless it `lands_itself`.
int run_process(const std::vector<std::string>& args, std::string* output,
                std::vector<std::string> temporaries = {}, bool lands_itself = false) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc == 0) children().add(pid, std::move(temporaries), lands_itself);
  if (rc != 0) {
    close(fds[0]);
    if (output) *output = cat("cannot run ", args[0], ": ", std::strerror(rc));
    return -1;
  }
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got > 0) out.append(buf, static_cast<size_t>(got));
    else if (got < 0 && errno == EINTR) continue;
    else break;
  }
  close(fds[0]);
  int status = 0;
  int waited;
  while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  children().remove(pid);
  if (waited < 0) return -1;
  if (output) *output = std::move(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

uint64_t fnv1a(const std::string& s, uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// s quoted for /bin/sh.
std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The CPU a "-march=native" module is built for: model and feature flags.
std::string machine_id() {
  std::ifstream in("/proc/cpuinfo");
  std::string model, features;
  for (std::string line; std::getline(in, line);) {
    auto starts = [&](const char* p) { return line.rfind(p, 0) == 0; };
    if (model.empty() && starts("model name")) model = line;
    if (features.empty() && (starts("flags") || starts("Features"))) features = line;
    if (!model.empty() && !features.empty()) break;
  }
  if (model.empty() && features.empty()) return "unknown";
  return cat(model, "; features ", hex(fnv1a(features)));
}

struct Toolchain {
  bool ok = false;
  std::string cxx;
  std::string version;
  std::vector<std::string> flags;
  std::string machine;  // "" when the flags do not depend on it
  std::string problem;  // why !ok
};

const Toolchain& toolchain() {
  static const Toolchain& tc = *new Toolchain([] {
    Toolchain t;
    std::vector<std::string> candidates;
    if (!env("GRAFT_CXX").empty()) candidates.push_back(env("GRAFT_CXX"));
    else candidates = {"c++", "g++"};
    for (const std::string& cxx : candidates) {
      std::string out;
      int rc = run_process({cxx, "--version"}, &out);
      if (rc == 0) {
        t.ok = true;
        t.cxx = cxx;
        t.version = out.substr(0, out.find('\n'));
        break;
      }
      t.problem += cat(t.problem.empty() ? "" : "; ", cxx, " --version failed",
                       rc < 0 ? cat(" (", out, ")") : cat(" (exit status ", std::to_string(rc), ")"));
    }
    std::vector<std::string> opt = {"-O3", "-march=native"};
    if (const char* f = std::getenv("GRAFT_CPU_CXXFLAGS")) opt = split_words(f);
    t.flags = {"-std=c++17"};
    t.flags.insert(t.flags.end(), opt.begin(), opt.end());
    for (const char* f : {"-ffp-contract=off", "-fno-math-errno", "-fopenmp", "-fPIC", "-shared", "-fvisibility=hidden"})
      t.flags.push_back(f);
    for (const std::string& f : t.flags)
      if (f.find("native") != std::string::npos) t.machine = machine_id();
    return t;
  }());
  return tc;
}

// The flags a module's source is compiled with: the toolchain's, and for a
// module computing on complex values (emit.cpp's complex prelude) no
// straight-line vectoriser: GCC 12's turns a complex product into fused
// multiply-adds (vfmaddsub) despite -ffp-contract=off, which would round it
// otherwise than the interpreter.
std::vector<std::string> module_flags(const Toolchain& tc, const std::string& source) {
  std::vector<std::string> flags = tc.flags;
  if (source.find("GRAFT_CG_COMPLEX") != std::string::npos) flags.push_back("-fno-tree-slp-vectorize");
  return flags;
}

// Modules must not be loaded or unloaded once the process exits: a
// background compile finishing then would run the constructors of the
// module's dependencies after their destructors (libgomp asserts). Loads and
// unloads take the lock; the exit sets the flag under it, so a load in
// progress finishes first and later ones give up.
struct ExitGuard {
  std::mutex mu;
  bool exiting = false;
};
ExitGuard& exit_guard() {
  static ExitGuard* g = [] {
    auto* guard = new ExitGuard;  // never destroyed: background threads may use it during the exit
    std::atexit(mark_exiting);
    return guard;
  }();
  return *g;
}

void mark_exiting() {
  std::lock_guard<std::mutex> lock(exit_guard().mu);
  exit_guard().exiting = true;
}

std::atomic<int64_t> g_loaded{0};

// A loaded, initialised module; unloaded when the last reference goes.
struct Module {
  void* handle = nullptr;
  std::string path;
  Module() { ++g_loaded; }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();
};
using ModulePtr = std::shared_ptr<const Module>;

Module::~Module() {
  std::lock_guard<std::mutex> lock(exit_guard().mu);
  if (handle && !exit_guard().exiting) dlclose(handle);  // at exit the process unmaps it anyway
  --g_loaded;
}

// The in-memory cache, by key text: a module being compiled (its future, so
// concurrent requests wait for one compile), then the loaded module, held
// weakly so that it unloads once no executable uses it.
struct ModuleSlot {
  std::shared_future<ModulePtr> pending;
  std::weak_ptr<const Module> loaded;
};
std::mutex& g_mu = *new std::mutex;
std::unordered_map<std::string, ModuleSlot>& g_modules = *new std::unordered_map<std::string, ModuleSlot>;
size_t g_sweep_at = 256;  // the map size at which slots of unloaded modules are next dropped (under g_mu)
// Modules handed out as bare function pointers (compile_kernels): loaded for good.
std::vector<ModulePtr>& g_pinned = *new std::vector<ModulePtr>;
std::atomic<int64_t> g_compiles{0}, g_disk_hits{0}, g_memory_hits{0}, g_failures{0}, g_compile_ns{0}, g_tmp_counter{0};

// dlopen + init; nullptr (with *why) when the file does not load.
ModulePtr load(const fs::path& so, std::string* why) {
  std::lock_guard<std::mutex> lock(exit_guard().mu);
  if (exit_guard().exiting) {
    *why = "the process is exiting";
    return nullptr;
  }
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    *why = e ? e : "dlopen failed";
    return nullptr;
  }
  using Init = int (*)(const void*);
  auto init = reinterpret_cast<Init>(dlsym(h, "graft_cpu_module_init"));
  if (!init || init(&math_table()) != 0) {
    *why = cat(so.string(), ": not a graft CPU module of this version");
    return nullptr;  // stays loaded: dlclose of a module whose init ran is not worth the risk
  }
  auto m = std::make_shared<Module>();
  m->handle = h;
  m->path = so.string();
  return m;
}

// A module could not be written where it was to go (a full disk, a
// directory made read-only meanwhile): the cache degrades, the call goes on.
struct CacheWriteError : Error {
  using Error::Error;
};

// Compiles `source` into dir/<base>.so. Into the cache (keep_on_disk) the
// compile runs as one shell command that also moves the module and its key
// into place, so it lands even when this process exits first (the exit
// leaves it running, Children::kill_all); the names are unique until the
// moves, which are atomic, so a reader never sees half a module.
ModulePtr compile_into(const fs::path& dir, const std::string& base, const std::string& key, const std::string& source,
                       bool keep_on_disk) {
  const Toolchain& tc = toolchain();
  const std::string tmp = cat(base, ".tmp.", std::to_string(getpid()), ".", std::to_string(g_tmp_counter++));
  const fs::path cpp = dir / (tmp + ".cpp"), so_tmp = dir / (tmp + ".so"), so = dir / (base + ".so");
  const fs::path key_tmp = dir / (tmp + ".key"), key_file = dir / (base + ".key");
  if (!write_file(cpp, source)) throw CacheWriteError(cat("cpu codegen: cannot write ", cpp.string()));
  std::vector<std::string> args = {tc.cxx};
  const std::vector<std::string> flags = module_flags(tc, source);
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"-o", so_tmp.string(), cpp.string()});
  std::vector<std::string> run_args = args;
  if (keep_on_disk) {
    if (!write_file(key_tmp, key)) {
      std::error_code ec;
      fs::remove(cpp, ec);
      throw CacheWriteError(cat("cpu codegen: cannot write ", key_tmp.string()));
    }
    std::string script;
    for (const std::string& a : args) script += cat(script.empty() ? "" : " ", shell_quote(a));
    script += cat(" && mv -f ", shell_quote(so_tmp.string()), " ", shell_quote(so.string()), " && mv -f ",
                  shell_quote(key_tmp.string()), " ", shell_quote(key_file.string()), " && rm -f ",
                  shell_quote(cpp.string()));
    run_args = {"/bin/sh", "-c", script};
  }
  auto t0 = std::chrono::steady_clock::now();
  std::string out;
  int rc = run_process(run_args, &out, {cpp.string(), so_tmp.string(), key_tmp.string()}, keep_on_disk);
  g_compile_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  std::error_code ec;
  if (rc != 0 && out.find("No space left on device") != std::string::npos) {
    fs::remove(so_tmp, ec);
    fs::remove(cpp, ec);
    fs::remove(key_tmp, ec);
    throw CacheWriteError(cat("cpu codegen: no space left on the device of ", dir.string()));
  }
  if (rc != 0 && keep_on_disk && fs::exists(so_tmp, ec)) {  // compiled, but the moves failed
    fs::remove(so_tmp, ec);
    fs::remove(cpp, ec);
    fs::remove(key_tmp, ec);
    throw CacheWriteError(cat("cpu codegen: cannot move the module to ", so.string(), ": ", out));
  }
  if (rc != 0) {
    ++g_failures;
    fs::remove(so_tmp, ec);
    fs::remove(key_tmp, ec);
    const fs::path kept = dir / (base + ".failed.cpp");
    fs::rename(cpp, kept, ec);
    std::string cmd;
    for (const std::string& a : args) cmd += cat(cmd.empty() ? "" : " ", a);
    throw Error(cat("cpu codegen: the compiler failed (exit status ", std::to_string(rc), ") on ",
                    ec ? cpp.string() : kept.string(), "\n$ ", cmd, "\n", out));
  }
  ++g_compiles;
  // A module outside the cache keeps its unique name: dlopen returns the
  // module already loaded from a path, whatever the file now holds.
  fs::path loaded = so;
  if (!keep_on_disk) {
    fs::remove(cpp, ec);
    loaded = so_tmp;
  }
  std::string why;
  ModulePtr m = load(loaded, &why);
  if (!m) throw Error(cat("cpu codegen: cannot load the compiled module: ", why));
  return m;
}

// A process-private directory for modules when the cache directory is unusable.
const fs::path& scratch_dir() {
  static const fs::path& dir = *new fs::path([] {
    std::string templ = (fs::temp_directory_path() / "graft-cpu-XXXXXX").string();
    if (!mkdtemp(templ.data())) throw Error("cpu codegen: cannot create a temporary directory");
    return fs::path(templ);
  }());
  return dir;
}

// Once per process: the cache directory cannot be used, so modules live in a
// private directory for this process only (degraded, not failed).
void warn_cache_unusable(const fs::path& dir, const std::string& why) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::fprintf(stderr,
                 "graft: warning: the kernel cache %s is unusable (%s); compiled kernels are kept for this process "
                 "only. Set GRAFT_CACHE_DIR to a writable directory to cache them. (warned once)\n",
                 dir.c_str(), why.c_str());
  });
}

// In the process's own directory, after the cache directory failed.
ModulePtr compile_uncached(const fs::path& dir, const std::string& h, const std::string& key, const std::string& source,
                           const std::string& why) {
  warn_cache_unusable(dir, why);
  return compile_into(scratch_dir(), h, key, source, false);
}

// Where the module of `key` is, or goes, in the cache directory: the files
// <hash>, <hash>-1, ... are probed (a .key holding another key is a hash
// collision). `present`: its .so and matching .key are there; else `base` is
// the first free name, or "" when 8 collide.
struct CacheSlot {
  std::string base;
  bool present = false;
};
CacheSlot cache_slot(const fs::path& dir, const std::string& key) {
  const std::string h = hex(fnv1a(key));
  std::error_code ec;
  for (int probe = 0; probe < 8; ++probe) {
    const std::string base = probe ? cat(h, "-", std::to_string(probe)) : h;
    if (!fs::exists(dir / (base + ".key"), ec) || !fs::exists(dir / (base + ".so"), ec)) return {base, false};
    if (read_file(dir / (base + ".key")) == key) return {base, true};
  }
  return {};
}

ModulePtr find_or_compile(const std::string& key, const std::string& source) {
  const fs::path dir = cpu_cache_dir();
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string h = hex(fnv1a(key));
  if (ec) return compile_uncached(dir, h, key, source, ec.message());
  if (access(dir.c_str(), W_OK) != 0) return compile_uncached(dir, h, key, source, std::strerror(errno));
  auto cached = [&](const std::string& base) {
    try {
      return compile_into(dir, base, key, source, true);
    } catch (const CacheWriteError& e) {
      return compile_uncached(dir, h, key, source, e.what());
    }
  };
  const CacheSlot slot = cache_slot(dir, key);
  if (slot.base.empty()) return compile_into(scratch_dir(), h, key, source, false);
  if (!slot.present) return cached(slot.base);
  std::string why;
  if (ModulePtr m = load(dir / (slot.base + ".so"), &why)) {
    ++g_disk_hits;
    return m;
  }
  return cached(slot.base);  // a damaged file: build it again
}

// What a module is cached under: the compiler, its flags, the machine, the source.
std::string module_key(const Toolchain& tc, const std::string& source) {
  std::string key = cat("graft cpu module v1\ncompiler: ", tc.cxx, " | ", tc.version, "\nflags:");
  for (const std::string& f : module_flags(tc, source)) key += cat(" ", f);
  return key + cat("\nmachine: ", tc.machine, "\n----\n", source);
}

// Whether the module of `key` is loaded, or in the cache directory (as
// find_or_compile probes it): getting it compiles nothing.
bool module_ready(const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_modules.find(key);
    if (it != g_modules.end() && !it->second.loaded.expired()) return true;
  }
  return cache_slot(cpu_cache_dir(), key).present;
}

ModulePtr get_module(const std::string& source) {
  const Toolchain& tc = toolchain();
  if (!tc.ok) throw Error(cat("cpu codegen: no usable C++ compiler: ", tc.problem));
  const std::string key = module_key(tc, source);

  std::promise<ModulePtr> promise;
  std::shared_future<ModulePtr> fut;
  bool mine = false;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    ModuleSlot& slot = g_modules[key];
    if (ModulePtr m = slot.loaded.lock()) {
      ++g_memory_hits;
      return m;
    }
    if (slot.pending.valid()) {
      fut = slot.pending;
    } else {
      fut = slot.pending = promise.get_future().share();
      mine = true;
    }
  }
  if (!mine) {
    ++g_memory_hits;
    return fut.get();  // rethrows the producer's error
  }
  try {
    ModulePtr m = find_or_compile(key, source);
    promise.set_value(m);
    std::lock_guard<std::mutex> lock(g_mu);
    ModuleSlot& slot = g_modules[key];
    slot.loaded = m;
    slot.pending = {};  // the future held the module strongly
    if (g_modules.size() >= g_sweep_at) {  // drop the slots of modules unloaded since: amortised O(1)
      for (auto it = g_modules.begin(); it != g_modules.end();)
        it = it->second.loaded.expired() && !it->second.pending.valid() ? g_modules.erase(it) : std::next(it);
      g_sweep_at = std::max<size_t>(256, 2 * g_modules.size());
    }
    return m;
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(g_mu);
      g_modules.erase(key);  // a later request tries again
    }
    promise.set_exception(std::current_exception());
    throw;
  }
}

}  // namespace

bool cpu_compiler_available() { return toolchain().ok; }

bool module_cached(const std::string& source) {
  const Toolchain& tc = toolchain();
  return tc.ok && module_ready(module_key(tc, source));
}

// The index of a graph: <cache>/<graph hash>.graph lists the cache names of
// its modules, one a line, written before they compile.
namespace {
fs::path graph_index_path(uint64_t graph_hash) { return fs::path(cpu_cache_dir()) / (hex(graph_hash) + ".graph"); }
}  // namespace

void record_graph_modules(uint64_t graph_hash, const std::vector<std::string>& sources) {
  const Toolchain& tc = toolchain();
  if (!tc.ok) return;
  std::string text;
  for (const std::string& s : sources) text += hex(fnv1a(module_key(tc, s))) + "\n";
  std::error_code ec;
  fs::create_directories(cpu_cache_dir(), ec);
  if (!ec) write_file_atomically(graph_index_path(graph_hash), text);  // a cache it cannot write: no index, no harm
}

bool graph_modules_on_disk(uint64_t graph_hash) {
  const std::string text = read_file(graph_index_path(graph_hash));
  if (text.empty()) return false;
  const fs::path dir = cpu_cache_dir();
  std::error_code ec;
  size_t at = 0;
  for (size_t nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
    const std::string name = text.substr(at, nl - at);
    if (!fs::exists(dir / (name + ".so"), ec) || !fs::exists(dir / (name + ".key"), ec)) return false;
  }
  return at == text.size();
}

std::string cpu_compiler_description() {
  const Toolchain& tc = toolchain();
  return tc.ok ? cat(tc.cxx, ": ", tc.version) : cat("no usable C++ compiler: ", tc.problem);
}

std::vector<std::string> cpu_compile_flags() { return toolchain().flags; }

std::string cpu_cache_dir() {
  fs::path root;
  if (!env("GRAFT_CACHE_DIR").empty()) root = env("GRAFT_CACHE_DIR");
  else if (!env("XDG_CACHE_HOME").empty()) root = fs::path(env("XDG_CACHE_HOME")) / "graft";
  else if (!env("HOME").empty()) root = fs::path(env("HOME")) / ".cache" / "graft";
  else root = fs::temp_directory_path() / "graft-cache";
  return (root / "cpu").string();
}

LoadedKernels load_kernels(const std::string& source, const std::vector<std::string>& symbols) {
  ModulePtr m = get_module(source);
  LoadedKernels out;
  for (const std::string& s : symbols) {
    void* p = dlsym(m->handle, s.c_str());
    if (!p) throw Error(cat("cpu codegen: ", m->path, " has no symbol ", s));
    out.fns.push_back(reinterpret_cast<KernelFn>(p));
  }
  out.module = std::move(m);
  return out;
}

std::vector<KernelFn> compile_kernels(const std::string& source, const std::vector<std::string>& symbols) {
  LoadedKernels k = load_kernels(source, symbols);
  std::lock_guard<std::mutex> lock(g_mu);
  g_pinned.push_back(std::static_pointer_cast<const Module>(k.module));
  return k.fns;
}

int64_t loaded_module_count() { return g_loaded.load(); }

bool process_exiting() {
  std::lock_guard<std::mutex> lock(exit_guard().mu);
  return exit_guard().exiting;
}

KernelFn compile_kernel(const std::string& source, const std::string& symbol) {
  return compile_kernels(source, {symbol})[0];
}

CompileStats compile_stats() {
  CompileStats s;
  s.compiles = g_compiles;
  s.disk_hits = g_disk_hits;
  s.memory_hits = g_memory_hits;
  s.failures = g_failures;
  s.compile_seconds = static_cast<double>(g_compile_ns.load()) * 1e-9;
  return s;
}

namespace testing {
void forget_loaded_modules() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_modules.clear();
}
}  // namespace testing

}  // namespace graft::codegen::cpu
