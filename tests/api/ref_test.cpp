// Mutable references (graft/ref.h): eager updates in place, Ref arguments
// of jit updated in the caller's buffer (checked by address, and by
// memory_analysis), and Refs made inside transforms discharged to dataflow
// (checked against the same function written without Refs).
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "graft/testing.h"
#include "support/arrays.h"

using namespace graft;
using test::check_close;

namespace {

Array data(Shape shape, float scale = 1.0f) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return reshape(sin(arange(n, f32) * 0.7f) * scale, shape);
}

}  // namespace

TEST_CASE("ref: eager get, set, swap, addupdate and at update one buffer in place", "[ref]") {
  Array init = data({2, 3});
  Ref r = new_ref(init);
  const void* address = r.unsafe_buffer_pointer();
  CHECK(address != init.unsafe_buffer_pointer());  // new_ref copies
  Array before = r.get();
  r.set(init * 2.0f);
  check_close(before, init, 0);  // a value read earlier keeps its value
  check_close(r.get(), init * 2.0f, 0);
  check_close(init, data({2, 3}), 0);  // init untouched
  Array old = r.swap(init * 3.0f);
  check_close(old, init * 2.0f, 0);
  r.addupdate(ones({2, 3}));
  check_close(r.get(), init * 3.0f + 1.0f, 0);
  r.at(1).set(zeros({3}));
  r.at({0, Slice(0, 2)}).addupdate(array({10.0f, 20.0f}));
  Array want = (init * 3.0f + 1.0f).at(1).set(zeros({3})).at({0, Slice(0, 2)}).add(array({10.0f, 20.0f}));
  check_close(r.get(), want, 0);
  check_close(r.at({0, Slice(1, 3)}).get(), want[{0, Slice(1, 3)}], 0);
  CHECK(r.unsafe_buffer_pointer() == address);  // every update wrote into the same buffer
  CHECK(r.shape() == Shape{2, 3});
  CHECK(r.dtype() == f32);

  CHECK_THROWS_AS(r.set(zeros({3, 2})), ShapeError);
  CHECK_THROWS_AS(r.set(zeros({2, 3}, f64)), DTypeError);
  Array frozen = freeze(r);
  check_close(frozen, want, 0);
  CHECK_THROWS_WITH(r.get(), Catch::Contains("frozen"));
  CHECK_THROWS_WITH(Ref().get(), Catch::Contains("empty"));
}

namespace {

struct Batch {
  Array x, y;
};

// One SGD-with-momentum step of least squares, written functionally: the reference.
std::pair<Array, Array> sgd_step(const Array& w, const Array& m, const Batch& b) {
  auto loss = [&](const Array& v) { return mean(square(matmul(b.x, v) - b.y)); };
  Array g = grad(loss)(w);
  Array m2 = m * 0.9f + g;
  return {w - 0.1f * m2, m2};
}

}  // namespace

TEST_CASE("ref: a jitted training step with Ref arguments keeps its parameters at one address", "[ref]") {
  Batch b{data({16, 8}), data({16, 4}, 0.5f)};
  Ref w = new_ref(data({8, 4}, 0.1f));
  Ref m = new_ref(zeros({8, 4}));
  auto step = jit([](const Ref& wr, const Ref& mr, const Array& x, const Array& y) {
    auto loss = [&](const Array& v) { return mean(square(matmul(x, v) - y)); };
    Array g = grad(loss)(wr.get());
    mr.set(mr.get() * 0.9f + g);
    wr.addupdate(-0.1f * mr.get());
  });
  const void* w_at = w.unsafe_buffer_pointer();
  const void* m_at = m.unsafe_buffer_pointer();
  Array w_ref = data({8, 4}, 0.1f), m_ref = zeros({8, 4});
  for (int i = 0; i < 5; ++i) {
    step(w, m, b.x, b.y);
    std::tie(w_ref, m_ref) = sgd_step(w_ref, m_ref, b);
    check_close(w.get(), w_ref, 1e-6);
    check_close(m.get(), m_ref, 1e-6);
    CHECK(w.unsafe_buffer_pointer() == w_at);
    CHECK(m.unsafe_buffer_pointer() == m_at);
  }
  CHECK(step.cache_size() == 1);
  // No output memory: both final values are written where the Refs' elements are.
  MemoryAnalysis mem = step.lower(w, m, b.x, b.y).compile().memory_analysis();
  CHECK(mem.output_bytes == 0);
  CHECK(mem.alias_bytes == 2 * 8 * 4 * 4);
}

