// Batching rules of the indexing, sort and random ops: every op, every
// placement of the batch axis on every operand (or none), batch sizes 3 and 1.
// The vmapped one-node graph must give exactly what running the op on each
// example's slices and stacking the results gives; and the batched graph must
// not grow with the batch size (no per-example repetition).
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <sstream>

#include "api/dispatch.h"
#include "graft/graft.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "transforms/vmap.h"

using namespace graft;
using ir::Op;

namespace {

constexpr int64_t kNone = -1;  // no batch axis

// One operand of the op: its unbatched type and how its elements are made
// (from the element's flat index in the batched input).
struct Spec {
  DType dtype;
  Shape shape;
  std::function<double(int64_t)> value;
};

Spec data(DType dtype, Shape shape, int salt) {
  return {dtype, std::move(shape), [salt](int64_t i) { return static_cast<double>((i * 5 + salt * 3) % 17) - 8.0; }};
}

// Indices in and out of range (negative ones only for signed dtypes), with repeats.
Spec indices(DType dtype, Shape shape, int salt) {
  return {dtype, std::move(shape), [dtype, salt](int64_t i) {
            static const double signed_vals[] = {-2, 0, 1, 3, 9, 2, 1, 4, -7, 0, 2};
            static const double unsigned_vals[] = {0, 1, 3, 9, 2, 1, 4, 100, 0, 2, 4294967295.0};
            const double* v = dtype == DType::u32 ? unsigned_vals : signed_vals;
            return v[(i * 7 + salt) % 11];
          }};
}

Spec keys(Shape shape) {
  return {DType::u32, std::move(shape),
          [](int64_t i) { return static_cast<double>((static_cast<uint64_t>(i) * 2654435761u + 12345u) % 4294967296u); }};
}

Array make(const Spec& s, Shape shape) {
  const int64_t n = ir::checked_num_elements(shape);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = s.value(i);
  if (s.dtype == DType::u32) {
    std::vector<unsigned> u(v.begin(), v.end());
    return array(u, std::move(shape));
  }
  return astype(array(v, std::move(shape)), s.dtype);
}

ir::GraphPtr one_node(Op op, const std::vector<Spec>& specs, const ir::Attrs& attrs) {
  ir::GraphBuilder b;
  std::vector<ir::ValueId> ins;
  for (const Spec& s : specs) ins.push_back(b.input(ir::ValueType{s.dtype, s.shape}));
  return b.finish(b.add(op, ins, attrs));
}

std::vector<double> values(const Array& a) { return astype(a, DType::f64).to_vector<double>(); }

std::string dims_str(const std::vector<int64_t>& dims) {
  std::ostringstream os;
  for (int64_t d : dims) os << (d == kNone ? std::string("none") : std::to_string(d)) << ' ';
  return os.str();
}

size_t count(const ir::Graph& g, Op op) {
  size_t n = 0;
  for (const ir::Node& node : g.nodes()) n += node.op == op;
  return n;
}

// Every batch-axis placement (none or 0..rank per operand, not all none).
std::vector<std::vector<int64_t>> placements(const std::vector<Spec>& specs) {
  std::vector<std::vector<int64_t>> out{{}};
  for (const Spec& s : specs) {
    std::vector<std::vector<int64_t>> next;
    for (const auto& p : out)
      for (int64_t d = -1; d <= static_cast<int64_t>(s.shape.size()); ++d) {
        next.push_back(p);
        next.back().push_back(d);
      }
    out = std::move(next);
  }
  std::erase_if(out, [](const std::vector<int64_t>& p) {
    return std::all_of(p.begin(), p.end(), [](int64_t d) { return d == kNone; });
  });
  return out;
}

// vmap of the one-node graph against a loop over the examples, exactly.
void check_vmap(Op op, const std::vector<Spec>& specs, const ir::Attrs& attrs) {
  ir::GraphPtr g = one_node(op, specs, attrs);
  const size_t n_out = g->outputs().size();
  for (const std::vector<int64_t>& dims : placements(specs)) {
    for (int64_t batch : {3, 1}) {
      INFO(ir::op_name(op) << " in_dims " << dims_str(dims) << "batch " << batch);
      std::vector<Array> inputs;
      for (size_t i = 0; i < specs.size(); ++i) {
        Shape shape = specs[i].shape;
        if (dims[i] != kNone) shape.insert(shape.begin() + dims[i], batch);
        inputs.push_back(make(specs[i], shape));
      }
      ir::GraphPtr bg = transforms::vmap_graph(*g, dims, std::vector<int64_t>(n_out, 0), batch, "");
      std::vector<Array> got = detail::call_graph(*bg, inputs);
      REQUIRE(got.size() == n_out);

      std::vector<std::vector<Array>> per_out(n_out);
      for (int64_t k = 0; k < batch; ++k) {
        std::vector<Array> args;
        for (size_t i = 0; i < specs.size(); ++i)
          args.push_back(dims[i] == kNone
                             ? inputs[i]
                             : take(inputs[i], array(std::vector<int>{static_cast<int>(k)}, Shape{}), static_cast<int>(dims[i])));
        std::vector<Array> outs = detail::call_graph(*g, args);
        for (size_t o = 0; o < n_out; ++o) per_out[o].push_back(outs[o]);
      }
      for (size_t o = 0; o < n_out; ++o) {
        Array want = stack(per_out[o], 0);
        CHECK(got[o].dtype() == want.dtype());
        REQUIRE(got[o].shape() == want.shape());
        CHECK(values(got[o]) == values(want));
      }
      // No per-example repetition: the batched graph does not depend on the batch size.
      ir::GraphPtr bigger = transforms::vmap_graph(*g, dims, std::vector<int64_t>(n_out, 0), batch + 4, "");
      CHECK(bigger->nodes().size() == bg->nodes().size());
    }
  }
}

std::vector<Spec> with_starts(std::vector<Spec> specs, std::vector<DType> dtypes) {
  for (size_t d = 0; d < dtypes.size(); ++d) specs.push_back(indices(dtypes[d], {}, static_cast<int>(3 * d + 1)));
  return specs;
}


}  // namespace

