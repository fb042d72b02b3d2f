#!/usr/bin/env python3
"""Writes corpus/: graft graphs, their inputs, and JAX's answers.

Each case is a graph in graft's JSON schema (corpus/README.md), inputs as
.npy, and what JAX computes for it in float64: the outputs, a jvp, a vjp,
vmap over a batch of 3 and, for smooth cases, a Hessian. JAX runs the graph
through `interpret` below, which maps each graft op to jax.lax with graft's
documented semantics, so graft and JAX agree only if both are right.

    /path/to/venv/bin/python scripts/make_corpus.py [corpus_dir] [--only GLOB]

Needs jax and numpy (pip install jax); graft's build and tests do not: the
output is committed. Deterministic: the same JAX gives the same files.
"""
import fnmatch
import hashlib
import json
import os
import shutil
import sys

import numpy as np

import jax
import jax.scipy.special  # noqa: F401 (ndtr, log_ndtr, ndtri)
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

# graft's ops in JAX, and the helpers for graft's JSON encoding: corpus/graft_lax.py (shipped with the corpus).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
from graft_lax import (DTYPES, FLOATS, INEXACT, NAMES, UNSIGNED, D, Gs, I, Is, S, literal, np_dtype,  # noqa: E402
                       run_graph, OPS)

# Ops of graft's table that no case holds, and why (corpus/README.md lists them).
NOT_COVERED = {
    "custom_jvp_call": "carries a user's derivative rule as a graph; JAX's custom_jvp has no graph form to compare with",
    "custom_vjp_call": "the same, for a user's VJP rule",
    "custom_lin": "exists only inside graft's linearization of custom_vjp_call",
    "linear_call": "wraps a user's linear function and its transpose (custom_linear_solve's tangent); JAX's linear_call has no graph form to compare with",
    "psum": "a collective: needs a named axis of replicas (tests/corpus checks pmap against vmap)",
    "pmax": "a collective (as psum)", "pmin": "a collective (as psum)", "all_gather": "a collective (as psum)",
    "psum_scatter": "a collective (as psum)", "ppermute": "a collective (as psum)", "axis_index": "a collective (as psum)",
    "all_to_all": "a collective (as psum)",
    "pmap": "runs a function on several devices: tests/api/pmap_primitive_test.cpp checks it against eager pmap and vmap",
    "fusion": "exists only inside jit executables, never in an exported graph",
    "pure_callback": "calls a C++ function, which a file cannot carry: tests/api/callback_test.cpp checks it",
    "io_callback": "a host callback (as pure_callback)",
    "bitcast_convert_type": "JAX's answers are computed in float64, where the bits of a 32-bit value mean something"
                            " else: tests/api/bitwise_ops_test.cpp checks its bits",
}


# ---- building graphs: node output types come from JAX (graft checks them against its own shape rules)

class Graph:
    def __init__(self):
        self.inputs, self.nodes, self.next, self.types, self.names = [], [], 0, {}, []

    def _value(self, dtype, shape):
        v = self.next
        self.next += 1
        self.types[v] = (dtype, list(shape))
        return v

    def input(self, dtype, shape, name=None):
        v = self._value(dtype, shape)
        self.inputs.append(v)
        self.names.append(name or "x%d" % len(self.names))
        return v

    def op(self, op, ins, attrs=None, n_out=None):
        attrs = attrs or {}
        specs = [jax.ShapeDtypeStruct(tuple(self.types[i][1]), DTYPES[self.types[i][0]]) for i in ins]
        node = {"id": len(self.nodes), "op": op, "inputs": list(ins), "outputs": [], "attrs": attrs}
        outs = jax.eval_shape(lambda *a: OPS[op](list(a), attrs, node, False), *specs)
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        ids = [self._value(NAMES[np.dtype(o.dtype)], o.shape) for o in outs]
        node["outputs"] = [{"id": v, "dtype": self.types[v][0], "shape": self.types[v][1]} for v in ids]
        if not attrs:
            del node["attrs"]
        self.nodes.append(node)
        return ids if (n_out or len(ids) != 1) else ids[0]

    def finish(self, outputs, output_names=None):
        outputs = outputs if isinstance(outputs, list) else [outputs]
        return {"inputs": [{"id": v, "dtype": self.types[v][0], "shape": self.types[v][1]} for v in self.inputs],
                "input_names": self.names,
                "nodes": self.nodes, "outputs": outputs,
                "output_names": output_names or (["out"] if len(outputs) == 1 else ["out[%d]" % k for k in range(len(outputs))])}

    def dtype(self, v):
        return self.types[v][0]

    def shape(self, v):
        return self.types[v][1]


def subgraph(types, build):
    """A subgraph over inputs of `types` ((dtype, shape) pairs); build(g, *inputs) returns its outputs."""
    g = Graph()
    ins = [g.input(d, s) for d, s in types]
    out = build(g, *ins)
    graph = g.finish(out if isinstance(out, list) else [out])
    del graph["input_names"], graph["output_names"]  # names are for a program's own inputs
    return graph


# ---- inputs

def make_values(rng, dtype, shape, domain=None, values=None):
    if values is not None:
        return np.array(values, dtype=DTYPES[dtype]).reshape(shape)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in FLOATS:
        lo, hi = domain or (-1.5, 1.5)
        return rng.uniform(lo, hi, size=shape).astype(DTYPES[dtype])
    if dtype in INEXACT:  # complex: both parts in the domain
        lo, hi = domain or (-1.5, 1.5)
        return (rng.uniform(lo, hi, size=shape) + 1j * rng.uniform(lo, hi, size=shape)).astype(DTYPES[dtype])
    lo, hi = domain or ((0, 9) if dtype in UNSIGNED else (-9, 9))
    return rng.integers(lo, hi + 1, size=shape).astype(DTYPES[dtype])


# ---- the cases

CASES = []


def case(name, graph, inputs, smooth=True, modes="fwd_and_rev", vmap=True, check=None, exact=False):
    """modes: "fwd_and_rev", "fwd" (no reverse mode, as for while) or "none" (no derivatives: JAX
    defines none). check(inputs, outputs) asserts the answers against an independent computation.
    exact: the values must equal the answers (a conversion's rounding), whatever the dtypes."""
    CASES.append({"name": name, "graph": graph, "inputs": inputs, "smooth": smooth, "modes": modes, "vmap": vmap,
                  "check": check, "exact": exact})


def rng_for(name):
    return np.random.default_rng(int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little"))


def one_op(name, op, in_specs, attrs=None, smooth=True, modes="fwd_and_rev", vmap=True, exact=False):
    """A case of one node: in_specs are (dtype, shape, domain or None, values or None)."""
    rng = rng_for(name)
    g = Graph()
    ids = [g.input(s[0], s[1]) for s in in_specs]
    out = g.op(op, ids, attrs)
    inputs = [make_values(rng, s[0], s[1], s[2] if len(s) > 2 else None, s[3] if len(s) > 3 else None) for s in in_specs]
    case(name, g.finish(out if isinstance(out, list) else [out]), inputs, smooth, modes, vmap, exact=exact)


SHAPES = {"scalar": [], "vector": [5], "matrix": [2, 3], "empty": [0, 3], "ones": [1, 1, 3]}
UNARY_DOMAINS = {
    "neg": None, "abs": None, "exp": None, "log": (0.2, 3.0), "log1p": (-0.5, 2.0), "expm1": None, "sqrt": (0.1, 3.0),
    "rsqrt": (0.1, 3.0), "sin": None, "cos": None, "tan": (-1.2, 1.2), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9),
    "atan": None, "sinh": None, "cosh": None, "tanh": None, "logistic": None, "erf": None, "square": None,
    "reciprocal": (0.3, 2.0), "copy": None, "cbrt": (0.2, 3.0), "erf_inv": (-0.9, 0.9),
    "erfc": None, "exp2": None, "log2": (0.2, 3.0), "log10": (0.2, 3.0), "asinh": None, "acosh": (1.2, 3.0),
    "atanh": (-0.9, 0.9), "lgamma": (0.2, 6.0), "digamma": (0.2, 6.0), "bessel_i0e": None, "bessel_i1e": (0.3, 3.0),
    "ndtr": None, "log_ndtr": None, "ndtri": (0.05, 0.95),
}
NONSMOOTH_UNARY = {"sign": None, "floor": None, "ceil": None, "round": None, "trunc": None}


def build_conv():
    """conv_general_dilated in the layouts and settings real programs use:
    NCHW with strides, padding and rhs dilation; NHWC/HWIO with feature groups
    and lhs dilation (a transposed convolution); depthwise 1-D NWC; 3-D; batch
    groups (what the weight gradient of a grouped convolution is)."""
    def attrs(lspec, rspec, ospec, strides, lo, hi, ld=None, rd=None, groups=1, batch_groups=1):
        n = len(strides)
        return {"batch_group_count": I(batch_groups), "feature_group_count": I(groups),
                "lhs_dilation": Is(ld or [1] * n), "lhs_spec": Is(lspec), "out_spec": Is(ospec),
                "padding_high": Is(hi), "padding_low": Is(lo), "rhs_dilation": Is(rd or [1] * n),
                "rhs_spec": Is(rspec), "window_strides": Is(strides)}
    one_op("conv_general_dilated/nchw_strided", "conv_general_dilated", [("f64", [2, 3, 6, 5]), ("f64", [4, 3, 3, 2])],
           attrs([0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3], [2, 1], [1, 0], [1, 1], rd=[1, 2]))
    one_op("conv_general_dilated/nhwc_groups_lhs_dilated", "conv_general_dilated",
           [("f64", [2, 4, 3, 4]), ("f64", [2, 2, 2, 6])],
           attrs([0, 3, 1, 2], [3, 2, 0, 1], [0, 3, 1, 2], [1, 1], [1, 0], [1, -1], ld=[2, 1], groups=2))
    one_op("conv_general_dilated/nwc_depthwise", "conv_general_dilated", [("f64", [1, 7, 3]), ("f64", [3, 1, 3])],
           attrs([0, 2, 1], [2, 1, 0], [0, 2, 1], [2], [1], [1], groups=3))
    one_op("conv_general_dilated/ncdhw", "conv_general_dilated", [("f64", [1, 2, 4, 3, 3]), ("f64", [2, 2, 2, 2, 1])],
           attrs([0, 1, 2, 3, 4], [0, 1, 2, 3, 4], [0, 1, 2, 3, 4], [1, 2, 1], [0, 0, 0], [0, 0, 0]))
    one_op("conv_general_dilated/batch_groups", "conv_general_dilated", [("f64", [4, 2, 4, 4]), ("f64", [4, 2, 2, 2])],
           attrs([0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3], [1, 1], [0, 0], [0, 0], batch_groups=2), vmap=False)
    one_op("conv_general_dilated/f32", "conv_general_dilated", [("f32", [1, 2, 5, 5]), ("f32", [2, 2, 3, 3])],
           attrs([0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3], [1, 1], [1, 1], [1, 1]))
    # NHWC/HWIO with stride 2 (JAX's SAME pads (0, 1)); depthwise with a channel multiplier of 2;
    # 1-D NCW with lhs and rhs dilation and a negative pad.
    one_op("conv_general_dilated/nhwc_stride2", "conv_general_dilated", [("f64", [2, 6, 5, 3]), ("f64", [3, 3, 3, 4])],
           attrs([0, 3, 1, 2], [3, 2, 0, 1], [0, 3, 1, 2], [2, 2], [0, 1], [1, 1]))
    one_op("conv_general_dilated/nhwc_depthwise_x2", "conv_general_dilated",
           [("f64", [2, 5, 5, 3]), ("f64", [3, 3, 1, 6])],
           attrs([0, 3, 1, 2], [3, 2, 0, 1], [0, 3, 1, 2], [1, 1], [1, 1], [1, 1], groups=3))
    one_op("conv_general_dilated/ncw_both_dilated", "conv_general_dilated", [("f64", [2, 2, 6]), ("f64", [3, 2, 3])],
           attrs([0, 1, 2], [0, 1, 2], [0, 1, 2], [2], [2], [-1], ld=[2], rd=[2]))