TEST_CASE("ref: a jitted function returns values beside its Ref updates, on every backend", "[ref]") {
  for (Backend backend : {Backend::interpreter, Backend::cpu}) {
    Ref counter = new_ref(zeros({}, i32));
    Ref total = new_ref(zeros({3}));
    auto f = jit(
        [](const Ref& c, const Ref& t, const Array& x) {
          c.addupdate(ones({}, i32));
          t.at({Slice(0, 2)}).addupdate(x[{Slice(0, 2)}]);
          return sum(t.get());
        },
        JitOptions{.backend = backend, .wait_for_compile = true});
    Array x = array({1.0f, 2.0f, 3.0f});
    const void* at = total.unsafe_buffer_pointer();
    CHECK(f(counter, total, x).item<float>() == 3.0f);
    CHECK(f(counter, total, x).item<float>() == 6.0f);
    CHECK(counter.get().item<int>() == 2);
    check_close(total.get(), array({2.0f, 4.0f, 0.0f}), 0);
    CHECK(total.unsafe_buffer_pointer() == at);
    // A Ref the function only reads comes back unchanged, at its address.
    auto read_only = jit([](const Ref& t) { return t.get() * 2.0f; });
    check_close(read_only(total), array({4.0f, 8.0f, 0.0f}), 0);
    check_close(total.get(), array({2.0f, 4.0f, 0.0f}), 0);
    CHECK(total.unsafe_buffer_pointer() == at);
  }
}

TEST_CASE("ref: Refs made inside grad, vmap, jit and scan bodies are plain dataflow", "[ref]") {
  // A running sum kept in a Ref: its gradient equals that of the sum written out.
  auto with_ref = [](const Array& x) {
    Ref acc = new_ref(zeros({}));
    for (int i = 0; i < 3; ++i) acc.addupdate(sum(sin(x * static_cast<float>(i + 1))));
    Ref scratch = new_ref(x);
    scratch.at(0).set(scratch.at(1).get() * acc.get());
    return acc.get() + sum(scratch.get());
  };
  auto without = [](const Array& x) {
    Array acc = sum(sin(x)) + sum(sin(x * 2.0f)) + sum(sin(x * 3.0f));
    return acc + sum(x.at(0).set(x[1] * acc));
  };
  Array x = data({4});
  check_close(with_ref(x), without(x), 1e-6);
  check_close(grad(with_ref)(x), grad(without)(x), 1e-6);
  check_close(jit(grad(with_ref))(x), grad(without)(x), 1e-6);
  check_close(vmap(with_ref)(data({3, 4})), vmap(without)(data({3, 4})), 1e-6);

  // Inside a scan body, a Ref made there; the body also reads a Ref of the enclosing jit.
  auto scanned = jit([](const Array& xs) {
    Ref scale = new_ref(full({}, 2.0f));
    auto body = [&](const Array& c, const Array& xi) {
      Ref local = new_ref(c);
      local.addupdate(xi * scale.get());
      return std::make_pair(local.get(), local.get());
    };
    return scan(body, zeros({}), xs);
  });
  auto [carry, ys] = scanned(array({1.0f, 2.0f, 3.0f}));
  CHECK(carry.item<float>() == 12.0f);
  check_close(ys, array({2.0f, 6.0f, 12.0f}), 0);
}

