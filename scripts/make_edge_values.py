#!/usr/bin/env python3
"""Writes tests/edge_values/expected.json: NumPy's results for graft's
elementwise ops and reductions on edge values (+-0, +-inf, NaN, subnormals,
the largest and smallest finite values, integer extremes and overflow).

    /usr/bin/python3 scripts/make_edge_values.py   # Debian's python3-numpy

The C++ test (tests/edge_values/edge_values_test.cpp) runs each case through
graft and compares. Floats are stored as their bit patterns in hex, so NaN,
infinities and signed zeros survive JSON; integers as numbers; bools as
true/false; every input has the case's "shape". Where graft deliberately differs from NumPy, the case carries
"rule" (graft's documented rule) and its expected values follow that rule;
docs/EDGE_VALUES.md lists them.

Float references are computed in float64 from the exact inputs and rounded
to float32 for f32 cases; Python's math module supplies erf.
"""
import json
import math
import sys

import numpy as np

F32 = np.float32
F64 = np.float64


def float_values(t):
    fi = np.finfo(t)
    tiny_sub = np.nextafter(t(0), t(1))  # smallest subnormal
    big_sub = fi.tiny - tiny_sub          # largest subnormal
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, tiny_sub, -tiny_sub, big_sub, fi.tiny, -fi.tiny,
            fi.max, -fi.max, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, 1e-3, 88.5, -88.5, 710.0, -745.5,
            np.pi / 2, 1e30, -1e30]
    return np.array(vals, dtype=t)


# A smaller set for binary ops (every pair is a case).
def float_pair_values(t):
    fi = np.finfo(t)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, np.nextafter(t(0), t(1)), fi.max, -fi.max, 1.0, -1.0, 0.5,
                     3.0], dtype=t)


def int_values(t):
    ii = np.iinfo(t)
    vals = [0, 1, 2, 3, ii.max, ii.max - 1, ii.min, ii.min + 1, 7, 100]
    if ii.min < 0:
        vals += [-1, -2, -7, -100]
    return np.array(vals, dtype=t)


def int_pair_values(t):
    ii = np.iinfo(t)
    vals = [0, 1, 2, ii.max, ii.min, 7]
    if ii.min < 0:
        vals += [-1, ii.min + 1]
    return np.array(vals, dtype=t)


DT = {np.dtype(F32): "f32", np.dtype(F64): "f64", np.dtype(np.int32): "i32", np.dtype(np.int64): "i64",
      np.dtype(np.uint32): "u32", np.dtype(np.bool_): "bool"}


def encode(a):
    a = np.asarray(a).ravel()
    if a.dtype == F32:
        return ["0x%08x" % v for v in a.view(np.uint32).tolist()]
    if a.dtype == F64:
        return ["0x%016x" % v for v in a.view(np.uint64).tolist()]
    return a.tolist()


cases = []


def case(op, inputs, expected, rule=None, axes=None, error=False):
    c = {"op": op, "dtype": DT[np.asarray(inputs[0]).dtype], "inputs": [encode(x) for x in inputs],
         "shape": list(np.asarray(inputs[0]).shape),
         "expected_dtype": DT[np.asarray(expected).dtype], "expected": encode(expected)}
    if axes is not None:
        c["axes"] = axes
    if rule:
        c["rule"] = rule
    if error:  # NumPy raises; graft must throw a graft::Error (expected holds nothing to compare)
        c["error"] = True
    cases.append(c)


def in64(x, f):
    """f on float64 values of x, rounded back to x's dtype."""
    with np.errstate(all="ignore"):
        return np.asarray(f(x.astype(F64))).astype(x.dtype)


def erf(x):
    return np.array([math.erf(v) if not math.isnan(v) else math.nan for v in x.tolist()], dtype=F64)


def logistic(x):
    with np.errstate(all="ignore"):
        pos = 1.0 / (1.0 + np.exp(-x))
        e = np.exp(x)
        neg = e / (1.0 + e)
        return np.where(x >= 0, pos, neg)


UNARY_FLOAT = {
    "neg": np.negative, "abs": np.abs, "sign": np.sign, "floor": np.floor, "ceil": np.ceil, "round": np.round,
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "logistic": logistic, "erf": erf, "square": np.square, "reciprocal": lambda x: 1.0 / x, "cbrt": np.cbrt,
}

SIGNED_ZEROS = "max and min order -0 below +0 (IEEE 754-2019 maximum and minimum, as XLA)"


def ieee_maximum(a, b):
    r = np.maximum(a, b)
    z = (a == 0) & (b == 0)
    r[z] = a[z] + b[z]  # +0 unless both are -0
    return r


def ieee_minimum(a, b):
    r = np.minimum(a, b)
    z = (a == 0) & (b == 0)
    r[z] = -(-a[z] - b[z])  # -0 unless both are +0
    return r


def ieee_row_max(rows):
    r = np.max(rows, axis=1)
    for i, row in enumerate(rows):
        if r[i] == 0:
            r[i] = 0.0 if np.any((row == 0) & ~np.signbit(row)) else -0.0
    return r


def ieee_row_min(rows):
    r = np.min(rows, axis=1)
    for i, row in enumerate(rows):
        if r[i] == 0:
            r[i] = -0.0 if np.any((row == 0) & np.signbit(row)) else 0.0
    return r


