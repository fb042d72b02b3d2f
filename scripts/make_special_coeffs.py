#!/usr/bin/env python3
"""Prints the coefficients graft's special functions use
(interpreter/kernels/special_functions.h), computed here with mpmath at 50
digits, so that every constant there can be reproduced:

  - Chebyshev expansions of the scaled Bessel functions: i0e(x) and
    i1e(x)/x on [0, 8] in t = x/4 - 1, and sqrt(x) i0e(x), sqrt(x) i1e(x)
    on [8, inf) in t = 16/x - 1 (each smooth on its interval);
  - the Taylor coefficients of digamma about its positive root x0, and x0
    as a sum of two doubles;
  - B_2j / (2j)! for the Euler-Maclaurin tail of the Hurwitz zeta function;
  - the Chebyshev expansion of (1 + x) erfcx(x) = (1 + x) e^(x^2) erfc(x) on
    [0, inf) in t = 1 - 6 / (x + 3) (x = 3 (1 + t) / (1 - t)), which the
    vectorised f32 erfc, ndtr and log_ndtr evaluate (float_math_special.h).

Run with a Python that has mpmath: python3 scripts/make_special_coeffs.py
"""
import mpmath as mp

mp.mp.dps = 50


def chebyshev(f, n_nodes=96, tol=mp.mpf("1e-19")):
    """Coefficients c_k of f(t) = c_0/2 + sum c_k T_k(t) on [-1, 1]."""
    nodes = [mp.cos(mp.pi * (j + mp.mpf(1) / 2) / n_nodes) for j in range(n_nodes)]
    values = [f(t) for t in nodes]
    coeffs = []
    for k in range(n_nodes):
        c = 2 * mp.fsum(v * mp.cos(mp.pi * k * (j + mp.mpf(1) / 2) / n_nodes) for j, v in enumerate(values)) / n_nodes
        coeffs.append(c)
    # keep terms while they matter at double precision
    last = max(k for k, c in enumerate(coeffs) if abs(c) > tol)
    return coeffs[: last + 1]


def i0e(x):
    return mp.besseli(0, x) * mp.exp(-x)


def i1e(x):
    return mp.besseli(1, x) * mp.exp(-x)


def small(f):  # t in [-1, 1] -> x in [0, 8]
    return lambda t: f(4 * (t + 1))


def large(f):  # t in (-1, 1] -> x = 16 / (t + 1) in [8, inf)
    def g(t):
        if t + 1 < mp.mpf("1e-30"):
            return 1 / mp.sqrt(2 * mp.pi)
        x = 16 / (t + 1)
        return mp.sqrt(x) * f(x)
    return g


def i1e_over_x(x):
    return mp.mpf(1) / 2 if x == 0 else i1e(x) / x


def erfcx_mapped(t):  # t in [-1, 1] -> x = 3 (1 + t) / (1 - t) in [0, inf)
    if 1 - t < mp.mpf("1e-30"):
        return 1 / mp.sqrt(mp.pi)  # (1 + x) erfcx(x) -> 1 / sqrt(pi)
    x = 3 * (1 + t) / (1 - t)
    return (1 + x) * mp.exp(x * x) * mp.erfc(x)


def show(name, coeffs):
    print(f"// {name}: {len(coeffs)} terms, highest degree first")
    body = ", ".join(mp.nstr(c, 20, min_fixed=1, max_fixed=0) for c in reversed(coeffs))
    print(f"{{{body}}}")


show("i0e, x in [0, 8]", chebyshev(small(i0e)))
show("i1e / x, x in [0, 8]", chebyshev(small(i1e_over_x)))
show("sqrt(x) i0e, x >= 8", chebyshev(large(i0e)))
show("sqrt(x) i1e, x >= 8", chebyshev(large(i1e)))

x0 = mp.findroot(mp.digamma, 1.46)
hi = float(x0)
lo = float(x0 - hi)
print(f"// digamma's root x0 = {mp.nstr(x0, 30)} = hi + lo")
print(f"{{{hi!r}, {lo!r}}}")
taylor = [mp.polygamma(k, x0) / mp.factorial(k) for k in range(1, 40)]
show("digamma(x0 + h) = sum_k a_k h^k, k >= 1", taylor)

bern = [mp.bernoulli(2 * j) / mp.factorial(2 * j) for j in range(1, 14)]
print("// B_2j / (2j)!, j = 1...")
print("{" + ", ".join(mp.nstr(b, 20, min_fixed=1, max_fixed=0) for b in bern) + "}")

show("(1 + x) erfcx(x), x >= 0, in t = 1 - 6 / (x + 3)", chebyshev(erfcx_mapped, tol=mp.mpf("1e-18")))