def build_cases():
    # Elementwise, one operand: every float function on every shape class (f64), and f32.
    for op, dom in UNARY_DOMAINS.items():
        for sname, shape in SHAPES.items():
            one_op("%s/%s" % (op, sname), op, [("f64", shape, dom)])
        one_op("%s/f32" % op, op, [("f32", [2, 4], dom)])
    for op in NONSMOOTH_UNARY:
        # Values on and between the steps (halves: round is half to even).
        one_op("%s/steps" % op, op, [("f64", [8], None, [-2.5, -1.5, -0.5, -0.2, 0.0, 0.5, 1.5, 2.7])], smooth=False)
    one_op("stop_gradient/matrix", "stop_gradient", [("f64", [2, 3])])
    one_op("checkpoint_name/matrix", "checkpoint_name", [("f64", [2, 3])], {"name": S("h")})
    for t in ("i32", "i64"):
        for op in ("neg", "abs", "sign", "square", "copy"):
            one_op("%s/%s" % (op, t), op, [(t, [6])])
    one_op("not/bool", "not", [("bool", [2, 3])])
    one_op("not/i32", "not", [("i32", [5])])
    one_op("not/u32", "not", [("u32", [5])])
    one_op("is_finite/f64", "is_finite", [("f64", [6], None, [0.0, -1.5, np.inf, -np.inf, np.nan, 3e300])], smooth=False)
    one_op("is_finite/f32", "is_finite", [("f32", [4], None, [1.0, np.inf, np.nan, -0.0])], smooth=False)

    # Special functions of two and three operands. The first operands of
    # polygamma and betainc are constants (JAX differentiates neither
    # polygamma in n nor betainc in a and b); igamma's Hessian in a needs a
    # derivative JAX does not define, so its cases have none.
    def with_constants(name, op, consts, x_spec, smooth=True):
        g = Graph()
        x = g.input(x_spec[0], x_spec[1])
        cs = [g.op("constant", [], {"value": literal(np.array(v, np.float64 if x_spec[0] == "f64" else np.float32))})
              for v in consts]
        values = make_values(rng_for(name), x_spec[0], x_spec[1], x_spec[2] if len(x_spec) > 2 else None)
        case(name, g.finish([g.op(op, cs + [x])]), [values], smooth)
    with_constants("polygamma/n1", "polygamma", [[1.0, 1.0, 2.0, 3.0, 0.0]], ("f64", [5], (0.3, 4.0)))
    with_constants("polygamma/f32", "polygamma", [[2.0, 1.0, 0.0]], ("f32", [3], (0.3, 4.0)))
    with_constants("betainc/vector", "betainc", [[0.5, 2.0, 5.0, 1.0], [3.0, 0.7, 2.0, 1.0]], ("f64", [4], (0.1, 0.9)))
    with_constants("betainc/f32", "betainc", [[2.0, 3.0], [1.5, 0.5]], ("f32", [2], (0.1, 0.9)))
    for op in ("igamma", "igammac"):
        one_op("%s/vector" % op, op, [("f64", [5], (0.5, 6.0)), ("f64", [5], (0.2, 8.0))], smooth=False)
        one_op("%s/f32" % op, op, [("f32", [2, 2], (0.5, 6.0)), ("f32", [2, 2], (0.2, 8.0))], smooth=False)
    # Functions JAX defines no derivative of: values and vmap only.
    for op in ("igamma_grad_a", "random_gamma_grad"):
        one_op("%s/vector" % op, op, [("f64", [5], (0.5, 6.0)), ("f64", [5], (0.2, 8.0))], smooth=False, modes="none")
        one_op("%s/f32" % op, op, [("f32", [2, 2], (0.5, 6.0)), ("f32", [2, 2], (0.2, 8.0))], smooth=False,
               modes="none")
    one_op("zeta/vector", "zeta", [("f64", [5], (1.5, 6.0)), ("f64", [5], (0.5, 4.0))], smooth=False, modes="none")
    one_op("zeta/f32", "zeta", [("f32", [2, 2], (1.5, 6.0)), ("f32", [2, 2], (0.5, 4.0))], smooth=False, modes="none")
    # nextafter's step from x, exact (Sterbenz): a wrong nextafter is caught whatever the tolerance.
    # Only f64: the answers widen f32 to f64, whose steps are not f32's.
    g = Graph()
    x, y = g.input("f64", [6]), g.input("f64", [6])
    case("nextafter/step", g.finish([g.op("sub", [g.op("nextafter", [x, y]), x])]),
         [np.array([1.0, 1.0, 0.0, 0.0, -3.5, 1e300]), np.array([2.0, 0.0, 1.0, -1.0, -3.5, np.inf])],
         smooth=False, modes="none")

    # Elementwise, two operands.
    for op, doms, smooth in (("add", (None, None), True), ("sub", (None, None), True), ("mul", (None, None), True),
                             ("div", (None, (0.5, 2.0)), True), ("max", (None, None), False),
                             ("min", (None, None), False), ("pow", ((0.5, 2.0), (-1.0, 2.0)), True),
                             ("atan2", (None, (0.2, 1.5)), True), ("rem", ((-3.0, 3.0), (0.7, 1.3)), False)):
        for sname in ("scalar", "matrix", "empty", "ones"):
            shape = SHAPES[sname]
            one_op("%s/%s" % (op, sname), op, [("f64", shape, doms[0]), ("f64", shape, doms[1])], smooth=smooth)
        one_op("%s/f32" % op, op, [("f32", [3, 2], doms[0]), ("f32", [3, 2], doms[1])], smooth=smooth)
    for t in ("i32", "i64", "u32"):
        for op in ("add", "sub", "mul", "max", "min"):
            one_op("%s/%s" % (op, t), op, [(t, [6]), (t, [6])])
        one_op("div/%s" % t, "div", [(t, [6]), (t, [6], (1, 4))])
        one_op("rem/%s" % t, "rem", [(t, [6]), (t, [6], (1, 4))])
    for t in ("bool", "i32", "u32"):
        for op in ("and", "or", "xor"):
            one_op("%s/%s" % (op, t), op, [(t, [2, 3]), (t, [2, 3])])
    # Shifts with amounts in range, at the width, beyond it and negative (out of range as unsigned).
    for op in ("shift_left", "shift_right_arithmetic", "shift_right_logical"):
        one_op("%s/i32" % op, op, [("i32", [6], None, [-8, 8, -1, 5, 123456, -7]),
                                   ("i32", [6], None, [1, 33, -1, 0, 31, 2])])
        one_op("%s/u32" % op, op, [("u32", [6], None, [0x80000000, 0xF0000000, 5, 1, 7, 0]),
                                   ("u32", [6], None, [1, 40, 0, 31, 3, 32])])
        one_op("%s/i64" % op, op, [("i64", [4], None, [-8, 1 << 40, -1, 3]), ("i64", [4], None, [1, 64, 63, 62])])
    for op in ("population_count", "clz"):
        one_op("%s/i32" % op, op, [("i32", [6], None, [-8, 8, -1, 0, 1, 2147483647])])
        one_op("%s/u32" % op, op, [("u32", [5], None, [0, 1, 0xFFFFFFFF, 0x80000000, 12345])])
        one_op("%s/i64" % op, op, [("i64", [4], None, [0, -1, 1 << 40, 7])])
    for op in ("eq", "ne", "lt", "le", "gt", "ge"):
        one_op("%s/f64" % op, op, [("f64", [6], None, [1.0, 2.0, -0.0, 3.0, np.inf, 5.0]),
                                   ("f64", [6], None, [1.0, 1.0, 0.0, 4.0, np.inf, np.nan])], smooth=False)
        one_op("%s/i32" % op, op, [("i32", [5], (-2, 2)), ("i32", [5], (-2, 2))])
        one_op("%s/u32" % op, op, [("u32", [5], (0, 3)), ("u32", [5], (0, 3))])
    one_op("select/f64", "select", [("bool", [2, 3]), ("f64", [2, 3]), ("f64", [2, 3])], smooth=False)
    one_op("select/i32", "select", [("bool", [4]), ("i32", [4]), ("i32", [4])])
    for src, dst, dom in (("f64", "f32", None), ("f32", "f64", None), ("i32", "f64", None), ("f64", "i32", (-5.0, 5.0)),
                          ("bool", "f32", None), ("i64", "i32", None), ("u32", "i64", None), ("f64", "bool", None)):
        one_op("convert_element_type/%s_to_%s" % (src, dst), "convert_element_type", [(src, [5], dom)],
               {"new_dtype": D(dst)}, smooth=False)

    # Reductions and scans.
    for op in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
        for axes, shape in (([0, 1], [2, 3]), ([0], [2, 3]), ([1], [2, 3]), ([], [2, 3]), ([0, 2], [2, 3, 2]),
                            ([1], [4, 1])):
            one_op("%s/axes_%s_of_%s" % (op, "".join(map(str, axes)) or "none", "x".join(map(str, shape))), op,
                   [("f64", shape)], {"axes": Is(axes)}, smooth=op in ("reduce_sum", "reduce_prod"))
        one_op("%s/f32" % op, op, [("f32", [3, 4])], {"axes": Is([1])}, smooth=op in ("reduce_sum", "reduce_prod"))
        one_op("%s/i32" % op, op, [("i32", [3, 4], (-3, 3))], {"axes": Is([0])})
    for op in ("reduce_sum", "reduce_prod"):
        one_op("%s/empty_axis" % op, op, [("f64", [0, 3])], {"axes": Is([0])})
    for op in ("reduce_and", "reduce_or"):
        one_op("%s/rows" % op, op, [("bool", [3, 4])], {"axes": Is([1])})
        one_op("%s/empty_axis" % op, op, [("bool", [2, 0])], {"axes": Is([1])})
    for op in ("argmax", "argmin"):
        one_op("%s/axis1" % op, op, [("f64", [3, 4])], {"axis": I(1), "index_dtype": D("i32")}, smooth=False)
        one_op("%s/ties" % op, op, [("f64", [6], None, [1.0, 3.0, 3.0, -2.0, -2.0, 0.0])],
               {"axis": I(0), "index_dtype": D("i64")}, smooth=False)
        one_op("%s/i32" % op, op, [("i32", [2, 5], (-4, 4))], {"axis": I(0), "index_dtype": D("i32")})
    for op in ("cumsum", "cumprod", "cummax", "cummin"):
        for axis, reverse in ((0, 0), (1, 0), (1, 1)):
            one_op("%s/axis%d%s" % (op, axis, "_reverse" if reverse else ""), op, [("f64", [3, 4])],
                   {"axis": I(axis), "reverse": I(reverse)}, smooth=op in ("cumsum", "cumprod"))
        one_op("%s/i32" % op, op, [("i32", [6], (-3, 3))], {"axis": I(0), "reverse": I(0)})

    # Layout.
    for name, shape, dims, out in (("scalar", [], [], [2, 3]), ("row", [3], [1], [2, 3]), ("column", [2], [0], [2, 3]),
                                   ("grow_size1", [1, 3], [0, 2], [4, 2, 3]), ("same", [2, 3], [0, 1], [2, 3]),
                                   ("to_empty", [3], [1], [0, 3])):
        one_op("broadcast_in_dim/%s" % name, "broadcast_in_dim", [("f64", shape)],
               {"shape": Is(out), "broadcast_dimensions": Is(dims)})
    one_op("broadcast_in_dim/i32", "broadcast_in_dim", [("i32", [3])], {"shape": Is([2, 3]), "broadcast_dimensions": Is([1])})
    for name, shape, new in (("flatten", [2, 3], [6]), ("split", [6], [3, 2]), ("to_scalar", [1, 1], []),
                             ("add_ones", [2, 3], [1, 2, 1, 3]), ("empty", [0, 4], [2, 0])):
        one_op("reshape/%s" % name, "reshape", [("f64", shape)], {"new_sizes": Is(new)})
    for perm in ([1, 0, 2], [2, 0, 1], [0, 2, 1], [2, 1, 0]):
        one_op("transpose/%s" % "".join(map(str, perm)), "transpose", [("f64", [2, 3, 4])], {"permutation": Is(perm)})
    one_op("transpose/i64", "transpose", [("i64", [2, 3])], {"permutation": Is([1, 0])})
    for dims in ([0], [1], [0, 1], []):
        one_op("rev/%s" % ("".join(map(str, dims)) or "none"), "rev", [("f64", [3, 4])], {"dimensions": Is(dims)})
    for name, start, limit, strides in (("middle", [1, 1], [3, 3], [1, 1]), ("strided", [0, 0], [4, 5], [2, 2]),
                                        ("empty", [2, 0], [2, 5], [1, 1]), ("all", [0, 0], [4, 5], [1, 1])):
        one_op("slice/%s" % name, "slice", [("f64", [4, 5])],
               {"start_indices": Is(start), "limit_indices": Is(limit), "strides": Is(strides)})
    one_op("concatenate/rows", "concatenate", [("f64", [2, 3]), ("f64", [1, 3])], {"dimension": I(0)})
    one_op("concatenate/three_columns", "concatenate", [("f64", [2, 1]), ("f64", [2, 2]), ("f64", [2, 3])], {"dimension": I(1)})
    one_op("concatenate/with_empty", "concatenate", [("f64", [2, 3]), ("f64", [0, 3])], {"dimension": I(0)})
    one_op("concatenate/bool", "concatenate", [("bool", [2]), ("bool", [3])], {"dimension": I(0)})
    for name, lo, hi, interior in (("grow", [1, 2], [2, 0], [0, 0]), ("interior", [0, 0], [0, 0], [1, 2]),
                                   ("negative", [-1, 1], [1, -2], [0, 1])):
        one_op("pad/%s" % name, "pad", [("f64", [3, 4]), ("f64", [])],
               {"padding_low": Is(lo), "padding_high": Is(hi), "padding_interior": Is(interior)})

    # Indexing.
    for name, starts in (("inside", [1, 2]), ("clamped", [5, -3]), ("zero", [0, 0])):
        one_op("dynamic_slice/%s" % name, "dynamic_slice",
               [("f64", [4, 5]), ("i32", [], None, [starts[0]]), ("i32", [], None, [starts[1]])],
               {"slice_sizes": Is([2, 3])}, vmap=True)
        one_op("dynamic_update_slice/%s" % name, "dynamic_update_slice",
               [("f64", [4, 5]), ("f64", [2, 3]), ("i32", [], None, [starts[0]]), ("i32", [], None, [starts[1]])])
    one_op("gather/rows", "gather", [("f64", [4, 3]), ("i32", [2, 2], None, [3, 0, 1, 3])], {"axis": I(0), "batch_dims": I(0)})
    one_op("gather/columns", "gather", [("f64", [3, 4]), ("i32", [3], None, [2, 0, 2])], {"axis": I(1), "batch_dims": I(0)})
    one_op("gather/clamped", "gather", [("f64", [4]), ("i32", [3], None, [-2, 7, 1])], {"axis": I(0), "batch_dims": I(0)})
    one_op("gather/batch_dims", "gather", [("f64", [2, 4, 3]), ("i32", [2, 2], None, [0, 3, 2, 2])],
           {"axis": I(1), "batch_dims": I(1)})
    one_op("gather/i32_operand", "gather", [("i32", [5]), ("i64", [3], None, [4, 0, 2])], {"axis": I(0), "batch_dims": I(0)})
    one_op("scatter_add/repeated", "scatter_add",
           [("f64", [4, 3]), ("i32", [3], None, [1, 3, 1]), ("f64", [3, 3])], {"axis": I(0), "batch_dims": I(0)})
    one_op("scatter_add/dropped", "scatter_add",
           [("f64", [4]), ("i32", [4], None, [0, 9, -1, 2]), ("f64", [4])], {"axis": I(0), "batch_dims": I(0)})
    one_op("scatter_add/batch_dims", "scatter_add",
           [("f64", [2, 3]), ("i32", [2, 2], None, [0, 0, 2, 1]), ("f64", [2, 2])], {"axis": I(1), "batch_dims": I(1)})

    # Sorting.
    one_op("top_k/rows", "top_k", [("f64", [3, 5])], {"k": I(2)})
    one_op("top_k/f32", "top_k", [("f32", [6])], {"k": I(3)})
    one_op("top_k/i32", "top_k", [("i32", [2, 4])], {"k": I(1)})
    one_op("sort/rows", "sort", [("f64", [3, 5])], {"dimension": I(1), "is_stable": I(1), "num_keys": I(1)}, smooth=False)
    one_op("sort/columns", "sort", [("f64", [4, 3])], {"dimension": I(0), "is_stable": I(0), "num_keys": I(1)}, smooth=False)
    one_op("sort/key_and_payload", "sort", [("i32", [6], None, [3, 1, 3, 0, 1, 2]), ("f64", [6])],
           {"dimension": I(0), "is_stable": I(1), "num_keys": I(1)}, smooth=False)
    one_op("sort/two_keys", "sort", [("i32", [5], None, [1, 0, 1, 0, 1]), ("i32", [5], None, [4, 2, 1, 3, 0]), ("f64", [5])],
           {"dimension": I(0), "is_stable": I(1), "num_keys": I(2)}, smooth=False)
    one_op("sort/i32", "sort", [("i32", [7], (-5, 5))], {"dimension": I(0), "is_stable": I(1), "num_keys": I(1)})

    # Creation.
    for name, dtype, shape, dim in (("f64_rows", "f64", [3, 4], 0), ("i32_columns", "i32", [3, 4], 1),
                                    ("u32_vector", "u32", [5], 0), ("f32", "f32", [2, 3], 1)):
        rng = rng_for("iota/" + name)
        g = Graph()
        x = g.input("f64", [])
        i = g.op("iota", [], {"dtype": D(dtype), "shape": Is(shape), "dimension": I(dim)})
        case("iota/" + name, g.finish([i, g.op("mul", [x, x])]), [make_values(rng, "f64", [])])
    for name, value in (("f64", np.array([[0.5, -1.25], [3.0, 1e-300]])), ("i32", np.array([1, -7, 2**31 - 1], np.int32)),
                        ("bool", np.array([True, False])), ("f32_scalar", np.array(0.1, np.float32))):
        g = Graph()
        x = g.input("f64", [2])
        c = g.op("constant", [], {"value": literal(value)})
        case("constant/" + name, g.finish([c, g.op("sin", [x])]), [make_values(rng_for("constant/" + name), "f64", [2])])

    # dot_general.
    def dot(name, a, b, lc, rc, lb=(), rb=(), dtype="f64"):
        one_op("dot_general/" + name, "dot_general", [(dtype, a), (dtype, b)],
               {"lhs_contracting": Is(lc), "rhs_contracting": Is(rc), "lhs_batch": Is(lb), "rhs_batch": Is(rb)})
    dot("matmul", [3, 4], [4, 2], [1], [0])
    dot("vector", [5], [5], [0], [0])
    dot("matvec", [3, 4], [4], [1], [0])
    dot("outer", [3], [4], [], [])
    dot("batched", [2, 3, 4], [2, 4, 5], [2], [1], [0], [0])
    dot("transposed_lhs", [4, 3], [4, 2], [0], [0])
    dot("transposed_rhs", [3, 4], [2, 4], [1], [1])
    dot("two_axes", [2, 3, 4], [3, 4, 2], [1, 2], [0, 1])
    dot("batch_not_leading", [3, 2, 4], [4, 2], [2], [0], [1], [1])
    dot("empty_contraction", [2, 0], [0, 3], [1], [0])
    dot("f32", [3, 4], [4, 2], [1], [0], dtype="f32")
    dot("i32", [2, 3], [3, 2], [1], [0], dtype="i32")

    # random_bits: graft's threefry against JAX's (no derivatives, no batch).
    for name, key, shape in (("vector", [0, 42], [8]), ("matrix", [7, 3], [3, 5]), ("odd", [1, 2], [7])):
        one_op("random_bits/" + name, "random_bits", [("u32", [2], None, key)], {"shape": Is(shape)}, vmap=False)

    # Control flow.
    f = ("f64", [3])
    branches = [subgraph([f, f], lambda g, a, b: g.op("mul", [a, b])),
                subgraph([f, f], lambda g, a, b: g.op("sin", [g.op("add", [a, b])])),
                subgraph([f, f], lambda g, a, b: g.op("exp", [a]))]
    for index in (0, 1, 2, 5, -1):
        one_op("cond/switch_index_%d" % index, "cond", [("i32", [], None, [index]), f, f], {"branches": Gs(*branches)})
    one_op("cond/bool", "cond", [("bool", [], None, [True]), f, f], {"branches": Gs(*branches[:2])})
    one_op("cond/bool_false", "cond", [("bool", [], None, [False]), f, f], {"branches": Gs(*branches[:2])})
    # while: x <- cos(x) + c, n times (forward mode only, as in JAX).
    s = ("f64", [])
    cond_g = subgraph([("i32", []), ("i32", []), ("f64", [3])], lambda g, lim, i, x: g.op("lt", [i, lim]))
    body_g = subgraph([("f64", [3]), ("i32", []), ("f64", [3])], lambda g, c, i, x: [
        g.op("add", [i, g.op("constant", [], {"value": literal(np.array(1, np.int32))})]),
        g.op("add", [g.op("cos", [x]), c])])
    for n in (0, 1, 4):
        one_op("while/fixed_point_%d_steps" % n, "while",
               [("i32", [], None, [n]), f, ("i32", [], None, [0]), f],
               {"cond": Gs(cond_g), "body": Gs(body_g), "cond_nconsts": I(1), "body_nconsts": I(1), "checkpoints": I(128)}, modes="fwd")
    # scan: a running product and the partial sums.
    body = subgraph([("f64", [2]), ("f64", [2]), ("f64", [2])],
                    lambda g, w, carry, x: [g.op("mul", [carry, g.op("add", [x, w])]), g.op("add", [carry, x])])
    for reverse in (0, 1):
        one_op("scan/carry_and_ys%s" % ("_reverse" if reverse else ""), "scan",
               [("f64", [2]), ("f64", [2]), ("f64", [4, 2])],
               {"body": Gs(body), "length": I(4), "num_carry": I(1), "num_consts": I(1), "reverse": I(reverse)})
    one_op("scan/empty", "scan", [("f64", [2]), ("f64", [2]), ("f64", [0, 2])],
           {"body": Gs(body), "length": I(0), "num_carry": I(1), "num_consts": I(1), "reverse": I(0)})
    one_op("remat/body", "remat", [f, f],
           {"body": Gs(subgraph([f, f], lambda g, a, b: g.op("sin", [g.op("mul", [a, b])]))),
            "policy": S("nothing_saveable")})
    # A policy that keeps the named product: the same values and derivatives.
    one_op("remat/saves_a_name", "remat", [f, f],
           {"body": Gs(subgraph([f, f], lambda g, a, b: g.op("sin", [g.op("checkpoint_name", [g.op("mul", [a, b])],
                                                                           {"name": S("ab")})]))),
            "policy": S("save_only_these_names 2:ab")})

    build_programs()
    build_random_streams()
    build_linalg()
    build_complex()
    build_conv()
    build_window()
    build_edges()
    build_dtypes()


