// Host callbacks: pure_callback, io_callback, debug::print and
// debug::callback, eager and under jit, vmap (each VmapMethod), scan,
// while_loop, grad (refused, and through custom_vjp), pmap and the emulated
// CUDA backend. Values are checked against the same C++ function called on
// its own; "no copy" is checked by buffer addresses; "runs once per call, in
// order" by counters and logs.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "graft/testing.h"
#include "support/arrays.h"

using namespace graft;
using test::check_close;

namespace {

// A plain C++ function graft cannot see into: y = x^3 - x, elementwise.
std::vector<float> cubic(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * x[i] * x[i] - x[i];
  return y;
}

Array host_cubic(const Array& x) { return array(cubic(x.to_vector<float>()), x.shape()); }

Array data(Shape shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return reshape(sin(arange(n, f32) * 0.7f) * 1.5f, shape);
}

// Captures std::cout while alive.
class CaptureCout {
 public:
  CaptureCout() : old_(std::cout.rdbuf(out_.rdbuf())) {}
  ~CaptureCout() { std::cout.rdbuf(old_); }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::streambuf* old_;
};

}  // namespace

TEST_CASE("callback: pure_callback eager and under jit equals the C++ function, arguments are not copied",
          "[callback]") {
  Array x = data({2, 3});
  const void* seen = nullptr;
  int calls = 0;
  auto f = [&](const Array& a) {
    return pure_callback(
        [&](const Array& v) {
          ++calls;
          seen = v.unsafe_buffer_pointer();
          return host_cubic(v);
        },
        ShapeDtype{{2, 3}, f32}, a);
  };
  Array want = host_cubic(x);
  check_close(f(x), want, 0);
  CHECK(seen == x.unsafe_buffer_pointer());  // eager: the callback saw x's own buffer
  CHECK(calls == 1);

  auto jf = jit(f);
  check_close(jf(x), want, 0);
  CHECK(seen == x.unsafe_buffer_pointer());  // jit: the input buffer itself, no copy in
  check_close(jf(x * 2.0f), host_cubic(x * 2.0f), 0);
  CHECK(calls == 3);
  CHECK(jf.cache_size() == 1);
}

TEST_CASE("callback: a callback that writes into graft's output buffers makes no copy out", "[callback]") {
  Array x = data({5});
  void* written = nullptr;
  auto write_cubic = [&](const Array& v, Array& out) {
    float* o = writable_data<float>(out);
    written = o;
    std::vector<float> y = cubic(v.to_vector<float>());
    for (size_t i = 0; i < y.size(); ++i) o[i] = y[i];
  };
  Array eager = pure_callback(write_cubic, ShapeDtype{{5}, f32}, x);
  CHECK(written == eager.unsafe_buffer_pointer());
  check_close(eager, host_cubic(x), 0);

  auto jf = jit([&](const Array& a) { return pure_callback(write_cubic, ShapeDtype{{5}, f32}, a); });
  Array y = jf(x);
  check_close(y, host_cubic(x), 0);
  CHECK(written == y.unsafe_buffer_pointer());  // the executable's output buffer, returned as it is

  // Writing a view that is not a callback's output is refused.
  Array other = data({5});
  CHECK_THROWS_WITH(writable_data<float>(other), Catch::Contains("not a callback's output"));
  // A wrong C++ type is a DTypeError.
  CHECK_THROWS_AS(pure_callback([](const Array&, Array& out) { writable_data<double>(out); }, ShapeDtype{{5}, f32}, x),
                  DTypeError);
}