TEST_CASE("ref: misuse across transforms is a clear error", "[ref]") {
  Ref outside = new_ref(zeros({3}));
  Array x = data({3});
  // An eager Ref read inside jvp (which does not carry Refs): its value would be baked into the traced graph.
  CHECK_THROWS_WITH(
      jvp([&](const Array& v) { return sum(v * outside.get()); }, std::make_tuple(x), std::make_tuple(ones({3}))),
      Catch::Contains("read it outside and pass the value"));
  // A Ref passed to a transform other than jit.
  CHECK_THROWS_WITH(vmap([](const Ref& r) { return r.get(); })(outside),
                    Catch::Contains("only jit takes Ref arguments"));
  // Written inside a custom rule while it belongs to the enclosing code.
  auto writes_in_rule = jit([](const Array& v) {
    Ref seen = new_ref(zeros({}));
    Array y = checkpoint([&](const Array& u) {
      seen.set(sum(u));
      return sum(u * u);
    })(v);
    return y + seen.get();
  });
  CHECK_THROWS_WITH(writes_in_rule(x), Catch::Contains("loop bodies and cond branches carry such writes out"));
  // vmap: a Ref of the enclosing code holds one value for the whole batch.
  CHECK_THROWS_WITH(vmap([&](const Array& v) {
                      outside.set(v);
                      return v;
                    })(data({4, 3})),
                    Catch::Contains("varies along the mapped axis"));
  // A while_loop's condition may read Refs, not write them.
  Ref n = new_ref(zeros({}, i32));
  CHECK_THROWS_WITH(while_loop(
                        [&](const Array& i) {
                          n.addupdate(ones({}, i32));
                          return i < 3;
                        },
                        [](const Array& i) { return i + 1; }, scalar(0, i32)),
                    Catch::Contains("cond_fn writes a Ref"));
  // A Ref made inside a transform and used after it ended.
  Ref leaked;
  jit([&](const Array& v) {
    leaked = new_ref(v);
    return v;
  })(x);
  CHECK_THROWS_AS(leaked.get(), TracerLeakError);
}

TEST_CASE("ref: grad and vmap read and write Refs of the enclosing code", "[ref]") {
  Array x = data({3});
  // Read inside grad: a constant that is not differentiated, read at every call (a set between calls is seen).
  Ref scale = new_ref(scalar(3.0f));
  auto weighted = [&](const Array& v) { return sum(v * v * scale.get()); };
  check_close(grad(weighted)(x), x * 6.0f, 1e-6);
  scale.set(scalar(0.5f));
  check_close(grad(weighted)(x), x * 1.0f, 1e-6);
  check_close(jit(grad(weighted))(x), x * 1.0f, 1e-6);

  // Written inside grad: the forward pass's value lands in the Ref once per
  // call (not once per trace, nor again in the backward pass), in place.
  Ref last = new_ref(zeros({}));
  Ref calls = new_ref(zeros({}, i32));
  const void* last_at = last.unsafe_buffer_pointer();
  auto logged = [&](const Array& v) {
    Array loss = sum(v * v);
    last.set(loss);
    calls.addupdate(ones({}, i32));
    return loss;
  };
  auto [value, g] = value_and_grad(logged)(x);
  check_close(g, x * 2.0f, 1e-6);
  CHECK(last.get().item<float>() == value.item<float>());
  CHECK(calls.get().item<int32_t>() == 1);
  CHECK(last.unsafe_buffer_pointer() == last_at);
  auto jitted = jit(grad(logged));
  for (int k = 0; k < 3; ++k) check_close(jitted(x * static_cast<float>(k + 1)), x * (2.0f * (k + 1)), 1e-5);
  CHECK(calls.get().item<int32_t>() == 4);
  CHECK(std::abs(last.get().item<float>() - 9.0f * sum(x * x).item<float>()) < 1e-4f);
  CHECK(jitted.cache_size() == 1);

  // A value written and read back inside the differentiated function is
  // differentiated through: sum((2v) * v) has gradient 4v.
  Ref twice = new_ref(zeros({3}));
  check_close(grad([&](const Array& v) {
                twice.set(v * 2.0f);
                return sum(twice.get() * v);
              })(x),
              x * 4.0f, 1e-6);
  check_close(twice.get(), x * 2.0f, 1e-6);

  // A Ref made inside jit and written inside a grad within it.
  auto inside_jit = jit([](const Array& v) {
    Ref seen = new_ref(zeros({}));
    Array gv = grad([&](const Array& u) {
      seen.set(sum(u));
      return sum(u * u);
    })(v);
    return gv + seen.get();
  });
  check_close(inside_jit(x), x * 2.0f + sum(x), 1e-5);

  // grad in each step of a scan, counting its calls in an enclosing Ref.
  Ref steps = new_ref(zeros({}, i32));
  auto [w, losses] = scan(
      [&](const Array& wk, const Array&) {
        auto [l, gk] = value_and_grad([&](const Array& u) {
          steps.addupdate(ones({}, i32));
          return sum(u * u);
        })(wk);
        return std::make_pair(wk - gk * 0.25f, l);
      },
      x, zeros({4}));
  check_close(w, x * 0.0625f, 1e-6);  // each step halves w
  check_close(losses[3], sum(x * x) / 64.0f, 1e-6);
  CHECK(steps.get().item<int32_t>() == 4);

  // vmap: the Ref is not mapped; a write that does not vary with the example happens once.
  Ref bias = new_ref(array({1.0f, 2.0f, 3.0f}));
  Ref batches = new_ref(zeros({}, i32));
  Array xs = data({4, 3});
  auto shifted = [&](const Array& v) {
    batches.addupdate(ones({}, i32));
    return v + bias.get();
  };
  check_close(vmap(shifted)(xs), xs + array({1.0f, 2.0f, 3.0f}), 0);
  CHECK(batches.get().item<int32_t>() == 1);
  bias.set(zeros({3}));
  check_close(jit(vmap(shifted))(xs), xs, 0);
  CHECK(batches.get().item<int32_t>() == 2);
  // vmap of grad, reading an enclosing Ref: a loop over the examples.
  Ref s2 = new_ref(scalar(2.0f));
  Array per_example = vmap(grad([&](const Array& v) { return sum(v * v * v * s2.get()); }))(xs);
  for (int64_t i = 0; i < 4; ++i) check_close(per_example[i], xs[i] * xs[i] * 6.0f, 1e-5);
}