for t in (F32, F64):
    x = float_values(t)
    for name, f in UNARY_FLOAT.items():
        case(name, [x], in64(x, f))
    case("isfinite", [x], np.isfinite(x))
    case("logical_not", [x], np.logical_not(x))
    # Float to integer conversion: NumPy leaves out-of-range and NaN undefined
    # (a RuntimeWarning and INT_MIN); graft saturates and maps NaN to 0.
    for it in (np.int32, np.int64, np.uint32):
        ii = np.iinfo(it)
        with np.errstate(all="ignore"):
            sat = np.where(np.isnan(x), 0, np.clip(np.trunc(np.nan_to_num(x, posinf=np.inf, neginf=-np.inf)),
                                                       float(ii.min), float(ii.max)))
        exp = np.array([ii.max if v >= float(ii.max) else ii.min if v <= float(ii.min) else int(v)
                        for v in sat.tolist()], dtype=it)
        case("astype_" + DT[np.dtype(it)], [x], exp, rule="float to integer saturates; NaN gives 0")

    p = float_pair_values(t)
    a, b = np.meshgrid(p, p, indexing="ij")
    a, b = a.ravel(), b.ravel()
    with np.errstate(all="ignore"):
        for name, f in {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
                        "pow": np.power, "maximum": ieee_maximum, "minimum": ieee_minimum,
                        "atan2": np.arctan2}.items():
            # NumPy's maximum and minimum return an operand by a plain comparison: max(+0, -0) is -0.
            case(name, [a, b], np.asarray(f(a.astype(F64), b.astype(F64))).astype(t) if name in ("pow", "atan2")
                 else f(a, b), rule=SIGNED_ZEROS if name in ("maximum", "minimum") else None)
        case("lt", [a, b], a < b)
        case("eq", [a, b], a == b)

    # Reductions over rows that mix the specials.
    rows = np.array([[1.0, np.nan, 2.0], [np.inf, -np.inf, 1.0], [np.inf, 1.0, 2.0], [-0.0, -0.0, -0.0],
                     [0.0, -0.0, 0.0], [np.finfo(t).max, np.finfo(t).max, 0.0], [-np.inf, -np.inf, np.nan],
                     [np.nextafter(t(0), t(1)), np.nextafter(t(0), t(1)), 0.0]], dtype=t)
    with np.errstate(all="ignore"):
        case("sum", [rows], np.add.reduce(rows, axis=1, dtype=t), axes=[1])
        case("prod", [rows], np.multiply.reduce(rows, axis=1, dtype=t), axes=[1])
        case("max", [rows], ieee_row_max(rows), axes=[1], rule=SIGNED_ZEROS)
        case("min", [rows], ieee_row_min(rows), axes=[1], rule=SIGNED_ZEROS)
        case("argmax", [rows], np.argmax(rows, axis=1).astype(np.int32), axes=[1])
        case("argmin", [rows], np.argmin(rows, axis=1).astype(np.int32), axes=[1])
    # Empty reductions: sum and prod give their identities; max and min have
    # none, and raise (graft: a ShapeError).
    empty = np.zeros((2, 0), dtype=t)
    case("sum", [empty], np.zeros(2, dtype=t), axes=[1])
    case("prod", [empty], np.ones(2, dtype=t), axes=[1])
    for name, f in (("max", np.max), ("min", np.min)):
        try:
            f(empty, axis=1)
            raise SystemExit("NumPy's %s of an empty axis no longer raises" % name)
        except ValueError:
            case(name, [empty], np.zeros(2, dtype=t), axes=[1], error=True)

for t in (np.int32, np.int64, np.uint32):
    x = int_values(t)
    with np.errstate(all="ignore"):
        if t == np.uint32:  # NumPy wraps neg, abs is x, sign 0 or 1; graft's need a signed dtype (an error)
            case("neg", [x], x, rule="neg needs a signed dtype", error=True)
            case("abs", [x], x, rule="abs needs a signed dtype", error=True)
            case("sign", [x], x, rule="sign needs a signed dtype", error=True)
        else:
            case("neg", [x], np.negative(x))
            case("abs", [x], np.abs(x))
            case("sign", [x], np.sign(x))
        case("square", [x], np.square(x))
    p = int_pair_values(t)
    a, b = np.meshgrid(p, p, indexing="ij")
    a, b = a.ravel(), b.ravel()
    with np.errstate(all="ignore"):
        for name, f in {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
                        "minimum": np.minimum}.items():
            case(name, [a, b], f(a, b))
        case("lt", [a, b], a < b)
        case("eq", [a, b], a == b)
    rows = np.array([[np.iinfo(t).max, 1, 0], [np.iinfo(t).min, np.iinfo(t).min, 0], [3, 7, 2]], dtype=t)
    with np.errstate(all="ignore"):
        case("sum", [rows], np.add.reduce(rows, axis=1, dtype=t), axes=[1])  # wraps, in the array's dtype
        case("prod", [rows], np.multiply.reduce(rows, axis=1, dtype=t), axes=[1])
        case("max", [rows], np.max(rows, axis=1), axes=[1])
        case("min", [rows], np.min(rows, axis=1), axes=[1])
        case("argmax", [rows], np.argmax(rows, axis=1).astype(np.int32), axes=[1])

# One case per line: a regenerated file diffs case by case.
with open(sys.argv[1] if len(sys.argv) > 1 else "tests/edge_values/expected.json", "w") as out:
    out.write('{"format": "graft.edge_values", "version": 1, "numpy": "%s", "cases": [\n' % np.__version__)
    out.write(",\n".join(json.dumps(c) for c in cases))
    out.write("\n]}\n")
print("wrote %d cases" % len(cases))