TEST_CASE("callback: results are trees, wrong results and throwing functions are clear errors", "[callback]") {
  Array x = data({3});
  auto [a, b] = pure_callback(
      [](const Array& v) { return std::make_pair(host_cubic(v), v.to_vector<float>().size() * ones({}, i32)); },
      std::make_pair(ShapeDtype{{3}, f32}, ShapeDtype{{}, i32}), x);
  check_close(a, host_cubic(x), 0);
  CHECK(b.item<int>() == 3);
  std::vector<Array> many = pure_callback(
      [](const Array& v) {
        return std::vector<Array>{v, v * 2.0f};
      },
      std::vector<ShapeDtype>{{{3}, f32}, {{3}, f32}}, x);
  REQUIRE(many.size() == 2);
  check_close(many[1], x * 2.0f, 0);

  CHECK_THROWS_AS(pure_callback([](const Array& v) { return v; }, ShapeDtype{{4}, f32}, x), ShapeError);
  CHECK_THROWS_AS(pure_callback([](const Array& v) { return v; }, ShapeDtype{{3}, f64}, x), DTypeError);
  auto jf = jit([](const Array& v) {
    return pure_callback([](const Array&) -> Array { throw std::runtime_error("the solver diverged"); },
                         ShapeDtype{{3}, f32}, v);  // this line is named in the error
  });
  try {
    jf(x);
    FAIL("no exception");
  } catch (const Error& e) {
    std::string m = e.what();
    CHECK_THAT(m, Catch::Contains("the solver diverged"));
    CHECK_THAT(m, Catch::Contains("pure_callback at"));
    CHECK_THAT(m, Catch::Contains("callback_test.cpp:"));
  }
}

TEST_CASE("callback: an Array the callback keeps stays valid after graft reuses the buffer", "[callback]") {
  Array kept;
  auto jf = jit([&](const Array& a) {
    Array t = a * 3.0f;  // an intermediate: its buffer is reused after the callback
    Array r = pure_callback(
        [&](const Array& v) {
          kept = v;
          return v + 1.0f;
        },
        ShapeDtype{{4}, f32}, t);
    return r * 2.0f + a;
  });
  Array x = data({4});
  Array y = jf(x);
  check_close(y, (x * 3.0f + 1.0f) * 2.0f + x, 1e-6);
  check_close(kept, x * 3.0f, 1e-6);
  jf(x * 5.0f);                        // the arena is reused
  check_close(kept, x * 15.0f, 1e-6);  // kept from the second call: a copy, not a dangling view
}

TEST_CASE("callback: jit drops and merges pure callbacks, never io callbacks, ordered ones keep order", "[callback]") {
  Array x = data({3});
  int pure_calls = 0, io_calls = 0;
  auto pure = [&](const Array& v) {
    return pure_callback(
        [&](const Array& a) {
          ++pure_calls;
          return a;
        },
        ShapeDtype{{3}, f32}, v);
  };
  auto io = [&](const Array& v) {
    return io_callback(
        [&](const Array& a) {
          ++io_calls;
          return a;
        },
        ShapeDtype{{3}, f32}, v);
  };
  auto jf = jit([&](const Array& v) {
    pure(v);                      // unused: dropped
    io(v);                        // unused: still runs
    Array p = pure(v) + pure(v);  // two traced calls of one function: two nodes (each call is its own callback)
    Array q = io(v) + io(v);      // never merged
    return p + q;
  });
  check_close(jf(x), x * 4.0f, 1e-6);
  CHECK(pure_calls == 2);
  CHECK(io_calls == 3);

  std::vector<int> log;
  auto jo = jit([&](const Array& v) {
    for (int k = 0; k < 6; ++k)
      io_callback([&log, k](const Array&) { log.push_back(k); }, std::tuple<>{}, ordered, v * static_cast<float>(k));
    return v;
  });
  jo(x);
  CHECK(log == std::vector<int>{0, 1, 2, 3, 4, 5});
  std::string text = jit([&](const Array& v) {
                       io_callback([](const Array&) {}, std::tuple<>{}, ordered, v);
                       return v;
                     })
                         .lower(x)
                         .compile()
                         .as_text();
  CHECK_THAT(text, Catch::Contains("io_callback"));
}