TEST_CASE("ref: scan, fori_loop and while_loop bodies read and write enclosing Refs as carries", "[ref]") {
  Array xs = data({5, 3});
  // Eagerly: an accumulator written by the body, read by the next step, updated in place.
  Ref acc = new_ref(zeros({3}));
  const void* at = acc.unsafe_buffer_pointer();
  auto [c, ys] = scan(
      [&](const Array& carry, const Array& x) {
        acc.addupdate(x * carry);
        return std::make_pair(carry + 1.0f, acc.get());
      },
      ones({}), xs);
  Array want = zeros({3});
  std::vector<Array> partial;
  for (int i = 0; i < 5; ++i) {
    want = want + xs[i] * static_cast<float>(i + 1);
    partial.push_back(want);
  }
  check_close(acc.get(), want, 1e-6);
  check_close(ys, stack(partial), 1e-6);
  CHECK(acc.unsafe_buffer_pointer() == at);
  CHECK(c.item<float>() == 6.0f);

  // fori_loop with integer bounds (a scan) and with Array bounds (a while), and a
  // while whose condition reads the Ref its body writes.
  Ref count = new_ref(zeros({}, i32));
  fori_loop(
      0, 4,
      [&](const Array&, const Array& v) {
        count.addupdate(ones({}, i32));
        return v;
      },
      zeros({}));
  CHECK(count.get().item<int>() == 4);
  fori_loop(
      scalar(0, i32), scalar(3, i32),
      [&](const Array& i, const Array& v) {
        count.addupdate(i);
        return v;
      },
      zeros({}));
  CHECK(count.get().item<int>() == 7);
  Ref level = new_ref(scalar(1.0f));
  Array steps = while_loop([&](const Array&) { return level.get() < 100.0f; },
                           [&](const Array& k) {
                             level.set(level.get() * 3.0f);
                             return k + 1;
                           },
                           scalar(0, i32));
  CHECK(steps.item<int>() == 5);  // 1, 3, 9, 27, 81, 243
  CHECK(level.get().item<float>() == 243.0f);

  // Inside jit: a Ref argument updated in a nested scan (scan in scan), at its address.
  Ref total = new_ref(zeros({3}));
  const void* total_at = total.unsafe_buffer_pointer();
  auto twice = jit([](const Ref& t, const Array& v) {
    scan(
        [&](const Array& carry, const Array& row) {
          scan(
              [&](const Array& c2, const Array& x) {
                t.addupdate(x * c2);
                return std::make_pair(c2, c2);
              },
              carry, stack({row, row}));
          return std::make_pair(carry * 2.0f, carry);
        },
        ones({}), v);
  });
  twice(total, xs);
  Array w = zeros({3});
  float scale = 1.0f;
  for (int i = 0; i < 5; ++i, scale *= 2.0f) w = w + 2.0f * scale * xs[i];
  check_close(total.get(), w, 1e-5);
  CHECK(total.unsafe_buffer_pointer() == total_at);

  // Under grad: a Ref made inside the differentiated function and written in a scan.
  auto with_ref = [](const Array& p) {
    Ref s = new_ref(zeros({}));
    scan(
        [&](const Array& carry, const Array& x) {
          s.addupdate(sum(sin(x * p)) * carry);
          return std::make_pair(carry * 0.5f, carry);
        },
        ones({}), data({4, 3}));
    return s.get();
  };
  auto without = [](const Array& p) {
    Array s = zeros({});
    Array carry = ones({});
    Array rows = data({4, 3});
    for (int i = 0; i < 4; ++i) {
      s = s + sum(sin(rows[i] * p)) * carry;
      carry = carry * 0.5f;
    }
    return s;
  };
  Array p = data({3}) + 1.0f;
  check_close(with_ref(p), without(p), 1e-6);
  check_close(grad(with_ref)(p), grad(without)(p), 1e-6);
  check_close(jit(grad(with_ref))(p), grad(without)(p), 1e-6);
}

