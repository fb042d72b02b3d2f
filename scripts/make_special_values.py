#!/usr/bin/env python3
"""Writes tests/special/special_values.json: reference values of graft's
special and elementwise functions, which tests/special/special_functions_test.cpp
measures graft against in ulps.

    /work/venv-peers/bin/python scripts/make_special_values.py   # a venv with mpmath and jax

For each function and dtype (f32, f64): sample arguments over its domain
(log-uniform over many decades, plus edge values: zeros, infinities, NaN,
poles), the exact value from mpmath at 100 digits rounded to the dtype, and
JAX's value on the CPU (for the comparison table of docs/SPECIAL_FUNCTIONS.md).
Each function's samples come in named ranges, since accuracy is stated per
range (the incomplete gamma and beta functions lose accuracy with large
parameters, as everyone's do). Floats are stored as bit patterns in hex.
"""
import json
import math
import sys

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special as jss  # noqa: E402
import mpmath as mp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

N = 160  # samples per range
rng = np.random.default_rng(20261127)
INF, NAN = float("inf"), float("nan")


def logu(lo, hi, n=N, sign=1.0):
    return list(sign * np.exp(rng.uniform(math.log(lo), math.log(hi), n)))


def uni(lo, hi, n=N):
    return list(rng.uniform(lo, hi, n))


def ints(lo, hi, n=N):
    return [float(v) for v in rng.integers(lo, hi, n)]


# ---- references (mpmath), each returning an mpf or a float for edge cases


def ref_lgamma(x):
    if x <= 0 and x == math.floor(x):
        return INF
    return mp.log(abs(mp.gamma(x)))


def ref_digamma(x):
    if x <= 0 and x == math.floor(x):
        return NAN
    return mp.digamma(x)


def ref_polygamma(n, x):
    if n < 0 or n != math.floor(n):
        return NAN
    if x <= 0 and x == math.floor(x):
        return NAN if n == 0 else INF
    return mp.polygamma(int(n), x)


def ref_zeta(s, q):
    if s == 1:
        return INF
    if s < 1:
        return NAN
    if q <= 0 and q == math.floor(q):
        return INF
    # mpmath's zeta(s, q) loses digits for large q even at 100 digits
    # (zeta(36.9, 778.7)); Euler-Maclaurin at 100 digits with 60 terms
    # summed and 40 Bernoulli terms is exact to far beyond a double.
    with mp.workdps(100):
        n = 60
        head = mp.fsum(mp.power(q + k, -s) for k in range(n))
        w = q + n
        tail = mp.power(w, 1 - s) / (s - 1) + mp.power(w, -s) / 2
        factor = s * mp.power(w, -s - 1)
        for j in range(1, 41):
            tail += mp.bernoulli(2 * j) / mp.factorial(2 * j) * factor
            factor *= (s + 2 * j - 1) * (s + 2 * j) / (w * w)
        return head + tail


def ref_igamma(a, x):
    return mp.gammainc(a, 0, x, regularized=True)


def ref_igammac(a, x):
    return mp.gammainc(a, x, mp.inf, regularized=True)


def ref_igamma_grad_a(a, x):
    return mp.diff(lambda t: mp.gammainc(t, 0, x, regularized=True), a)


def ref_random_gamma_grad(a, x):
    dpda = mp.diff(lambda t: mp.gammainc(t, 0, x, regularized=True), a)
    dpdx = mp.power(x, a - 1) * mp.exp(-x) / mp.gamma(a)
    return -dpda / dpdx


def ref_betainc(a, b, x):
    return mp.betainc(a, b, 0, x, regularized=True)


def ref_ndtri(p):
    if not 0 <= p <= 1:
        return NAN
    if p == 0:
        return -INF
    if p == 1:
        return INF
    with mp.workdps(120):
        p = mp.mpf(p)
        q = min(p, 1 - p)
        x0 = -mp.sqrt(-2 * mp.log(q)) if q < 0.3 else mp.mpf(0)
        x = mp.findroot(lambda t: mp.log(mp.ncdf(t)) - mp.log(q), x0)
        return x if p < 0.5 else -x


def ref_log_ndtr(x):
    if x > 0:  # log(1 - ndtr(-x)): log(ndtr(x)) would round to 0 at 100 digits beyond x = 21
        return mp.log1p(-mp.ncdf(-x))
    return mp.log(mp.ncdf(x))


def ref_i0e(x):
    if mp.isinf(x):
        return 0.0
    return mp.besseli(0, x) * mp.exp(-abs(x))


def ref_i1e(x):
    if mp.isinf(x):
        return 0.0 if x > 0 else -0.0
    return mp.besseli(1, x) * mp.exp(-abs(x))