def build_window():
    """The windowed reductions as pooling layers use them (NHWC max and sum
    pools with strides and padding) and with base and window dilation; their
    derivatives' primitives, select_and_gather_add and select_and_scatter_add,
    as JAX's max-pool derivative runs them (no dilation)."""
    def attrs(window, strides, lo, hi, base=None, wd=None, select=None):
        a = {"window_dimensions": Is(window), "window_strides": Is(strides), "padding_low": Is(lo),
             "padding_high": Is(hi), "base_dilation": Is(base or [1] * len(window)),
             "window_dilation": Is(wd or [1] * len(window))}
        if select:
            a["select"] = S(select)
        return a
    one_op("reduce_window_sum/strided_padded", "reduce_window_sum", [("f64", [4, 5])],
           attrs([2, 3], [1, 2], [1, 0], [0, 1]))
    one_op("reduce_window_sum/dilated", "reduce_window_sum", [("f64", [3, 4])],
           attrs([2, 2], [1, 1], [1, 0], [0, 1], base=[2, 1], wd=[1, 2]))
    one_op("reduce_window_sum/f32_pool", "reduce_window_sum", [("f32", [2, 4, 4, 3])],
           attrs([1, 2, 2, 1], [1, 2, 2, 1], [0, 0, 0, 0], [0, 0, 0, 0]))
    one_op("reduce_window_max/pool", "reduce_window_max", [("f64", [2, 5, 5, 2])],
           attrs([1, 3, 3, 1], [1, 2, 2, 1], [0, 1, 1, 0], [0, 1, 1, 0]))
    one_op("reduce_window_max/base_dilated", "reduce_window_max", [("f64", [2, 6, 5])],
           attrs([1, 2, 2], [1, 2, 1], [0, 1, 0], [0, 1, 1], base=[1, 1, 2]))
    one_op("reduce_window_max/i32", "reduce_window_max", [("i32", [3, 4])], attrs([2, 2], [1, 1], [0, 1], [1, 0]))
    one_op("reduce_window_min/strided", "reduce_window_min", [("f64", [4, 5])],
           attrs([3, 3], [2, 2], [1, 1], [1, 1]))
    one_op("reduce_window_sum/window_dilated", "reduce_window_sum", [("f64", [7, 4])],
           attrs([3, 2], [2, 1], [1, 0], [0, 1], wd=[2, 2]))
    one_op("reduce_window_max/pool_1d", "reduce_window_max", [("f64", [2, 9, 3])],
           attrs([1, 3, 1], [1, 2, 1], [0, 1, 0], [0, 1, 0]))
    one_op("reduce_window_min/3d", "reduce_window_min", [("f64", [1, 4, 3, 4, 2])],
           attrs([1, 2, 2, 2, 1], [1, 2, 1, 2, 1], [0, 0, 0, 0, 0], [0, 0, 1, 0, 0]))
    one_op("select_and_gather_add/ge", "select_and_gather_add", [("f64", [4, 6]), ("f64", [4, 6])],
           attrs([2, 2], [2, 1], [0, 1], [1, 0], select="ge"))
    one_op("select_and_scatter_add/le", "select_and_scatter_add", [("f64", [2, 3]), ("f64", [4, 6])],
           attrs([2, 2], [2, 2], [0, 0], [0, 0], select="le"))