TEST_CASE("ref: a jitted function may close over an eager Ref: read each call, updated in place", "[ref]") {
  Ref scale = new_ref(scalar(2.0f));
  Ref calls = new_ref(zeros({}, i32));
  const void* at = calls.unsafe_buffer_pointer();
  auto f = jit([&](const Array& x) {
    calls.addupdate(ones({}, i32));
    return x * scale.get();
  });
  Array x = array({1.0f, 2.0f});
  check_close(f(x), x * 2.0f, 0);
  scale.set(scalar(5.0f));  // an eager update between calls: the next call reads it, nothing is baked in
  check_close(f(x), x * 5.0f, 0);
  CHECK(calls.get().item<int>() == 2);
  CHECK(calls.unsafe_buffer_pointer() == at);
  CHECK(f.cache_size() == 1);
  check_close(f.lower(x).compile()(x), x * 5.0f, 0);
  CHECK(calls.get().item<int>() == 3);
}

TEST_CASE("ref: cond and switch_ branches read and write enclosing Refs", "[ref]") {
  // Eagerly, and inside jit: the branch taken updates the Ref; the other leaves it as it was.
  Ref hits = new_ref(zeros({2}));
  const void* at = hits.unsafe_buffer_pointer();
  auto classify = [&](const Array& v) {
    return cond(
        sum(v) > 0.0f,
        [&](const Array& u) {
          hits.at(0).addupdate(scalar(1.0f));
          return u * 2.0f;
        },
        [&](const Array& u) { return u - hits.get()[0]; }, v);
  };
  check_close(classify(array({1.0f, 2.0f})), array({2.0f, 4.0f}), 0);
  check_close(classify(array({-1.0f, -2.0f})), array({-2.0f, -3.0f}), 0);  // reads hits[0] == 1
  check_close(hits.get(), array({1.0f, 0.0f}), 0);
  auto jitted = jit(classify);
  jitted(array({3.0f, 1.0f}));
  jitted(array({-3.0f, 1.0f}));
  jitted(array({3.0f, 1.0f}));
  check_close(hits.get(), array({3.0f, 0.0f}), 0);
  CHECK(hits.unsafe_buffer_pointer() == at);

  Ref which = new_ref(zeros({3}, i32));
  std::vector<std::function<Array(const Array&)>> branches;
  for (int k = 0; k < 3; ++k)
    branches.push_back([&, k](const Array& u) {
      which.at(k).addupdate(ones({}, i32));
      return u + static_cast<float>(k);
    });
  for (int i : {2, 0, 2, 5}) switch_(scalar(i, i32), branches, scalar(0.0f));
  CHECK(which.get().to_vector<int>() == std::vector<int>{1, 0, 3});  // 5 clamps to 2
}