TEST_CASE("callback: vmap runs pure_callback per its VmapMethod and io_callback per example", "[callback]") {
  Array xs = data({4, 3});
  Array w = data({3}) + 2.0f;
  std::vector<Shape> shapes;
  auto f = [&](VmapMethod method) {
    return [&, method](const Array& x, const Array& v) {
      return pure_callback(
          [&](const Array& a, const Array& b) {
            shapes.push_back(a.shape());
            shapes.push_back(b.shape());
            return host_cubic(a) * b;
          },
          ShapeDtype{{3}, f32}, method, x, v);
    };
  };
  Array want = stack({host_cubic(xs[0]) * w, host_cubic(xs[1]) * w, host_cubic(xs[2]) * w, host_cubic(xs[3]) * w});

  shapes.clear();
  check_close(vmap(f(VmapMethod::sequential), Axes{0, none})(xs, w), want, 1e-6);
  CHECK(shapes.size() == 8);  // four calls on one example each
  CHECK(shapes[0] == Shape{3});

  shapes.clear();
  check_close(vmap(f(VmapMethod::expand_dims), Axes{0, none})(xs, w), want, 1e-6);
  REQUIRE(shapes.size() == 2);  // one call on the batch
  CHECK(shapes[0] == Shape{4, 3});
  CHECK(shapes[1] == Shape{1, 3});

  shapes.clear();
  check_close(jit(vmap(f(VmapMethod::broadcast_all), Axes{0, none}))(xs, w), want, 1e-6);
  REQUIRE(shapes.size() == 2);
  CHECK(shapes[1] == Shape{4, 3});

  std::vector<float> firsts;
  vmap([&](const Array& x) {
    io_callback([&](const Array& a) { firsts.push_back(a.to_vector<float>()[0]); }, std::tuple<>{}, ordered, x);
    return x;
  })(xs);
  CHECK(firsts == std::vector<float>{xs[0][0].item<float>(), xs[1][0].item<float>(), xs[2][0].item<float>(),
                                     xs[3][0].item<float>()});
}