def build_programs():
    """Whole programs: an MLP loss, attention, a scan RNN, a while-loop solver, and friends."""
    def bcast(g, v, shape, dims):
        return g.op("broadcast_in_dim", [v], {"shape": Is(shape), "broadcast_dimensions": Is(dims)})

    def scalar_const(g, value):
        return g.op("constant", [], {"value": literal(np.array(value, np.float64))})

    def log_softmax(g, z, shape):  # over the last axis of a [n, k] value
        n, k = shape
        m = g.op("stop_gradient", [g.op("reduce_max", [z], {"axes": Is([1])})])
        zc = g.op("sub", [z, bcast(g, m, shape, [0])])
        lse = g.op("log", [g.op("reduce_sum", [g.op("exp", [zc])], {"axes": Is([1])})])
        return g.op("sub", [zc, bcast(g, lse, shape, [0])])

    def matmul(g, a, b):
        return g.op("dot_general", [a, b], {"lhs_contracting": Is([1]), "rhs_contracting": Is([0]),
                                            "lhs_batch": Is([]), "rhs_batch": Is([])})

    for n, d, h, k in ((4, 3, 5, 2), (6, 4, 8, 3), (1, 2, 3, 2)):
        name = "program/mlp_loss_%dx%d_%d_%d" % (n, d, h, k)
        rng = rng_for(name)
        g = Graph()
        w1, b1 = g.input("f64", [d, h], "params.w1"), g.input("f64", [h], "params.b1")
        w2, b2 = g.input("f64", [h, k], "params.w2"), g.input("f64", [k], "params.b2")
        x, y = g.input("f64", [n, d], "x"), g.input("f64", [n, k], "y_onehot")
        hid = g.op("tanh", [g.op("add", [matmul(g, x, w1), bcast(g, b1, [n, h], [1])])])
        z = g.op("add", [matmul(g, hid, w2), bcast(g, b2, [n, k], [1])])
        ll = g.op("reduce_sum", [g.op("mul", [log_softmax(g, z, [n, k]), y])], {"axes": Is([0, 1])})
        loss = g.op("mul", [ll, scalar_const(g, -1.0 / n)])
        onehot = np.eye(k)[rng.integers(0, k, size=n)]
        case(name, g.finish([loss]), [make_values(rng, "f64", [d, h]), make_values(rng, "f64", [h]),
                                      make_values(rng, "f64", [h, k]), make_values(rng, "f64", [k]),
                                      make_values(rng, "f64", [n, d]), onehot])

    for t, dk in ((4, 3), (5, 2), (2, 4)):
        name = "program/attention_%d_%d" % (t, dk)
        rng = rng_for(name)
        g = Graph()
        q, kk, v = g.input("f64", [t, dk], "q"), g.input("f64", [t, dk], "k"), g.input("f64", [t, dk], "v")
        scores = g.op("mul", [g.op("dot_general", [q, kk], {"lhs_contracting": Is([1]), "rhs_contracting": Is([1]),
                                                            "lhs_batch": Is([]), "rhs_batch": Is([])}),
                              bcast(g, scalar_const(g, 1.0 / np.sqrt(dk)), [t, t], [])])
        p = g.op("exp", [log_softmax(g, scores, [t, t])])
        out = matmul(g, p, v)
        case(name, g.finish([out]), [make_values(rng, "f64", [t, dk]) for _ in range(3)])

    for steps, hdim, xdim in ((5, 3, 2), (3, 2, 2), (1, 4, 3)):
        name = "program/scan_rnn_%d_steps" % steps
        rng = rng_for(name)
        g = Graph()
        w, u = g.input("f64", [hdim, hdim], "params.w"), g.input("f64", [xdim, hdim], "params.u")
        h0, xs = g.input("f64", [hdim], "h0"), g.input("f64", [steps, xdim], "xs")

        def cell(sg, w, u, h, x):
            pre = sg.op("add", [sg.op("dot_general", [h, w], {"lhs_contracting": Is([0]), "rhs_contracting": Is([0]),
                                                              "lhs_batch": Is([]), "rhs_batch": Is([])}),
                                sg.op("dot_general", [x, u], {"lhs_contracting": Is([0]), "rhs_contracting": Is([0]),
                                                              "lhs_batch": Is([]), "rhs_batch": Is([])})])
            hn = sg.op("tanh", [pre])
            return [hn, sg.op("reduce_sum", [sg.op("square", [hn])], {"axes": Is([0])})]
        body = subgraph([("f64", [hdim, hdim]), ("f64", [xdim, hdim]), ("f64", [hdim]), ("f64", [xdim])], cell)
        hT, energies = g.op("scan", [w, u, h0, xs], {"body": Gs(body), "length": I(steps), "num_carry": I(1),
                                                     "num_consts": I(2), "reverse": I(0)})
        loss = g.op("reduce_sum", [energies], {"axes": Is([0])})
        case(name, g.finish([loss, hT], ["out.loss", "out.h"]),
             [make_values(rng, "f64", [hdim, hdim], (-0.8, 0.8)), make_values(rng, "f64", [xdim, hdim], (-0.8, 0.8)),
              make_values(rng, "f64", [hdim]), make_values(rng, "f64", [steps, xdim])])

    for a_values in ([2.0, 9.0, 0.5], [3.0], [1.5, 4.0]):
        # Newton's method for sqrt(a), while the step is above a tolerance (at most 50 steps).
        name = "program/while_newton_sqrt_%d" % len(a_values)
        m = len(a_values)
        g = Graph()
        a = g.input("f64", [m], "a")

        def cond_fn(sg, a, i, x):
            # continue while max |x*x - a| > 1e-12 and i < 50
            resid = sg.op("reduce_max", [sg.op("abs", [sg.op("sub", [sg.op("mul", [x, x]), a])])], {"axes": Is([0])})
            big = sg.op("gt", [resid, sg.op("constant", [], {"value": literal(np.array(1e-12))})])
            more = sg.op("lt", [i, sg.op("constant", [], {"value": literal(np.array(50, np.int32))})])
            return sg.op("and", [big, more])

        def body_fn(sg, a, i, x):
            half = bcast(sg, sg.op("constant", [], {"value": literal(np.array(0.5))}), [m], [])
            xn = sg.op("mul", [half, sg.op("add", [x, sg.op("div", [a, x])])])
            return [sg.op("add", [i, sg.op("constant", [], {"value": literal(np.array(1, np.int32))})]), xn]
        cg = subgraph([("f64", [m]), ("i32", []), ("f64", [m])], cond_fn)
        bg = subgraph([("f64", [m]), ("i32", []), ("f64", [m])], body_fn)
        i0 = g.op("constant", [], {"value": literal(np.array(0, np.int32))})
        steps, root = g.op("while", [a, a, i0, a], {"cond": Gs(cg), "body": Gs(bg), "cond_nconsts": I(1),
                                                    "body_nconsts": I(1), "checkpoints": I(128)})
        case(name, g.finish([root, steps], ["out.root", "out.steps"]), [np.array(a_values)], modes="fwd")

    for shape in ([2, 5], [3, 4]):
        name = "program/layer_norm_%dx%d" % tuple(shape)
        rng = rng_for(name)
        g = Graph()
        x = g.input("f64", shape, "x")
        n, k = shape
        mean = g.op("mul", [g.op("reduce_sum", [x], {"axes": Is([1])}), bcast(g, scalar_const(g, 1.0 / k), [n], [])])
        xc = g.op("sub", [x, bcast(g, mean, shape, [0])])
        var = g.op("mul", [g.op("reduce_sum", [g.op("square", [xc])], {"axes": Is([1])}),
                           bcast(g, scalar_const(g, 1.0 / k), [n], [])])
        inv = g.op("rsqrt", [g.op("add", [var, bcast(g, scalar_const(g, 1e-5), [n], [])])])
        case(name, g.finish([g.op("mul", [xc, bcast(g, inv, shape, [0])])]), [make_values(rng, "f64", shape)])

    name = "program/f32_mlp_layer"
    rng = rng_for(name)
    g = Graph()
    w, b, x = g.input("f32", [4, 3], "params.w"), g.input("f32", [3], "params.b"), g.input("f32", [2, 4], "x")
    out = g.op("logistic", [g.op("add", [matmul(g, x, w), bcast(g, b, [2, 3], [1])])])
    case(name, g.finish([out]), [make_values(rng, "f32", [4, 3]), make_values(rng, "f32", [3]), make_values(rng, "f32", [2, 4])])


def build_complex():
    """Complex numbers (c128; c64, widened to c128 for the answers) and the FFT. Domains keep
    both parts off the branch cuts, so derivatives exist. No Hessians (jax.hessian is for real
    functions): values, jvp and vjp with complex tangents and cotangents (JAX's conventions:
    transposes, not adjoints), vmap."""
    for op, dom in (("neg", None), ("exp", None), ("log", (0.2, 2.0)), ("log1p", (0.1, 1.0)), ("expm1", None),
                    ("sqrt", (0.2, 2.0)), ("rsqrt", (0.2, 2.0)), ("sin", None), ("cos", None), ("tan", (-0.6, 0.6)),
                    ("sinh", None), ("cosh", None), ("tanh", (-0.6, 0.6)), ("logistic", (-0.6, 0.6)),
                    ("square", None), ("reciprocal", (0.3, 2.0)), ("asin", (-0.6, 0.6)), ("acos", (-0.6, 0.6)),
                    ("atan", (-0.6, 0.6)), ("asinh", (-0.6, 0.6)), ("acosh", (1.2, 2.0)), ("atanh", (-0.6, 0.6)),
                    ("abs", (0.2, 1.5)), ("conj", None), ("real", None), ("imag", None), ("copy", None)):
        one_op("%s/c128" % op, op, [("c128", [5], dom)], smooth=False)
    for op, dom in (("exp", None), ("log", (0.2, 2.0)), ("mul_self", None), ("abs", (0.2, 1.5))):
        if op == "mul_self":
            one_op("mul/c64", "mul", [("c64", [2, 3]), ("c64", [2, 3])], smooth=False)
        else:
            one_op("%s/c64" % op, op, [("c64", [2, 3], dom)], smooth=False)
    one_op("sign/c128", "sign", [("c128", [4], (0.2, 1.5))], smooth=False)
    for op, doms in (("add", (None, None)), ("sub", (None, None)), ("mul", (None, None)), ("div", (None, (0.5, 2.0)))):
        one_op("%s/c128" % op, op, [("c128", [2, 3], doms[0]), ("c128", [2, 3], doms[1])], smooth=False)
    one_op("div/c64", "div", [("c64", [3]), ("c64", [3], (0.5, 2.0))], smooth=False)
    one_op("eq/c128", "eq", [("c128", [4], None, [1 + 2j, 0j, 1 + 2j, -1j]), ("c128", [4], None, [1 + 2j, -0.0, 1 - 2j, 1j])],
           smooth=False)
    one_op("ne/c128", "ne", [("c128", [4], None, [1 + 2j, 0j, 1 + 2j, -1j]), ("c128", [4], None, [1 + 2j, -0.0, 1 - 2j, 1j])],
           smooth=False)
    one_op("complex/f64", "complex", [("f64", [2, 3]), ("f64", [2, 3])], smooth=False)
    one_op("complex/f32", "complex", [("f32", [4]), ("f32", [4])], smooth=False)
    one_op("select/c128", "select", [("bool", [2, 3]), ("c128", [2, 3]), ("c128", [2, 3])], smooth=False)
    for src, dst in (("f64", "c128"), ("c64", "c128"), ("c128", "c64"), ("f32", "c64")):
        one_op("convert_element_type/%s_to_%s" % (src, dst), "convert_element_type", [(src, [5])],
               {"new_dtype": D(dst)}, smooth=False)
    one_op("reduce_sum/c128", "reduce_sum", [("c128", [2, 3])], {"axes": Is([1])}, smooth=False)
    one_op("reduce_prod/c128", "reduce_prod", [("c128", [3, 2])], {"axes": Is([0])}, smooth=False)
    one_op("cumsum/c128", "cumsum", [("c128", [2, 4])], {"axis": I(1), "reverse": I(0)}, smooth=False)
    one_op("dot_general/c128", "dot_general", [("c128", [2, 3]), ("c128", [3, 4])],
           {"lhs_contracting": Is([1]), "rhs_contracting": Is([0]), "lhs_batch": Is([]), "rhs_batch": Is([])}, smooth=False)
    one_op("dot_general/c64_batched", "dot_general", [("c64", [2, 2, 3]), ("c64", [2, 3, 2])],
           {"lhs_contracting": Is([2]), "rhs_contracting": Is([1]), "lhs_batch": Is([0]), "rhs_batch": Is([0])}, smooth=False)
    one_op("transpose/c128", "transpose", [("c128", [2, 3])], {"permutation": Is([1, 0])}, smooth=False)
    one_op("broadcast_in_dim/c128", "broadcast_in_dim", [("c128", [3])], {"shape": Is([2, 3]), "broadcast_dimensions": Is([1])},
           smooth=False)
    one_op("concatenate/c128", "concatenate", [("c128", [2]), ("c128", [3])], {"dimension": I(0)}, smooth=False)
    # The FFT: each fft_type, over one to three trailing axes, f64/c128 and f32/c64.
    for name, t, shape, kind, lengths in (("fft_vector", "c128", [8], "fft", [8]), ("fft_rows", "c128", [3, 5], "fft", [5]),
                                          ("ifft_2d", "c128", [2, 3, 4], "ifft", [3, 4]),
                                          ("fft_3d", "c128", [2, 2, 3], "fft", [2, 2, 3]),
                                          ("rfft_even", "f64", [2, 8], "rfft", [8]), ("rfft_odd", "f64", [7], "rfft", [7]),
                                          ("rfft_2d", "f64", [3, 4], "rfft", [3, 4]),
                                          ("irfft_even", "c128", [2, 5], "irfft", [8]), ("irfft_odd", "c128", [4], "irfft", [7]),
                                          ("irfft_2d", "c128", [3, 3], "irfft", [3, 4]),
                                          ("fft_c64", "c64", [2, 6], "fft", [6]), ("rfft_f32", "f32", [6], "rfft", [6]),
                                          ("irfft_c64", "c64", [5], "irfft", [8])):
        one_op("fft/%s" % name, "fft", [(t, shape)], {"fft_type": S(kind), "fft_lengths": Is(lengths)}, smooth=False)