TEST_CASE("vmap: dynamic_slice, every batch placement", "[vmap]") {
  check_vmap(Op::dynamic_slice, with_starts({data(f32, {4, 5}, 0)}, {i32, i32}), {{"slice_sizes", ir::Ints{2, 3}}});
  check_vmap(Op::dynamic_slice, with_starts({data(f32, {4, 5}, 0)}, {i32, i32}), {{"slice_sizes", ir::Ints{4, 2}}});
  check_vmap(Op::dynamic_slice, with_starts({data(f32, {4, 5}, 0)}, {u32, i64}), {{"slice_sizes", ir::Ints{3, 1}}});
  check_vmap(Op::dynamic_slice, with_starts({data(f32, {4, 5}, 0)}, {i32, i32}), {{"slice_sizes", ir::Ints{0, 3}}});
  check_vmap(Op::dynamic_slice, with_starts({data(i32, {3, 4, 2}, 1)}, {i32, u32, i32}),
             {{"slice_sizes", ir::Ints{2, 1, 2}}});
}

TEST_CASE("vmap: dynamic_update_slice, every batch placement", "[vmap]") {
  check_vmap(Op::dynamic_update_slice, with_starts({data(f32, {4, 5}, 0), data(f32, {2, 3}, 1)}, {i32, i32}), {});
  check_vmap(Op::dynamic_update_slice, with_starts({data(f32, {4, 5}, 0), data(f32, {4, 2}, 1)}, {i32, i32}), {});
  check_vmap(Op::dynamic_update_slice, with_starts({data(i32, {3, 4}, 0), data(i32, {2, 2}, 1)}, {u32, i64}), {});
  check_vmap(Op::dynamic_update_slice, with_starts({data(f32, {4, 5}, 0), data(f32, {0, 3}, 1)}, {i32, i32}), {});
  check_vmap(Op::dynamic_update_slice, with_starts({data(f32, {4, 5}, 0), data(f32, {4, 5}, 1)}, {i32, i32}), {});
  check_vmap(Op::dynamic_update_slice, with_starts({data(f32, {5}, 0), data(f32, {2}, 1)}, {i32}), {});
}

namespace {

ir::Attrs take_attrs(int64_t axis, int64_t batch_dims) { return {{"axis", axis}, {"batch_dims", batch_dims}}; }

// The gather geometries checked, as (operand, indices, axis, batch_dims).
struct Geometry {
  Shape x, idx;
  int64_t axis, batch_dims;
  Shape updates;  // the gather's result shape
};

const std::vector<Geometry> geometries = {
    {{4, 5}, {2, 3}, 0, 0, {2, 3, 5}},
    {{4, 5}, {2, 3}, 1, 0, {4, 2, 3}},
    {{4, 5}, {}, 1, 0, {4}},
    {{3, 4, 2}, {3, 2}, 1, 1, {3, 2, 2}},
    {{3, 4, 2}, {3, 2}, 2, 1, {3, 4, 2}},
    {{3, 4}, {3}, 1, 1, {3}},
    {{3, 2, 4}, {3, 2, 2}, 2, 2, {3, 2, 2}},
};

}  // namespace