TEST_CASE("callback: inside scan and while_loop, eager and jitted, once per step", "[callback]") {
  int calls = 0;
  auto step = [&](const Array& c, const Array& x) {
    Array y = pure_callback(
        [&](const Array& a) {
          ++calls;
          return host_cubic(a);
        },
        ShapeDtype{{2}, f32}, c * 0.5f + x);
    return std::make_pair(y, y);
  };
  auto run = [&](const Array& init, const Array& xs) { return scan(step, init, xs); };
  Array init = data({2});
  Array xs = data({5, 2}) * 0.3f;
  // The reference: the same function in a C++ loop.
  Array c = init;
  for (int i = 0; i < 5; ++i) c = host_cubic(c * 0.5f + xs[i]);
  calls = 0;
  check_close(run(init, xs).first, c, 1e-6);
  CHECK(calls == 5);
  calls = 0;
  check_close(jit(run)(init, xs).first, c, 1e-6);
  CHECK(calls == 5);

  std::vector<int> trips;
  auto loop = jit([&](const Array& n) {
    return while_loop([&](const Array& i) { return i < n; },
                      [&](const Array& i) {
                        io_callback([&](const Array& k) { trips.push_back(k.item<int>()); }, std::tuple<>{}, ordered,
                                    i);
                        return i + 1;
                      },
                      scalar(0, i32));
  });
  CHECK(loop(scalar(4, i32)).item<int>() == 4);
  CHECK(trips == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("callback: grad through a callback is refused, through custom_vjp it equals the analytic derivative",
          "[callback]") {
  Array x = data({4});
  auto plain = [](const Array& v) { return sum(pure_callback(host_cubic, ShapeDtype{{4}, f32}, v)); };
  CHECK_THROWS_WITH(grad(plain)(x), Catch::Contains("custom_jvp or custom_vjp"));
  CHECK_THROWS_AS(grad(plain)(x), UnsupportedError);

  auto cubic_fn = custom_vjp(
      [](const Array& v) {
        return pure_callback(host_cubic, ShapeDtype{{4}, f32}, v);
      },
      [](const Array& v) {
        return std::make_pair(pure_callback(host_cubic, ShapeDtype{{4}, f32}, v), v);
      },
      [](const Array& v, const Array& ct) { return std::make_tuple(ct * (3.0f * v * v - 1.0f)); });
  auto loss = [&](const Array& v) { return sum(cubic_fn(v)); };
  check_close(grad(loss)(x), 3.0f * x * x - 1.0f, 1e-6);
  check_close(jit(grad(loss))(x), 3.0f * x * x - 1.0f, 1e-6);

  // A debug print inside a differentiated function prints the primal values once and changes nothing.
  CaptureCout out;
  auto traced_loss = [](const Array& v) {
    debug::print("v = {}", v);
    return sum(v * v);
  };
  check_close(grad(traced_loss)(x), 2.0f * x, 1e-6);
  CHECK(out.text().find("v = ") != std::string::npos);
}

TEST_CASE("callback: debug::print formats its arguments when the program runs", "[callback]") {
  CaptureCout out;
  auto jf = jit([](const Array& v) {
    debug::print("x = {} and {{braces}} and sum {}", v, sum(v));
    return v * 2.0f;
  });
  jf(array({1.0f, 2.0f}));
  jf(array({3.0f, 4.0f}));
  std::string text = out.text();
  INFO(text);
  CHECK(text.find("x = [1., 2.] and {braces} and sum 3.") != std::string::npos);
  CHECK(text.find("x = [3., 4.] and {braces} and sum 7.") != std::string::npos);
  CHECK_THROWS_WITH(debug::print("{} {}", array({1.0f})), Catch::Contains("2 {} placeholders for 1 arguments"));

  std::vector<double> seen;
  vmap([&](const Array& v) {
    debug::callback([&](const Array& s) { seen.push_back(s.item<float>()); }, sum(v));
    return v;
  })(array({{1.0f, 2.0f}, {3.0f, 4.0f}}));
  CHECK(seen == std::vector<double>{3.0, 7.0});
}

TEST_CASE("callback: JSON keeps a callback's name and types, running one read back is a clear error", "[callback]") {
  auto f = [](const Array& v) { return pure_callback(host_cubic, ShapeDtype{{3}, f32}, v) + 1.0f; };
  Graph g = make_graph(f)(data({3}));
  std::string json = g.to_json();
  CHECK_THAT(json, Catch::Contains("\"callback\""));
  Graph back = Graph::from_json(json);
  CHECK_THAT(back.to_text(), Catch::Contains("pure_callback at"));
  CHECK_THROWS_WITH(test::run_jit(back, {data({3})}, Backend::interpreter),
                    Catch::Contains("a C++ function cannot be"));

  // io callbacks, and the scans holding them, say they have effects; a file that hides one is refused.
  Graph io = make_graph([](const Array& xs) {
    return scan(
        [](const Array& c, const Array& x) {
          debug::print("{}", x);
          return std::make_pair(c + x, c);
        },
        zeros({}), xs);
  })(data({3}));
  std::string text = io.to_json(-1);
  const std::string mark = "\"effects\":true";
  size_t marks = 0;
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at + 1)) ++marks;
  CHECK(marks == 2);  // the scan and the io_callback in its body
  CHECK_NOTHROW(Graph::from_json(text));
  std::string hidden = text;
  hidden.erase(hidden.find("," + mark), mark.size() + 1);
  CHECK_THROWS_WITH(Graph::from_json(hidden), Catch::Contains("has effects but the node does not say so"));
}

TEST_CASE("callback: under pmap every replica calls the function on its shard", "[.pmap4]") {
  REQUIRE(devices().size() == 4);
  std::atomic<int> calls{0};
  auto per_replica = [&](const Array& v) {
    return pure_callback(
               [&](const Array& a) {
                 ++calls;
                 return host_cubic(a);
               },
               ShapeDtype{{3}, f32}, v) +
           psum(v, "i");
  };
  Array x = data({4, 3});
  Array want = stack({host_cubic(x[0]), host_cubic(x[1]), host_cubic(x[2]), host_cubic(x[3])}) + sum(x, {0});
  check_close(pmap(per_replica, "i")(x), want, 1e-6);
  CHECK(calls == 4);
  check_close(jit(pmap(per_replica, "i"))(x), want, 1e-6);
  CHECK(calls == 8);
}