# name: (arity, reference, jax function, {range: argument columns})
FUNCTIONS = {
    "erfc": (1, mp.erfc, lax.erfc, {"all": [uni(-6, 27) + [0.0, -0.0, INF, -INF, NAN]]}),
    "exp2": (1, lambda x: mp.power(2, x), jnp.exp2, {"all": [uni(-1070, 1020)]}),
    "log2": (1, lambda x: mp.log(x, 2), jnp.log2, {"all": [logu(1e-300, 1e300) + [1.0, 2.0, 0.5, 0.0, INF]]}),
    "log10": (1, mp.log10, jnp.log10, {"all": [logu(1e-300, 1e300) + [1.0, 10.0, 0.0, INF]]}),
    "asinh": (1, mp.asinh, jnp.arcsinh, {"all": [logu(1e-300, 1e300) + logu(1e-10, 1e10, sign=-1.0)]}),
    "acosh": (1, mp.acosh, jnp.arccosh, {"all": [[1 + v for v in logu(1e-15, 1)] + logu(2, 1e300) + [1.0, 0.5]]}),
    "atanh": (1, mp.atanh, jnp.arctanh, {"all": [uni(-1, 1) + logu(1e-300, 1e-3) + [1.0, -1.0, 2.0]]}),
    "lgamma": (1, ref_lgamma, lax.lgamma,
               {"positive": [logu(1e-300, 1e300) + [1.0, 2.0, 0.0]], "negative": [uni(-30, 0) + [-1.0, -2.0]]}),
    "digamma": (1, ref_digamma, lax.digamma,
                {"positive": [logu(1e-300, 1e300) + uni(0.9, 2.0) + [1.0, 1.4616321449683622, INF]],
                 "negative": [uni(-30, 0) + [0.0, -1.0, -2.0]]}),
    "bessel_i0e": (1, ref_i0e, lax.bessel_i0e, {"all": [logu(1e-10, 1e6) + logu(1e-5, 1e3, sign=-1.0) + [0.0, INF, -INF]]}),
    "bessel_i1e": (1, ref_i1e, lax.bessel_i1e, {"all": [logu(1e-10, 1e6) + logu(1e-5, 1e3, sign=-1.0) + [0.0, INF, -INF]]}),
    "ndtr": (1, mp.ncdf, jss.ndtr, {"all": [uni(-38, 9) + [0.0, INF, -INF]]}),
    "log_ndtr": (1, ref_log_ndtr, jss.log_ndtr,
                 {"all": [uni(-60, 12) + logu(40, 1e150, sign=-1.0) + logu(1, 40) + [0.0, INF, -INF]]}),
    "ndtri": (1, ref_ndtri, jss.ndtri, {"all": [uni(0, 1) + logu(1e-300, 0.3) + [0.5, 0.0, 1.0, 2.0]]}),
    "polygamma": (2, ref_polygamma, lax.polygamma,
                  {"all": [ints(0, 10), logu(1e-3, 1e4)], "negative": [ints(1, 6), uni(-10, 0)]}),
    "zeta": (2, ref_zeta, lax.zeta, {"all": [uni(1.001, 60), logu(1e-3, 1e4)]}),
    "igamma": (2, ref_igamma, lax.igamma,
               {"moderate": [logu(1e-3, 50), logu(1e-3, 100)], "large": [logu(50, 1e4), logu(10, 2e4)]}),
    "igammac": (2, ref_igammac, lax.igammac,
                {"moderate": [logu(1e-3, 50), logu(1e-3, 100)], "large": [logu(50, 1e4), logu(10, 2e4)]}),
    "igamma_grad_a": (2, ref_igamma_grad_a, lax.igamma_grad_a,
                      {"moderate": [logu(1e-2, 50, 60), logu(1e-2, 100, 60)]}),
    "random_gamma_grad": (2, ref_random_gamma_grad, lax.random_gamma_grad,
                          {"moderate": [logu(1e-2, 50, 60), logu(1e-2, 100, 60)]}),
    "betainc": (3, ref_betainc, lax.betainc,
                {"moderate": [logu(1e-2, 30), logu(1e-2, 30), uni(0, 1)],
                 "large": [logu(30, 3e3), logu(30, 3e3), uni(0, 1)]}),
}


def hexes(values, dtype):
    a = np.asarray(values, dtype=dtype)
    width = {np.float32: np.uint32, np.float64: np.uint64}[a.dtype.type]
    return [format(int(v), "x") for v in a.view(width).ravel()]


def reference(f, args, dtype):
    out = []
    for row in zip(*args):
        with mp.workdps(100):
            try:
                v = f(*[mp.mpf(float(a)) if not math.isnan(a) else NAN for a in row])
            except (ValueError, ZeroDivisionError):
                v = NAN
            if isinstance(v, mp.mpc):
                v = v.real if abs(v.imag) < 1e-90 else NAN
            v = float(v) if not isinstance(v, float) else v
        out.append(v)
    with np.errstate(over="ignore"):
        return np.asarray(out, dtype=np.float64).astype(dtype)


def main():
    out = {"jax_version": jax.__version__, "mpmath_version": mp.__version__, "functions": {}}
    for name, (arity, ref, jf, ranges) in FUNCTIONS.items():
        entry = {"arity": arity, "ranges": {}}
        for rname, cols in ranges.items():
            r = {}
            for dname, dtype in (("f32", np.float32), ("f64", np.float64)):
                args = [np.asarray(c, dtype=np.float64).astype(dtype) for c in cols]
                # NaN in a reference means mpmath found none (a pole or outside the domain)
                want = reference(ref, args, dtype)
                jax_out = np.asarray(jf(*[jnp.asarray(a) for a in args]), dtype=dtype)
                r[dname] = {"in": [hexes(a, dtype) for a in args], "want": hexes(want, dtype),
                            "jax": hexes(jax_out, dtype)}
            entry["ranges"][rname] = r
            print(name, rname, file=sys.stderr, flush=True)
        out["functions"][name] = entry
    with open("tests/special/special_values.json", "w") as f:
        json.dump(out, f, indent=0, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