TEST_CASE("vmap: gather, every batch placement", "[vmap]") {
  for (const Geometry& k : geometries)
    check_vmap(Op::gather, {data(f32, k.x, 0), indices(i32, k.idx, 2)}, take_attrs(k.axis, k.batch_dims));
  check_vmap(Op::gather, {data(f32, {4, 5}, 0), indices(u32, {3}, 2)}, take_attrs(1, 0));
}

TEST_CASE("vmap: scatter_add, every batch placement", "[vmap]") {
  for (const Geometry& k : geometries)
    check_vmap(Op::scatter_add, {data(f32, k.x, 0), indices(i32, k.idx, 2), data(f32, k.updates, 1)},
               take_attrs(k.axis, k.batch_dims));
}

TEST_CASE("vmap: a batched gather with batched indices is one gather", "[vmap]") {
  ir::GraphPtr g = one_node(Op::gather, {data(f32, {4, 5}, 0), indices(i32, {2, 3}, 2)}, take_attrs(1, 0));
  for (std::vector<int64_t> dims : {std::vector<int64_t>{0, 0}, {2, 1}, {1, 2}}) {
    INFO("in_dims " << dims_str(dims));
    ir::GraphPtr bg = transforms::vmap_graph(*g, dims, {0}, 7, "");
    CHECK(count(*bg, Op::gather) == 1);
    CHECK(count(*bg, Op::dynamic_slice) == 0);
    CHECK(count(*bg, Op::concatenate) == 0);
    const ir::Node* gather = nullptr;
    for (const ir::Node& n : bg->nodes())
      if (n.op == Op::gather) gather = &n;
    REQUIRE(gather);
    CHECK(std::get<int64_t>(*gather->attrs.find("batch_dims")) == 1);
    CHECK(std::get<int64_t>(*gather->attrs.find("axis")) == 2);
  }
  // Per-example start indices of dynamic_slice: one gather per axis cut per example, nothing per example.
  ir::GraphPtr ds = one_node(Op::dynamic_slice, with_starts({data(f32, {4, 5}, 0)}, {i32, i32}),
                             {{"slice_sizes", ir::Ints{2, 3}}});
  ir::GraphPtr bds = transforms::vmap_graph(*ds, {0, 0, 0}, {0}, 7, "");
  CHECK(count(*bds, Op::gather) == 2);
  CHECK(count(*bds, Op::dynamic_slice) == 0);
  // Unbatched start indices: one dynamic_slice taking the batch axis whole.
  bds = transforms::vmap_graph(*ds, {1, -1, -1}, {1}, 7, "");
  CHECK(count(*bds, Op::dynamic_slice) == 1);
  CHECK(count(*bds, Op::gather) == 0);
  CHECK(count(*bds, Op::transpose) == 0);
}

TEST_CASE("vmap: sort, every batch placement", "[vmap]") {
  ir::Attrs stable0{{"dimension", int64_t{0}}, {"num_keys", int64_t{1}}, {"is_stable", int64_t{1}}};
  ir::Attrs stable1{{"dimension", int64_t{1}}, {"num_keys", int64_t{1}}, {"is_stable", int64_t{1}}};
  check_vmap(Op::sort, {data(f32, {3, 4}, 0)}, stable0);
  check_vmap(Op::sort, {data(f32, {3, 4}, 0)}, stable1);
  // Keys with ties (so stability matters) carry values along.
  Spec ties{f32, {3, 4}, [](int64_t i) { return static_cast<double>(i % 3); }};
  check_vmap(Op::sort, {ties, data(i32, {3, 4}, 1)}, stable1);
  check_vmap(Op::sort, {ties, data(i32, {3, 4}, 1)}, stable0);
  ir::Attrs two_keys{{"dimension", int64_t{1}}, {"num_keys", int64_t{2}}, {"is_stable", int64_t{1}}};
  check_vmap(Op::sort, {ties, indices(i32, {3, 4}, 1), data(f32, {3, 4}, 2)}, two_keys);
}

TEST_CASE("vmap: random_bits with a batch of keys", "[vmap]") {
  check_vmap(Op::random_bits, {keys({2})}, {{"shape", ir::Ints{3, 2}}});
  check_vmap(Op::random_bits, {keys({2})}, {{"shape", ir::Ints{5}}});
  check_vmap(Op::random_bits, {keys({2})}, {{"shape", ir::Ints{}}});
  check_vmap(Op::random_bits, {keys({3, 2})}, {{"shape", ir::Ints{3}}});
  // One node: the key batch is native.
  ir::GraphPtr g = one_node(Op::random_bits, {keys({2})}, {{"shape", ir::Ints{3, 2}}});
  ir::GraphPtr bg = transforms::vmap_graph(*g, {0}, {0}, 5, "");
  CHECK(count(*bg, Op::random_bits) == 1);
  CHECK(bg->nodes().size() == 1);
}