def build_linalg():
    """cholesky and triangular_solve: of Gram matrices x x^T + 3 I, positive
    definite for every x (so vmap's rotated batches are too, and their
    tangents symmetric, the inputs JAX's cholesky rule is written for), and
    solves with triangles whose diagonals stay in [1, 2]."""
    def solve_attrs(left, lower, transpose, unit):
        return {"left_side": I(left), "lower": I(lower), "transpose_a": I(transpose), "unit_diagonal": I(unit)}

    for n in (3, 4):
        name = "program/cholesky_gram_%d" % n
        rng = rng_for(name)
        g = Graph()
        x = g.input("f64", [n, n], "x")
        gram = g.op("dot_general", [x, x], {"lhs_contracting": Is([1]), "rhs_contracting": Is([1]),
                                            "lhs_batch": Is([]), "rhs_batch": Is([])})
        eye3 = g.op("constant", [], {"value": literal(3.0 * np.eye(n))})
        chol = g.op("cholesky", [g.op("add", [gram, eye3])])
        case(name, g.finish([chol]), [make_values(rng, "f64", [n, n])])

    # a^-1 b through the factor: L y = b, then L^T x = y.
    name = "program/cholesky_solve"
    rng = rng_for(name)
    g = Graph()
    x, b = g.input("f64", [3, 3], "x"), g.input("f64", [3, 2], "b")
    gram = g.op("dot_general", [x, x], {"lhs_contracting": Is([1]), "rhs_contracting": Is([1]),
                                        "lhs_batch": Is([]), "rhs_batch": Is([])})
    chol = g.op("cholesky", [g.op("add", [gram, g.op("constant", [], {"value": literal(3.0 * np.eye(3))})])])
    y = g.op("triangular_solve", [chol, b], solve_attrs(1, 1, 0, 0))
    case(name, g.finish([g.op("triangular_solve", [chol, y], solve_attrs(1, 1, 1, 0))]),
         [make_values(rng, "f64", [3, 3]), make_values(rng, "f64", [3, 2])])

    for (left, lower, transpose, unit), a_shape, b_shape in (
            ((1, 1, 0, 0), [3, 3], [3, 2]), ((0, 0, 1, 0), [2, 3, 3], [2, 4, 3]), ((1, 0, 0, 1), [4, 4], [4, 1]),
            ((0, 1, 0, 1), [3, 3], [2, 3])):
        one_op("triangular_solve/left%d_lower%d_transpose%d_unit%d" % (left, lower, transpose, unit),
               "triangular_solve", [("f64", a_shape, (1.0, 2.0)), ("f64", b_shape)],
               solve_attrs(left, lower, transpose, unit))

    # lu: square, wide and tall, batched, f64 and f32 (random entries: no
    # pivot ties, so the derivative is JAX's rule at a smooth point).
    one_op("lu/square", "lu", [("f64", [4, 4])])
    one_op("lu/batch_wide", "lu", [("f64", [2, 3, 5])])
    one_op("lu/tall_f32", "lu", [("f32", [5, 3])])
    one_op("lu_pivots_to_permutation/batch", "lu_pivots_to_permutation",
           [("i32", [2, 3], None, [2, 2, 3, 0, 3, 2])], {"permutation_size": I(4)}, smooth=False, modes="none")
    # qr (Householder, LAPACK's signs): derivatives where JAX defines them
    # (m >= n, reduced or square); values and vmap for wide and complete.
    one_op("qr/tall", "qr", [("f64", [5, 3])], {"full_matrices": I(0)})
    one_op("qr/square_batch_f32", "qr", [("f32", [2, 4, 4])], {"full_matrices": I(1)})
    one_op("qr/wide", "qr", [("f64", [3, 5])], {"full_matrices": I(0)}, modes="none")
    one_op("qr/complete_tall", "qr", [("f64", [5, 2])], {"full_matrices": I(1)}, modes="none")
    # geqrf and householder_product, LAPACK's two steps alone (JAX
    # differentiates neither): any taus define a product of reflectors.
    one_op("geqrf/tall", "geqrf", [("f64", [5, 3])], modes="none")
    one_op("geqrf/wide_batch_f32", "geqrf", [("f32", [2, 3, 4])], modes="none")
    one_op("householder_product/tall", "householder_product", [("f64", [5, 3]), ("f64", [2])], modes="none")
    one_op("householder_product/batch", "householder_product", [("f64", [2, 4, 4]), ("f64", [2, 4])], modes="none")

    # svd (LAPACK's gesdd): singular values alone, and with the vectors as
    # sign-free products u_k vt_k (the graph's einsum), tall and wide;
    # the full factorization of a wide matrix without derivatives (JAX has none).
    one_op("svd/values", "svd", [("f64", [2, 4, 3])], {"compute_uv": I(0), "full_matrices": I(0)})
    for m, n in ((4, 3), (3, 5)):
        name = "program/svd_rank_ones_%dx%d" % (m, n)
        rng = rng_for(name)
        g = Graph()
        x = g.input("f64", [m, n], "x")
        s, u, vt = g.op("svd", [x], {"compute_uv": I(1), "full_matrices": I(0)})
        k = min(m, n)
        ut = g.op("transpose", [u], {"permutation": Is([1, 0])})  # JAX's broadcast_in_dim keeps axis order
        uk = g.op("broadcast_in_dim", [ut], {"shape": Is([k, m, n]), "broadcast_dimensions": Is([0, 1])})
        vk = g.op("broadcast_in_dim", [vt], {"shape": Is([k, m, n]), "broadcast_dimensions": Is([0, 2])})
        case(name, g.finish([s, g.op("mul", [uk, vk])]), [make_values(rng, "f64", [m, n])])
    one_op("svd/full_wide_f32", "svd", [("f32", [3, 5])], {"compute_uv": I(1), "full_matrices": I(1)}, modes="none")

    # eigh of x + x^T (symmetric for every x, so vmap's batches and the
    # tangents are too): the eigenvalues, and the eigenvectors squared (an
    # eigenvector's sign is LAPACK's choice, its square is not).
    for n, lower in ((3, 1), (4, 0)):
        name = "program/eigh_%d_lower%d" % (n, lower)
        rng = rng_for(name)
        g = Graph()
        x = g.input("f64", [n, n], "x")
        sym = g.op("add", [x, g.op("transpose", [x], {"permutation": Is([1, 0])})])
        v, w = g.op("eigh", [sym], {"lower": I(lower)})
        case(name, g.finish([w, g.op("mul", [v, v])]), [make_values(rng, "f64", [n, n])])

    # Complex matrices (LAPACK's c and z routines): the Hermitian x x^H + 3 I's
    # Cholesky factor and eigenvalues (eigenvectors through |v|^2, free of
    # LAPACK's phase), qr, lu, singular values, and a solve with a^H.
    def hermitian(g, x, n):
        xh = g.op("conj", [g.op("transpose", [x], {"permutation": Is([1, 0])})])
        prod = g.op("dot_general", [x, xh], {"lhs_contracting": Is([1]), "rhs_contracting": Is([0]),
                                               "lhs_batch": Is([]), "rhs_batch": Is([])})
        return g.op("add", [prod, g.op("constant", [], {"value": literal((3.0 * np.eye(n)).astype(np.complex128))})])
    name = "program/cholesky_hermitian_c128"
    rng = rng_for(name)
    g = Graph()
    x = g.input("c128", [3, 3], "x")
    case(name, g.finish([g.op("cholesky", [hermitian(g, x, 3)])]), [make_values(rng, "c128", [3, 3])])
    name = "program/eigh_hermitian_c128"
    rng = rng_for(name)
    g = Graph()
    x = g.input("c128", [3, 3], "x")
    v, w = g.op("eigh", [hermitian(g, x, 3)], {"lower": I(1)})
    case(name, g.finish([w, g.op("mul", [v, g.op("conj", [v])])]), [make_values(rng, "c128", [3, 3])])
    one_op("qr/reduced_tall_c128", "qr", [("c128", [4, 3])], {"full_matrices": I(0)})
    one_op("lu/square_c128", "lu", [("c128", [3, 3])], modes="none")
    one_op("svd/values_c128", "svd", [("c128", [3, 3])], {"compute_uv": I(0), "full_matrices": I(0)})
    name = "program/solve_adjoint_c128"
    rng = rng_for(name)
    g = Graph()
    a, b = g.input("c128", [3, 3], "a"), g.input("c128", [3, 2], "b")
    shifted = g.op("add", [a, g.op("constant", [], {"value": literal((3.0 * np.eye(3)).astype(np.complex128))})])
    attrs = dict(solve_attrs(1, 1, 1, 0), conjugate_a=I(1))
    case(name, g.finish([g.op("triangular_solve", [shifted, b], attrs)]),
         [make_values(rng, "c128", [3, 3]), make_values(rng, "c128", [3, 2])])

    # eig: the eigenvalues (differentiable when no eigenvectors are computed,
    # as JAX's) of a real matrix and of a complex one, and the right
    # eigenvectors' values (LAPACK's geev normalization; no derivative).
    def eig_attrs(left, right):
        return {"compute_left_eigenvectors": I(left), "compute_right_eigenvectors": I(right)}
    one_op("eig/values_f64", "eig", [("f64", [3, 3])], eig_attrs(0, 0))
    one_op("eig/values_c128", "eig", [("c128", [3, 3])], eig_attrs(0, 0))
    one_op("eig/vectors_f64", "eig", [("f64", [3, 3])], eig_attrs(0, 1), modes="none")

    # a^-1 b through the factors, as jnp.linalg.solve: rows of b permuted,
    # then L y = P b (unit diagonal) and U x = y.
    name = "program/lu_solve"
    rng = rng_for(name)
    g = Graph()
    a, b = g.input("f64", [4, 4], "a"), g.input("f64", [4, 2], "b")
    lu, _, perm = g.op("lu", [g.op("add", [a, g.op("constant", [], {"value": literal(3.0 * np.eye(4))})])])
    rows = g.op("gather", [b, perm], {"axis": I(0), "batch_dims": I(0)})
    y = g.op("triangular_solve", [lu, rows], solve_attrs(1, 1, 0, 1))
    case(name, g.finish([g.op("triangular_solve", [lu, y], solve_attrs(1, 0, 0, 0))]),
         [make_values(rng, "f64", [4, 4]), make_values(rng, "f64", [4, 2])])


