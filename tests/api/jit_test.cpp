// jit: one trace per signature, results equal to eager, donation, AOT,
// nesting, disable_jit and concurrent calls.
#include <catch2/catch.hpp>
#include <thread>

#include "graft/graft.h"
#include "support/shell.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {

std::vector<double> values(const Array& a) { return astype(a, f64).to_vector<double>(); }

}  // namespace

TEST_CASE("jit: traces once per signature and equals eager", "[jit]") {
  int traces = 0;
  auto f = [&traces](const Array& x, const Array& y, double scale) {
    ++traces;
    return graft::tanh(x * y) * scale + sum(x);
  };
  auto jf = jit(f);
  Array x = astype(arange(6), f32) * 0.1f, y = full({6}, 2.0f);
  for (int i = 0; i < 5; ++i) {
    std::vector<double> want = values(f(x + static_cast<float>(i), y, 1.5));  // eager: counts as a call
    CHECK(values(jf(x + static_cast<float>(i), y, 1.5)) == want);
  }
  CHECK(traces == 5 + 1);  // five eager calls, one trace
  CHECK(jf.cache_size() == 1);
  jf(astype(arange(7), f32), full({7}, 1.0f), 1.5);  // a new shape: one more trace
  CHECK(traces == 5 + 2);
  CHECK(jf.cache_size() == 2);
  jf(x, y, 2.5);  // a new static value: a new trace
  CHECK(jf.cache_size() == 3);
  jf(x, y, 2.5);
  CHECK(jf.cache_size() == 3);
  CHECK_THROWS_AS(jit(f, {.backend = Backend::cuda})(x, y, 1.0), UnsupportedError);
}

TEST_CASE("jit: donated state keeps its buffers across steps", "[jit][donation]") {
  auto step = jit([](const std::pair<Array, Array>& s) { return std::make_pair(s.first + 1.0f, s.second * 2); },
                  {.donate_argnums = {0}});
  std::pair<Array, Array> state{zeros({4}), arange(4)};
  const void* p0 = state.first.unsafe_buffer_pointer();
  const void* p1 = state.second.unsafe_buffer_pointer();
  std::pair<Array, Array> old = state;
  for (int i = 0; i < 100; ++i) {
    state = step(state);
    CHECK(state.first.unsafe_buffer_pointer() == p0);
    CHECK(state.second.unsafe_buffer_pointer() == p1);
  }
  CHECK(values(state.first) == std::vector<double>(4, 100.0));
  CHECK(state.second.to_vector<int>()[3] == 0);  // 3 * 2^100 wraps to 0 in i32
  CHECK(old.first.is_deleted());
  CHECK_THROWS_AS(old.first + 1.0f, DonatedArrayError);
  CHECK_THROWS_AS(old.second.to_vector<int>(), DonatedArrayError);
  // Donating one buffer twice in a call is an error.
  auto add = jit([](const Array& a, const Array& b) { return a + b; }, {.donate_argnums = {0}});
  Array z = zeros({4});
  CHECK_THROWS_WITH(add(z, z), Contains("donate a buffer once"));
  // A donation no output can use: an error when it must apply.
  auto shrink = jit([](const Array& a) { return sum(a); }, {.donate_argnums = {0}, .donation_must_apply = true});
  CHECK_THROWS_WITH(shrink(zeros({4})), Contains("backs no output"));
}

TEST_CASE("jit: lower and compile ahead of time", "[jit][aot]") {
  auto f = [](const Array& x, const Array& w) { return matmul(x, w) * 1.0f + 0.0f; };
  Array x = ones({8, 16}), w = ones({16, 4});
  auto lowered = jit(f).lower(x, w);
  CHECK_THAT(lowered.as_text(), Contains("dot_general"));
  auto compiled = lowered.compile();
  CHECK_THAT(compiled.as_text(), Contains("backend: cpu"));  // automatic, with a compiler present
  CHECK(compiled.as_text().find(" mul ") == std::string::npos);  // x * 1 simplified away
  CHECK(compiled.cost_analysis().flops == 2.0 * 8 * 4 * 16);
  MemoryAnalysis m = compiled.memory_analysis();
  CHECK(m.argument_bytes == (8 * 16 + 16 * 4) * 4);
  CHECK(m.output_bytes == 8 * 4 * 4);
  CHECK(values(compiled(x, w)) == std::vector<double>(32, 16.0));
}