TEST_CASE("callback: jit(Backend::cuda) runs the callback on the host between device kernels", "[cuda_devices]") {
  if (devices("cuda").empty()) return;
  int calls = 0;
  auto f = [&](const Array& v) {
    Array t = exp(v) * 0.5f;
    Array y = pure_callback(
        [&](const Array& a) {
          ++calls;
          CHECK(a.device().kind() == "cpu");  // copied to the host
          return host_cubic(a);
        },
        ShapeDtype{{6}, f32}, t);
    return tanh(y) + v;
  };
  Array x = data({6});
  auto on_cuda = jit(f, JitOptions{.backend = Backend::cuda});
  Array got = on_cuda(x);
  CHECK(got.device().kind() == "cuda");
  check_close(got, tanh(host_cubic(exp(x) * 0.5f)) + x, 1e-6);
  CHECK(calls == 1);
  CHECK_THAT(on_cuda.lower(x).compile().as_text(), Catch::Contains("pure_callback"));
}

TEST_CASE("callback: effects inside scan, cond and checkpoint run once under grad and jvp", "[callback]") {
  int n = 0;
  auto count = [&](const Array& v) { debug::callback([&](const Array&) { ++n; }, v); };
  auto scanned = [&](const Array& p) {
    auto step = [&](const Array& y, const std::tuple<>&) {
      count(y);
      return std::make_pair(sin(y * p), std::tuple<>{});
    };
    return sum(scan(step, array({1.0, 0.5}), std::tuple<>{}, 3).first);
  };
  auto branched = [&](const Array& p) {
    return sum(cond(
        p[0] > 0.0,
        [&](const Array& q) {
          count(q);
          return sin(q);
        },
        [](const Array& q) { return cos(q); }, p));
  };
  auto remat = [&](const Array& p) {
    return sum(checkpoint([&](const Array& q) {
      count(q);
      return sin(q);
    })(p));
  };
  const Array p = array({1.0, 2.0});
  n = 0;
  grad(scanned)(p);
  CHECK(n == 3);  // once per step: the backward scan recomputes values, not effects
  n = 0;
  jit(grad(scanned))(p);
  CHECK(n == 3);
  n = 0;
  grad(branched)(p);
  CHECK(n == 1);
  n = 0;
  jvp(branched, std::make_tuple(p), std::make_tuple(p));
  CHECK(n == 1);
  n = 0;
  grad(remat)(p);
  CHECK(n == 1);
  // The values are those without the callbacks.
  check_close(
      grad(scanned)(p), grad([](const Array& q) {
        return sum(scan([&](const Array& y, const std::tuple<>&) { return std::make_pair(sin(y * q), std::tuple<>{}); },
                        array({1.0, 0.5}), std::tuple<>{}, 3)
                       .first);
      })(p),
      1e-12);
}

TEST_CASE("callback: custom_jvp gives a callback its derivative, and constant arguments are not folded", "[callback]") {
  auto cubic_fn = custom_jvp(
      [](const Array& v) {
        return pure_callback(host_cubic, ShapeDtype{{4}, f32}, v);
      },
      [](const auto& primals, const auto& tangents) {
        const Array& v = std::get<0>(primals);
        const Array& t = std::get<0>(tangents);
        return std::make_pair(pure_callback(host_cubic, ShapeDtype{{4}, f32}, v), t * (3.0f * v * v - 1.0f));
      });
  Array x = data({4});
  check_close(grad([&](const Array& v) { return sum(cubic_fn(v)); })(x), 3.0f * x * x - 1.0f, 1e-6);
  auto [y, dy] = jvp(cubic_fn, std::make_tuple(x), std::make_tuple(ones({4})));
  check_close(y, host_cubic(x), 0);
  check_close(dy, 3.0f * x * x - 1.0f, 1e-6);

  // A callback on constants runs when the program runs, every call, never at compile time.
  int calls = 0;
  auto on_constants = jit([&](const Array& v) {
    Array c = pure_callback(
        [&](const Array& a) {
          ++calls;
          return a * 2.0f;
        },
        ShapeDtype{{2}, f32}, array({1.0f, 2.0f}));
    return v + c;
  });
  Array z = zeros({2});
  on_constants.lower(z).compile();
  CHECK(calls == 0);
  check_close(on_constants(z), array({2.0f, 4.0f}), 0);
  on_constants(z);
  CHECK(calls == 2);
}