def build_random_streams():
    """jax.random's streams as graft composes them of random_bits and u32 ops
    (api/random.cpp): split, fold_in, bits, uniform, normal and randint. The
    answers are JAX's evaluation of the graph, and the script checks them
    against jax.random's own functions for the same key, bit for bit."""
    def const(g, value, dtype, shape):
        c = g.op("constant", [], {"value": literal(np.array(value, DTYPES[dtype]))})
        return g.op("broadcast_in_dim", [c], {"shape": Is(shape), "broadcast_dimensions": Is([])}) if shape else c

    def with_const(g, op, x, value):
        return g.op(op, [x, const(g, value, g.dtype(x), g.shape(x))])

    def take(g, x, i, axis):  # x[..., i, ...] along axis, which is dropped
        s = g.shape(x)
        start, limit = [0] * len(s), list(s)
        start[axis], limit[axis] = i, i + 1
        sl = g.op("slice", [x], {"start_indices": Is(start), "limit_indices": Is(limit), "strides": Is([1] * len(s))})
        return g.op("reshape", [sl], {"new_sizes": Is(s[:axis] + s[axis + 1:])})

    def split(g, key, n):
        children = g.op("random_bits", [key], {"shape": Is([n, 2])})
        return [take(g, children, i, 0) for i in range(n)]

    def bits32(g, key, shape):  # the words of each counter's threefry pair xor-ed
        pairs = g.op("random_bits", [key], {"shape": Is(shape + [2])})
        return g.op("xor", [take(g, pairs, 0, len(shape)), take(g, pairs, 1, len(shape))])

    def unit(g, key, shape, dtype):  # uniform [0, 1) from the bits, exact
        if dtype == "f32":
            m = g.op("convert_element_type", [with_const(g, "div", bits32(g, key, shape), 512)], {"new_dtype": D("f32")})
            return with_const(g, "mul", m, 2.0 ** -23)
        pairs = g.op("random_bits", [key], {"shape": Is(shape + [2])})
        hi = g.op("convert_element_type", [take(g, pairs, 0, len(shape))], {"new_dtype": D("f64")})
        lo = g.op("convert_element_type", [with_const(g, "div", take(g, pairs, 1, len(shape)), 4096)],
                  {"new_dtype": D("f64")})
        return g.op("add", [with_const(g, "mul", hi, 2.0 ** -32), with_const(g, "mul", lo, 2.0 ** -52)])

    def uniform(g, key, shape, lo, hi):  # f64: max(lo, u (hi - lo) + lo)
        x = with_const(g, "add", with_const(g, "mul", unit(g, key, shape, "f64"), hi - lo), lo)
        return g.op("max", [const(g, lo, "f64", shape), x])

    def threefry(g, k0, k1, x0, x1):  # rotations as a wrapping multiply or-ed with a division
        rot = [13, 15, 26, 6, 17, 29, 16, 24]
        ks = [k0, k1, with_const(g, "xor", g.op("xor", [k0, k1]), 0x1BD11BDA)]
        x0, x1 = g.op("add", [x0, ks[0]]), g.op("add", [x1, ks[1]])
        for block in range(5):
            for r in range(4):
                x0 = g.op("add", [x0, x1])
                n = rot[(block % 2) * 4 + r]
                rotl = g.op("or", [with_const(g, "mul", x1, 2 ** n), with_const(g, "div", x1, 2 ** (32 - n))])
                x1 = g.op("xor", [rotl, x0])
            x0 = g.op("add", [x0, ks[(block + 1) % 3]])
            x1 = with_const(g, "add", g.op("add", [x1, ks[(block + 2) % 3]]), block + 1)
        return x0, x1

    def fold_in(g, key, data):  # threefry2x32(key, (0, data))
        k0, k1 = take(g, key, 0, 0), take(g, key, 1, 0)
        y0, y1 = threefry(g, k0, k1, const(g, 0, "u32", []), const(g, data, "u32", []))
        col = [g.op("reshape", [y], {"new_sizes": Is([1])}) for y in (y0, y1)]
        return g.op("concatenate", col, {"dimension": I(0)})

    def key_of(seed):
        return np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32)

    def same(got, want, what):
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype and np.array_equal(got, want), "%s differs from jax.random's" % what

    for seed in (0, 42, 2 ** 63 + 12345):
        name = "program/random_keys_%d" % seed
        g = Graph()
        key = g.input("u32", [2], "key")
        outs = split(g, key, 3) + [fold_in(g, key, 7), fold_in(g, key, 4000000000)]

        def check(inputs, out):
            k = jnp.asarray(inputs[0])
            for i, child in enumerate(jax.random.split(k, 3)):
                same(out[i], child, "split(key, 3)[%d]" % i)
            same(out[3], jax.random.fold_in(k, 7), "fold_in(key, 7)")
            same(out[4], jax.random.fold_in(k, np.uint32(4000000000)), "fold_in(key, 4000000000)")
        case(name, g.finish(outs, ["out.split0", "out.split1", "out.split2", "out.fold_in_7", "out.fold_in_4e9"]),
             [key_of(seed)], check=check)

        name = "program/random_draws_%d" % seed
        g = Graph()
        key = g.input("u32", [2], "key")
        kb, ku, kn, kr = split(g, key, 4)
        bits = bits32(g, kb, [2, 3])
        u = uniform(g, ku, [9], -3.0, 5.0)
        lo = np.nextafter(-1.0, 0.0)
        normal = with_const(g, "mul", g.op("erf_inv", [uniform(g, kn, [3, 4], lo, 1.0)]), np.sqrt(2.0))
        # randint in [-5, 17): (higher mod span) 2^32 + lower, mod span, in u32 (span 22).
        span, multiplier = 22, (65536 % 22) ** 2 % 22
        higher, lower = [bits32(g, k, [10]) for k in split(g, kr, 2)]
        offset = with_const(g, "rem", g.op("add", [with_const(g, "mul", with_const(g, "rem", higher, span), multiplier),
                                                   with_const(g, "rem", lower, span)]), span)
        ints = with_const(g, "add", g.op("convert_element_type", [offset], {"new_dtype": D("i32")}), -5)

        def check(inputs, out):
            k = jnp.asarray(inputs[0])
            kb, ku, kn, kr = jax.random.split(k, 4)
            same(out[0], jax.random.bits(kb, (2, 3), jnp.uint32), "bits")
            same(out[1], jax.random.uniform(ku, (9,), jnp.float64, -3.0, 5.0), "uniform")
            same(out[2], jax.random.normal(kn, (3, 4), jnp.float64), "normal")
            same(out[3], jax.random.randint(kr, (10,), -5, 17, jnp.int32), "randint")
        case(name, g.finish([bits, u, normal, ints], ["out.bits", "out.uniform", "out.normal", "out.randint"]),
             [key_of(seed)], check=check)

    name = "program/random_uniform_f32"
    g = Graph()
    key = g.input("u32", [2], "key")

    def check(inputs, out):
        same(np.asarray(out[0]).astype(np.float32), jax.random.uniform(jnp.asarray(inputs[0]), (2, 5), jnp.float32),
             "uniform f32")
    case(name, g.finish([unit(g, key, [2, 5], "f32")]), [key_of(7)], check=check)


# ---- JAX's answers

# ---- edge values: the corners docs/OPS.md pins down (integer division by zero and INT_MIN / -1, NaN and
# infinities into max, reductions, argmax and sort, float-to-int saturation, -0.0, shifts past the width)

I32_MIN, I32_MAX = -2 ** 31, 2 ** 31 - 1
NAN, INF = float("nan"), float("inf")


def build_edges():
    ints = [7, -7, I32_MIN, I32_MIN, 5, 0, I32_MAX]
    by = [0, 0, -1, 0, -1, 0, -1]
    for op in ("div", "rem"):
        one_op("edge/%s_i32" % op, op, [("i32", [7], None, ints), ("i32", [7], None, by)])
        one_op("edge/%s_f64" % op, op, [("f64", [6], None, [1.0, -1.0, 0.0, INF, -0.0, 5.5]),
                                         ("f64", [6], None, [0.0, -0.0, 0.0, INF, 2.0, -INF])], smooth=False, modes="none")
    i64_min = -2 ** 63
    for op in ("div", "rem"):
        one_op("edge/%s_i64" % op, op, [("i64", [4], None, [7, i64_min, i64_min, 0]), ("i64", [4], None, [0, -1, 0, 0])])
        one_op("edge/%s_u32" % op, op, [("u32", [3], None, [7, 0, 2 ** 32 - 1]), ("u32", [3], None, [0, 0, 2])])
        one_op("edge/%s_f32" % op, op, [("f32", [5], None, [1.0, -1.0, 0.0, INF, -0.0]),
                                         ("f32", [5], None, [0.0, -0.0, 0.0, INF, 2.0])], smooth=False, modes="none")
    one_op("edge/add_i32_overflow", "add", [("i32", [3], None, [I32_MAX, I32_MIN, -1]),
                                            ("i32", [3], None, [1, -1, I32_MIN])])
    one_op("edge/mul_u32_overflow", "mul", [("u32", [2], None, [2 ** 31, 65536]), ("u32", [2], None, [2, 65537])])
    for op in ("max", "min"):
        one_op("edge/%s_nan_inf" % op, op, [("f64", [5], None, [NAN, 1.0, -0.0, INF, NAN]),
                                            ("f64", [5], None, [1.0, NAN, 0.0, -INF, NAN])], smooth=False, modes="none")
    nan_row = [[1.0, NAN, 3.0, -INF], [2.0, -1.0, INF, 0.5]]
    for op in ("reduce_max", "reduce_min", "reduce_sum"):
        one_op("edge/%s_nan" % op, op, [("f64", [2, 4], None, nan_row)], {"axes": Is([1])}, smooth=False, modes="none")
    for op in ("argmax", "argmin"):
        one_op("edge/%s_nan" % op, op, [("f64", [2, 4], None, nan_row)], {"axis": I(1), "index_dtype": D("i32")},
               smooth=False, modes="none")
    one_op("edge/reduce_max_empty", "reduce_max", [("f64", [0, 3])], {"axes": Is([0])}, smooth=False, modes="none")
    one_op("edge/reduce_min_empty_i32", "reduce_min", [("i32", [2, 0])], {"axes": Is([1])})
    one_op("edge/sort_nan_inf", "sort", [("f64", [6], None, [3.0, NAN, -INF, 0.0, INF, -1.0])],
           {"dimension": I(0), "is_stable": I(1), "num_keys": I(1)}, smooth=False, modes="none")
    specials = [NAN, INF, -INF, 3.7, -3.7, 1e10, -1e10, -0.0]
    one_op("edge/max_nan_inf_f32", "max", [("f32", [4], None, [NAN, 1.0, -0.0, INF]), ("f32", [4], None, [1.0, NAN, 0.0, -INF])],
           smooth=False, modes="none")
    one_op("edge/convert_f32_to_i32", "convert_element_type", [("f32", [6], None, [NAN, INF, -INF, 2.5, -2.5, 3e9])],
           {"new_dtype": D("i32")}, smooth=False, modes="none")
    one_op("edge/convert_f64_to_i64", "convert_element_type", [("f64", [5], None, [NAN, INF, -INF, -7.9, 1e19])],
           {"new_dtype": D("i64")}, smooth=False, modes="none")
    for t in ("i32", "u32", "bool"):
        one_op("edge/convert_f64_to_%s" % t, "convert_element_type", [("f64", [8], None, specials)],
               {"new_dtype": D(t)}, smooth=False, modes="none")
    one_op("edge/convert_i32_to_u32", "convert_element_type", [("i32", [3], None, [-1, I32_MIN, 5])],
           {"new_dtype": D("u32")})
    one_op("edge/cholesky_not_positive_definite", "cholesky", [("f64", [2, 2], None, [1.0, 2.0, 2.0, 1.0])],
           smooth=False, modes="none")  # NaNs in the lower triangle, zeros above
    one_op("edge/neg_zero", "neg", [("f64", [2], None, [0.0, -0.0])])
    one_op("edge/abs_kink", "abs", [("f64", [4], None, [0.0, -0.0, -2.0, 3.0])], smooth=False)  # derivative +1 at ±0
    one_op("edge/sqrt_neg_zero_inf", "sqrt", [("f64", [3], None, [-0.0, INF, -1.0])], smooth=False, modes="none")
    one_op("edge/pow_negative_base", "pow", [("f64", [5], None, [-2.0, -2.0, 0.0, -8.0, INF]),
                                             ("f64", [5], None, [3.0, 0.5, 0.0, 1.0 / 3.0, -1.0])],
           smooth=False, modes="none")
    for op in ("shift_left", "shift_right_logical", "shift_right_arithmetic"):
        one_op("edge/%s_past_width" % op, op, [("i32", [5], None, [-8, 8, -8, 8, 1]),
                                               ("i32", [5], None, [0, 31, 32, 33, -1])])