TEST_CASE("jit: inlined in traces, disabled on request, safe from many threads", "[jit]") {
  auto inner = jit([](const Array& a) { return graft::sin(a) * 2.0f; });
  Graph g = make_graph([&](const Array& a) { return inner(a) + 1.0f; })(ones({3}));
  CHECK_THAT(g.to_text(), Contains("sin"));  // inlined, not an opaque call
  CHECK(inner.cache_size() == 0);
  {
    disable_jit off;
    inner(ones({3}));
    CHECK(inner.cache_size() == 0);
  }
  Array x = astype(arange(1000), f32) * 0.001f;
  std::vector<double> want = values(graft::sin(x) * 2.0f);
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) ok[t] += values(inner(x)) == want;
    });
  for (auto& th : threads) th.join();
  CHECK(ok == std::vector<int>(4, 20));
  CHECK(inner.cache_size() == 1);
  // grad of a jitted function traces through it.
  CHECK(grad([&](const Array& a) { return sum(inner(a)); })(scalar(0.5f)).item<double>() == Approx(2 * std::cos(0.5)));
}

TEST_CASE("jit: the compile log names the argument that changed", "[jit]") {
  Array a = ones({3}), b = ones({4});
  std::vector<std::string> first = detail::argument_structures(a, 2.0);
  std::vector<std::string> shape = detail::argument_structures(b, 2.0);
  std::vector<std::string> scalar_value = detail::argument_structures(a, 3.0);
  CHECK(detail::cache_miss_reason({}, first) == "first call");
  CHECK(detail::cache_miss_reason(first, shape) == "argument 0 changed from f32[3] to f32[4]");
  CHECK(detail::cache_miss_reason(first, scalar_value) == "argument 1 changed from 2 to 3");
  CHECK(detail::cache_miss_reason(first, detail::argument_structures(astype(a, f64), 2.0)) ==
        "argument 0 changed from f32[3] to f64[3]");
}

TEST_CASE("jit: constants fold at compile time", "[jit]") {
  auto f = [](const Array& x) {
    Array c = graft::exp(scalar(1.0f)) * 2.0f + graft::sqrt(scalar(4.0f));  // all constant
    return x * c;
  };
  Array x = full({5}, 1.5f);
  auto compiled = jit(f).lower(x).compile();
  const std::string all = compiled.as_text();
  const std::string text = all.substr(0, all.find("generated C++"));  // the graph, not the module's prelude
  CHECK(text.find(" exp ") == std::string::npos);
  CHECK(text.find(" sqrt ") == std::string::npos);
  CHECK(text.find("constant") != std::string::npos);
  CHECK(values(compiled(x)) == values(f(x)));
}

TEST_CASE("jit: a donated argument backs the output of a fused kernel that reads it", "[jit][donation]") {
  // v * 0.5 + 1 fuses into one kernel reading v elementwise: it may write over v.
  for (Backend backend : {Backend::interpreter, Backend::cpu}) {
    auto step = jit([](const Array& v) { return v * 0.5f + 1.0f; },
                    {.donate_argnums = {0}, .backend = backend, .donation_must_apply = true, .wait_for_compile = true});
    Array x = full({256}, 2.0f);
    const void* p = x.unsafe_buffer_pointer();
    Array y = step(x);
    CHECK(y.unsafe_buffer_pointer() == p);
    CHECK(y.to_vector<float>() == std::vector<float>(256, 2.0f));
    CHECK(x.is_deleted());
  }
}

TEST_CASE("jit (child): retracing for a changing static number warns once, naming the argument", "[.child_static_retrace]") {
  auto f = jit([](const Array& x, double scale) { return x * scale; });
  Array x = ones({3});
  for (int i = 0; i < 8; ++i) CHECK(f(x, 1.0 + i).to_vector<float>()[0] == static_cast<float>(1.0 + i));
  CHECK(f.cache_size() == 8);
}

TEST_CASE("jit: retracing for a changing static number warns once, naming the argument", "[jit]") {
  int status = 0;
  const std::string out = graft::test::run_self("", "[.child_static_retrace]", &status);
  INFO(out);
  CHECK(status == 0);
  CHECK_THAT(out, Contains("graft: warning: jit of the function at"));
  CHECK_THAT(out, Contains("jit_test.cpp"));
  CHECK_THAT(out, Contains("static argument 1 changed (last: 6 -> 7)"));
  CHECK_THAT(out, Contains("Pass it as an Array"));
  size_t warnings = 0;
  for (size_t at = out.find("graft: warning: jit"); at != std::string::npos; at = out.find("graft: warning: jit", at + 1))
    ++warnings;
  CHECK(warnings == 1);
}