def build_dtypes():
    """f16 and bf16 (answers from the exact inputs in f64: graft computes each op in f32 and rounds it, sums and
    products accumulate in f32, so a bf16 accumulator fails the sums below) and the small and wide integers
    (exact: wrapping, XLA's division by zero, saturating conversions); conversions to the halves compare exactly,
    ties to even, overflow, f16's subnormals and NaN included. f64 rounds to f16 once (graft_lax.f16_of_f64, as
    NumPy) but to bf16 through f32, as JAX (1 + 2^-8 + 2^-40 gives 1). No bf16 subnormals: XLA's CPU backend flushes them to zero, NumPy and graft keep them."""
    halves_unary = {"exp": None, "log": (0.2, 3.0), "sin": None, "tanh": None, "logistic": None, "sqrt": (0.1, 3.0),
                    "rsqrt": (0.1, 3.0), "erf": None, "log1p": (-0.5, 2.0), "reciprocal": (0.3, 2.0)}
    halves_binary = {"add": (None, None), "mul": (None, None), "div": (None, (0.5, 2.0)), "pow": ((0.5, 2.0), (-1.0, 2.0)),
                     "atan2": (None, (0.2, 1.5)), "max": (None, None)}
    ties = {  # values whose rounding to the type is a tie or just past one, its overflow and its subnormals
        "bf16": [1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, 1 + 2 ** -8 + 2 ** -40, -(1 + 2 ** -8), 3.4e38,
                 1e39, 2.0 ** -126, NAN, -INF, -0.0, 0.1],
        "f16": [1 + 2 ** -11, 1 + 3 * 2 ** -11, 1 + 2 ** -11 + 2 ** -30, -(1 + 2 ** -11), 65504.0, 65520.0, 2.0 ** -24,
                2.0 ** -25, NAN, -INF, -0.0, 0.1]}
    for t in ("f16", "bf16"):
        for op, dom in halves_unary.items():
            one_op("%s/%s" % (op, t), op, [(t, [2, 4], dom)])
        for op, doms in halves_binary.items():
            one_op("%s/%s" % (op, t), op, [(t, [3, 2], doms[0]), (t, [3, 2], doms[1])], smooth=op != "max")
        for op in ("floor", "round", "sign"):
            one_op("%s/%s" % (op, t), op, [(t, [8], None, [-2.5, -1.5, -0.5, -0.2, 0.0, 0.5, 1.5, 2.75])], smooth=False)
        one_op("is_finite/%s" % t, "is_finite", [(t, [4], None, [1.0, INF, NAN, -0.0])], smooth=False)
        one_op("lt/%s" % t, "lt", [(t, [5], None, [1.0, 2.0, -0.0, INF, NAN]), (t, [5], None, [1.0, 1.5, 0.0, INF, 1.0])],
               smooth=False)
        one_op("select/%s" % t, "select", [("bool", [2, 3]), (t, [2, 3]), (t, [2, 3])], smooth=False)
        # Sums of n terms in [0.5, 1): past 2^8 (bf16) or 2^11 (f16) a half's unit is 1, so a half accumulator
        # would round each term to 1 and be off by some n/4, where f32 sums are within a unit of the result.
        n = 256 if t == "bf16" else 2048
        one_op("reduce_sum/%s" % t, "reduce_sum", [(t, [2, n], (0.5, 1.0))], {"axes": Is([1])})
        one_op("cumsum/%s" % t, "cumsum", [(t, [n], (0.5, 1.0))], {"axis": I(0), "reverse": I(0)})
        one_op("reduce_max/%s" % t, "reduce_max", [(t, [3, 4])], {"axes": Is([0])}, smooth=False)
        one_op("argmax/%s" % t, "argmax", [(t, [2, 5])], {"axis": I(1), "index_dtype": D("i32")}, smooth=False)
        one_op("sort/%s" % t, "sort", [(t, [7], None, [0.5, NAN, -INF, 0.0, 1.0, -0.75, 0.5])],
               {"dimension": I(0), "is_stable": I(1), "num_keys": I(1)}, smooth=False, modes="none")
        # (Values only: the jvp of a 256-term product sums tangents of both signs, whose cancellations leave
        # bf16 units of the terms in a small result. The batched case below has derivatives.)
        one_op("dot_general/%s" % t, "dot_general", [(t, [4, 256], (0.5, 1.0)), (t, [256, 3], (0.5, 1.0))],
               {"lhs_contracting": Is([1]), "rhs_contracting": Is([0]), "lhs_batch": Is([]), "rhs_batch": Is([])},
               modes="none")
        one_op("dot_general/%s_batched" % t, "dot_general", [(t, [2, 3, 40]), (t, [2, 40, 2])],
               {"lhs_contracting": Is([2]), "rhs_contracting": Is([1]), "lhs_batch": Is([0]), "rhs_batch": Is([0])})
        one_op("broadcast_in_dim/%s" % t, "broadcast_in_dim", [(t, [3])], {"shape": Is([2, 3]), "broadcast_dimensions": Is([1])})
        one_op("transpose/%s" % t, "transpose", [(t, [2, 3, 2])], {"permutation": Is([2, 0, 1])})
        one_op("convert_element_type/f64_to_%s" % t, "convert_element_type", [("f64", [12], None, ties[t])],
               {"new_dtype": D(t)}, smooth=False, modes="none", exact=True)
        one_op("convert_element_type/f32_to_%s" % t, "convert_element_type", [("f32", [2, 3])], {"new_dtype": D(t)},
               smooth=False, exact=True)
        for dst in ("f32", "f64"):
            one_op("convert_element_type/%s_to_%s" % (t, dst), "convert_element_type", [(t, [2, 3])],
                   {"new_dtype": D(dst)}, exact=True)
        one_op("convert_element_type/%s_to_i32" % t, "convert_element_type",
               [(t, [8], None, [NAN, INF, -INF, 3.75, -3.75, 1e4, -0.0, 2.5])], {"new_dtype": D("i32")},
               smooth=False, modes="none")
        one_op("convert_element_type/i32_to_%s" % t, "convert_element_type",
               [("i32", [5], None, [1, -3, 257, 2049, 65519])], {"new_dtype": D(t)}, exact=True)
    one_op("convert_element_type/f16_to_bf16", "convert_element_type",
           [("f16", [5], None, [1.0009765625, 65504.0, 2.0 ** -24, -1.5, 0.1])], {"new_dtype": D("bf16")}, exact=True)
    one_op("convert_element_type/bf16_to_f16", "convert_element_type",
           [("bf16", [5], None, [1e5, 2.0 ** -30, -1.5, 0.1, 3.0])], {"new_dtype": D("f16")}, exact=True)

    # A mixed-precision layer as programs write it: bf16 operands, the product in f32, an f32 bias, tanh, and
    # the result stored in bf16 again.
    name = "program/bf16_mixed_precision_layer"
    g = Graph()
    x, w, b = g.input("bf16", [2, 8], "x"), g.input("bf16", [8, 3], "w"), g.input("f32", [3], "b")
    xf, wf = (g.op("convert_element_type", [v], {"new_dtype": D("f32")}) for v in (x, w))
    y = g.op("dot_general", [xf, wf], {"lhs_contracting": Is([1]), "rhs_contracting": Is([0]), "lhs_batch": Is([]),
                                       "rhs_batch": Is([])})
    y = g.op("tanh", [g.op("add", [y, g.op("broadcast_in_dim", [b], {"shape": Is([2, 3]),
                                                                      "broadcast_dimensions": Is([1])})])])
    rng = rng_for(name)
    case(name, g.finish([g.op("convert_element_type", [y], {"new_dtype": D("bf16")})]),
         [make_values(rng, "bf16", [2, 8]), make_values(rng, "bf16", [8, 3]), make_values(rng, "f32", [3])])

    # Integers of 8, 16 and 64 bits: arithmetic wraps, division rounds toward zero, by zero as XLA.
    lows = {"i8": -2 ** 7, "i16": -2 ** 15, "u8": 0, "u16": 0, "u64": 0}
    highs = {"i8": 2 ** 7 - 1, "i16": 2 ** 15 - 1, "u8": 2 ** 8 - 1, "u16": 2 ** 16 - 1, "u64": 2 ** 64 - 1}
    for t in ("i8", "i16", "u8", "u16", "u64"):
        lo, hi = lows[t], highs[t]
        for op in ("add", "sub", "mul", "max", "min", "and", "or", "xor"):
            one_op("%s/%s" % (op, t), op, [(t, [6]), (t, [6])])
        one_op("edge/add_%s_overflow" % t, "add", [(t, [3], None, [hi, lo, hi]), (t, [3], None, [1, hi, hi])])
        one_op("edge/mul_%s_overflow" % t, "mul", [(t, [3], None, [hi, hi // 2 + 1, 3]), (t, [3], None, [hi, 2, hi // 3])])
        if t not in UNSIGNED:
            one_op("edge/sub_%s_overflow" % t, "sub", [(t, [2], None, [lo, hi]), (t, [2], None, [1, -1])])
        for op in ("div", "rem"):
            one_op("edge/%s_%s" % (op, t), op, [(t, [5], None, [7, lo if lo else hi, lo if lo else 5, 0, hi]),
                                                 (t, [5], None, [0, -1 if lo else 3, 0, 0, 2])])
        for op in ("shift_left", "shift_right_arithmetic", "shift_right_logical"):
            bits = np.dtype(DTYPES[t]).itemsize * 8
            one_op("%s/%s" % (op, t), op, [(t, [5], None, [hi, lo if lo else 6, 5, 1, hi // 2]),
                                           (t, [5], None, [1, bits - 1, bits, 3, 0])])
        for op in ("not", "population_count", "clz", "neg" if t not in UNSIGNED else "copy"):
            one_op("%s/%s" % (op, t), op, [(t, [4], None, [0, 1, hi, lo if lo else hi // 3])])
        one_op("lt/%s" % t, "lt", [(t, [4], None, [lo, 0, hi, 5]), (t, [4], None, [hi, 0, lo, 6])])
        one_op("reduce_sum/%s" % t, "reduce_sum", [(t, [2, 4], None, [hi, 1, 2, 3, lo, hi, 7, hi])], {"axes": Is([1])})
        one_op("cumsum/%s" % t, "cumsum", [(t, [5])], {"axis": I(0), "reverse": I(1)})
        one_op("argmin/%s" % t, "argmin", [(t, [2, 4])], {"axis": I(1), "index_dtype": D("i32")})
        one_op("sort/%s" % t, "sort", [(t, [6], None, [hi, 0, lo, 3, hi, 1])],
               {"dimension": I(0), "is_stable": I(1), "num_keys": I(1)})
        # Float to integer saturates (NaN is 0), integer to integer keeps the low bits.
        one_op("convert_element_type/f32_to_%s" % t, "convert_element_type",
               [("f32", [8], None, [NAN, INF, -INF, 3.9, -3.9, 1e10, -1e10, 200.5])], {"new_dtype": D(t)},
               smooth=False, modes="none")
        one_op("convert_element_type/i64_to_%s" % t, "convert_element_type",
               [("i64", [5], None, [-1, 255, 256, 70000, -2 ** 40 - 3])], {"new_dtype": D(t)})
        one_op("convert_element_type/%s_to_f64" % t, "convert_element_type", [(t, [4], None, [lo, hi, 0, 3])],
               {"new_dtype": D("f64")})
    one_op("convert_element_type/u64_to_f32", "convert_element_type",
           [("u64", [3], None, [2 ** 64 - 1, 2 ** 63 + 2 ** 39, 2 ** 24 + 1])], {"new_dtype": D("f32")}, exact=True)


# ---- must-reject graphs: each is a graph another implementation must refuse, with the class of graft's error

REJECTS = []


def reject(name, error, inputs, nodes, outputs):
    """A graph written out by hand (a builder would refuse it): inputs are (dtype, shape), nodes
    (op, input ids, [(dtype, shape)] declared outputs, attrs)."""
    g = {"inputs": [{"dtype": t, "id": i, "shape": list(s)} for i, (t, s) in enumerate(inputs)], "nodes": [],
         "outputs": outputs}
    next_id = len(inputs)
    for k, (op, ins, outs, attrs) in enumerate(nodes):
        node = {"id": k, "op": op, "inputs": ins, "outputs": []}
        for t, shp in outs:
            node["outputs"].append({"dtype": t, "id": next_id, "shape": list(shp)})
            next_id += 1
        if attrs:
            node["attrs"] = attrs
        g["nodes"].append(node)
    REJECTS.append({"name": "reject/" + name, "error": error, "graph": g})


def build_rejects():
    dot_attrs = {"lhs_batch": Is([]), "lhs_contracting": Is([1]), "rhs_batch": Is([]), "rhs_contracting": Is([0])}
    reject("add_shapes_differ", "ShapeError", [("f64", [3]), ("f64", [4])], [("add", [0, 1], [("f64", [3])], None)], [2])
    reject("add_dtypes_differ", "DTypeError", [("f64", [3]), ("f32", [3])], [("add", [0, 1], [("f64", [3])], None)], [2])
    reject("sin_of_int", "DTypeError", [("i32", [3])], [("sin", [0], [("i32", [3])], None)], [1])
    reject("select_int_predicate", "DTypeError", [("i32", [3]), ("f64", [3]), ("f64", [3])],
           [("select", [0, 1, 2], [("f64", [3])], None)], [3])
    reject("declared_type_contradicts_rule", "ShapeError", [("f64", [3])], [("exp", [0], [("f64", [2])], None)], [1])
    reject("dot_general_contraction_mismatch", "ShapeError", [("f64", [2, 3]), ("f64", [4, 5])],
           [("dot_general", [0, 1], [("f64", [2, 5])], dot_attrs)], [2])
    reject("reshape_changes_size", "ShapeError", [("f64", [2, 3])],
           [("reshape", [0], [("f64", [7])], {"new_sizes": Is([7])})], [1])
    reject("unknown_op", "GraphFormatError", [("f64", [3])], [("frobnicate", [0], [("f64", [3])], None)], [1])
    reject("missing_attribute", "GraphFormatError", [("f64", [2, 3])],
           [("transpose", [0], [("f64", [3, 2])], None)], [1])
    reject("undefined_operand", "GraphFormatError", [("f64", [3])], [("exp", [5], [("f64", [3])], None)], [1])
    reject("undefined_output", "GraphFormatError", [("f64", [3])], [("exp", [0], [("f64", [3])], None)], [9])
    reject("axis_out_of_range", "ShapeError", [("f64", [2, 3])],
           [("reduce_sum", [0], [("f64", [2])], {"axes": Is([2])})], [1])


def float_positions(types):
    return [i for i, t in enumerate(types) if t in INEXACT]


def normal_like(rng, x):
    """Standard normal values of x's shape, complex (both parts normal) when x is."""
    v = rng.normal(size=np.shape(x))
    if jnp.iscomplexobj(x):
        v = v + 1j * rng.normal(size=np.shape(x))
    return jnp.asarray(v)


def vary(x, t, e):
    """Example e (1 or 2) of a batch built around input x: arrays rolled, and where that changes nothing (a scalar,
    equal elements) bools negated, integers shifted by e, floats scaled by 1 - e/8 (away from any fixed point)."""
    x = np.asarray(x)
    if x.size == 0:
        return x
    flat = x.reshape(-1)
    v = np.roll(flat, -e).reshape(x.shape)
    if not np.array_equal(v, x, equal_nan=(t in INEXACT)):
        return v
    if t == "bool":
        return ~x if e == 1 else x.copy()
    if t in INEXACT:
        return np.where(x == 0, np.asarray(0.25 * e, dtype=x.dtype), x * np.asarray(1 - e / 8, dtype=x.dtype)).astype(x.dtype)
    return (x + np.asarray(e, dtype=x.dtype)).astype(x.dtype)


def mixed_in_axes(ranks):
    """in_axes for the mixed-axes vmap: input i batched at its last axis (-1) when i % 3 == 0, unbatched (None) when
    i % 3 == 1, at axis 1 (0 for a scalar) when i % 3 == 2; input 0 is always batched."""
    axes = []
    for i, r in enumerate(ranks):
        axes.append(-1 if i % 3 == 0 else None if i % 3 == 1 else min(1, r))
    return axes


def graphs_in(g):
    """g and every subgraph nested in its nodes' attributes, depth first."""
    yield g
    for n in g["nodes"]:
        for a in n.get("attrs", {}).values():
            for sg in a.get("graphs", []):
                yield from graphs_in(sg)


# (value, derivative) bounds by the narrowest float a graph holds: a few roundings of it (each op rounds once:
# half a unit in the last place, 2^-9 relative for bf16, 2^-11 for f16, 2^-24 for f32), more for derivatives,
# whose tangents are rounded too. The order is the precedence.
BOUNDS = (("bf16", 8e-3, 3e-2), ("f16", 2e-3, 8e-3), ("f32", 2e-5, 1e-4), ("c64", 2e-5, 1e-4))


def tolerance(c):
    """The comparison rule's bounds for a case (corpus/README.md): per element |got - want| <= atol + rtol |want|.
    Answers are float64; a graph holding any bf16, f16, f32 or c64 value is compared at that type's accuracy, an
    exact case's values exactly."""
    g = c["graph"]
    dtypes = {s["dtype"] for sg in graphs_in(g) for s in sg["inputs"] + [o for n in sg["nodes"] for o in n["outputs"]]}
    value, derivative = 1e-11, 1e-9
    for t, v, d in BOUNDS:
        if t in dtypes:
            value, derivative = v, d
            break
    if c["exact"]:
        value = 0.0
    return {"value": {"rtol": value, "atol": value}, "derivative": {"rtol": derivative, "atol": derivative}}


def answers(c):
    g = c["graph"]
    in_types = [s["dtype"] for s in g["inputs"]]
    out_ids = g["outputs"]
    all_types = {s["id"]: s["dtype"] for s in g["inputs"]}
    for n in g["nodes"]:
        for s in n["outputs"]:
            all_types[s["id"]] = s["dtype"]
    out_types = [all_types[v] for v in out_ids]
    wide_inputs = [jnp.asarray(np.asarray(x).astype(np_dtype(t, True))) for x, t in zip(c["inputs"], in_types)]
    fin, fout = float_positions(in_types), float_positions(out_types)

    def f(*xs):
        return run_graph(g, list(xs), True)
    res = {"eval": [np.asarray(o) for o in f(*wide_inputs)], "float_inputs": fin, "float_outputs": fout}
    rng = rng_for("answers/" + c["name"])
    if fin and fout and c["modes"] != "none":
        def f_float(*fx):
            xs = list(wide_inputs)
            for i, v in zip(fin, fx):
                xs[i] = v
            outs = f(*xs)
            return [outs[k] for k in fout]
        primals = [wide_inputs[i] for i in fin]
        tangents = [normal_like(rng, p) for p in primals]
        _, jvp_out = jax.jvp(f_float, primals, tangents)
        res["jvp_tangents"], res["jvp"] = [np.asarray(t) for t in tangents], [np.asarray(t) for t in jvp_out]
        if c["modes"] != "fwd":
            outs, pullback = jax.vjp(f_float, *primals)
            cts = [normal_like(rng, o) for o in outs]
            res["vjp_cotangents"], res["vjp"] = [np.asarray(t) for t in cts], [np.asarray(t) for t in pullback(cts)]
            p0 = primals[0]
            any_complex = any(jnp.iscomplexobj(x) for x in list(primals) + list(outs))
            if c["smooth"] and np.size(p0) <= 16 and not any_complex:  # (jax.hessian is for real functions)
                ws = [jnp.asarray(rng.normal(size=np.shape(o))) for o in outs]

                def s(x0):
                    return sum(jnp.sum(o * w) for o, w in zip(f_float(x0, *primals[1:]), ws))
                res["hessian_weights"] = [np.asarray(w) for w in ws]
                res["hessian"] = np.asarray(jax.hessian(s)(p0))
    if c["vmap"]:
        # Three examples that differ in every input, scalars included (a rule that used example 0's
        # branch index, trip count or start index for the whole batch would fail).
        examples = [[np.asarray(x) for x in c["inputs"]]] + [[vary(x, t, e) for x, t in zip(c["inputs"], in_types)]
                                                             for e in (1, 2)]
        batched = [np.stack([ex[i] for ex in examples]) for i in range(len(in_types))]
        wide_batched = [jnp.asarray(b.astype(np_dtype(t, True))) for b, t in zip(batched, in_types)]
        res["vmap_inputs"] = batched
        res["vmap"] = [np.asarray(o) for o in jax.vmap(f)(*wide_batched)]
        # The same batch with mixed in_axes: unbatched inputs (example 0's), negative and non-zero axes.
        axes = mixed_in_axes([np.ndim(x) for x in c["inputs"]])
        placed = [np.asarray(c["inputs"][i]) if a is None else np.moveaxis(batched[i], 0, a)
                  for i, a in enumerate(axes)]
        res["vmap_in_axes"] = axes
        res["vmap_axes_inputs"] = placed
        res["vmap_axes"] = [np.asarray(o) for o in jax.vmap(f, in_axes=tuple(axes))(
            *[jnp.asarray(x.astype(np_dtype(t, True))) for x, t in zip(placed, in_types)])]
        # Composed transforms on the batch: vmap of grad (= grad of the batch's summed objective) and
        # jvp of vjp (a Hessian-vector product), for real functions with reverse mode.
        real = not any(t in ("c64", "c128") for t in in_types + out_types)
        if fin and fout and c["modes"] == "fwd_and_rev" and real:
            k0 = fin[0]
            ws = [rng.normal(size=np.shape(res["vmap"][k])) for k in fout]  # per example: w[e]

            def objective(xs, e):
                outs = f(*xs)
                return sum(jnp.sum(outs[k] * w[e]) for k, w in zip(fout, ws))

            def grad_x0(xs, e):
                return jax.grad(lambda x0: objective(xs[:k0] + [x0] + xs[k0 + 1:], e))(xs[k0])
            res["vmap_grad_weights"] = ws
            res["vmap_grad"] = [np.stack([np.asarray(grad_x0([wb[e] for wb in wide_batched], e)) for e in range(3)])]
            if c["smooth"]:
                v = normal_like(rng, wide_inputs[k0])
                res["hvp_vector"] = [np.asarray(v)]
                res["hvp"] = [np.asarray(jax.jvp(lambda x0: grad_x0(wide_inputs[:k0] + [x0] + wide_inputs[k0 + 1:], 0),
                                                 (wide_inputs[k0],), (v,))[1])]
    res["tolerance"] = tolerance(c)
    return res


def main():
    args = sys.argv[1:]
    only = None  # --only GLOB: just the cases whose names match (to try a change quickly, into another directory)
    if "--only" in args:
        k = args.index("--only")
        only = args[k + 1]
        del args[k:k + 2]
    out_dir = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus")
    cases_dir = os.path.join(out_dir, "cases")
    if os.path.isdir(cases_dir):
        shutil.rmtree(cases_dir)
    build_cases()
    if only:
        CASES[:] = [c for c in CASES if fnmatch.fnmatch(c["name"], only)]
    index = {"format": "graft.jax_corpus", "version": 2, "jax": jax.__version__, "cases": [], "not_covered": NOT_COVERED}
    ops_seen = set()
    for c in CASES:
        d = os.path.join(cases_dir, c["name"])
        os.makedirs(d)
        with open(os.path.join(d, "graph.json"), "w") as fh:
            json.dump({"format": "graft.graph", "version": 2, "graph": c["graph"]}, fh, indent=1, sort_keys=True)
        for i, x in enumerate(c["inputs"]):
            np.save(os.path.join(d, "in_%d.npy" % i), np.asarray(x).astype(DTYPES[c["graph"]["inputs"][i]["dtype"]]))
        r = answers(c)
        if c["check"]:
            c["check"](c["inputs"], r["eval"])
        files = {}
        for key in ("eval", "jvp_tangents", "jvp", "vjp_cotangents", "vjp", "hessian_weights", "vmap_inputs", "vmap",
                    "vmap_axes_inputs", "vmap_axes", "vmap_grad_weights", "vmap_grad", "hvp_vector", "hvp"):
            if key in r:
                files[key] = []
                for k, a in enumerate(r[key]):
                    fname = "%s_%d.npy" % (key, k)
                    np.save(os.path.join(d, fname), np.array(a, order="C"))  # (moveaxis makes Fortran order; 0-d stays 0-d)
                    files[key].append(fname)
        if "hessian" in r:
            np.save(os.path.join(d, "hessian.npy"), r["hessian"])
            files["hessian"] = "hessian.npy"

        ops = sorted({n["op"] for sg in graphs_in(c["graph"]) for n in sg["nodes"]})
        ops_seen.update(ops)
        entry = {"name": c["name"], "ops": ops, "smooth": c["smooth"], "modes": c["modes"],
                 "float_inputs": r["float_inputs"], "float_outputs": r["float_outputs"], "files": files,
                 "tolerance": r["tolerance"]}
        if "vmap_in_axes" in r:
            entry["vmap_in_axes"] = r["vmap_in_axes"]
        index["cases"].append(entry)
    build_rejects()
    index["rejects"] = []
    for r in REJECTS:
        d = os.path.join(cases_dir, r["name"])
        os.makedirs(d)
        with open(os.path.join(d, "graph.json"), "w") as fh:
            json.dump({"format": "graft.graph", "version": 2, "graph": r["graph"]}, fh, indent=1, sort_keys=True)
        index["rejects"].append({"name": r["name"], "error": r["error"]})
    index["ops"] = sorted(ops_seen)
    with open(os.path.join(out_dir, "index.json"), "w") as fh:
        json.dump(index, fh, indent=1, sort_keys=True)
    print("%d cases over %d ops written to %s (JAX %s)" % (len(CASES), len(ops_seen), out_dir, jax.__version__))


if __name__ == "__main__":
    main()
