#!/usr/bin/env python3
"""Writes tests/dtypes/jax_dtype_values.json: JAX's answers for graft's
dtypes (tests/dtypes/dtypes_test.cpp must reproduce them).

    /work/venv-peers/bin/python scripts/make_dtype_values.py   # a venv with jax, ml_dtypes

Runs with jax_enable_x64 (the full lattice, every dtype real). Holds
  - the promotion table: jnp.promote_types over the 15 dtypes, and
    jax.dtypes.result_type with weak Python scalars (int, float, complex);
  - conversions to f16 and bf16 from f32, f64 and integers, and from the
    halves to integers (bit patterns);
  - elementwise ops and reductions in f16, bf16 and the small integers.
Floats are stored as bit patterns in hex (exact through JSON).
"""
import json
import sys

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import mpmath  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

NAMES = {
    "bool": jnp.bool_, "i8": jnp.int8, "i16": jnp.int16, "i32": jnp.int32, "i64": jnp.int64,
    "u8": jnp.uint8, "u16": jnp.uint16, "u32": jnp.uint32, "u64": jnp.uint64,
    "f16": jnp.float16, "bf16": jnp.bfloat16, "f32": jnp.float32, "f64": jnp.float64,
    "c64": jnp.complex64, "c128": jnp.complex128,
}
BY_DTYPE = {np.dtype(v): k for k, v in NAMES.items()}
WEAK = {"weak_int": 1, "weak_float": 1.0, "weak_complex": 1j}


def name(d):
    return BY_DTYPE[np.dtype(d)]


def enc(a):
    """Values as JSON: floats and halves as hex bit patterns, ints as numbers, bools as 0/1."""
    a = np.asarray(a)
    k = a.dtype.kind
    if a.dtype == jnp.bfloat16 or k == "f":
        w = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
        return [format(int(v), "x") for v in a.view(w).ravel()]
    if k == "c":
        return enc(np.stack([a.real, a.imag], -1))
    return [int(v) for v in a.ravel()]


def promotion():
    rows = list(NAMES) + list(WEAK)
    table = []
    for r in rows:
        row = []
        for c in rows:
            a = NAMES[r] if r in NAMES else WEAK[r]
            b = NAMES[c] if c in NAMES else WEAK[c]
            d, weak = jax.dtypes.result_type(a, b, return_weak_type_flag=True)
            row.append(name(d) + ("*" if weak else ""))
        table.append(row)
    return {"order": rows, "table": table}


def conversions():
    rng = np.random.default_rng(7)
    f32 = np.concatenate([
        np.array([0.0, -0.0, 1.0, -1.0, 65504.0, 65519.99, 65520.0, 65536.0, 1e-8, 5.96e-8, 2.98e-8, 2.9802322e-08,
                  6.1e-5, 3.0e38, 3.4e38, -3.4e38, np.inf, -np.inf, np.nan, 1.00048828125, 1.0014648, 0.1, 1 / 3],
                 np.float32),
        rng.standard_normal(40).astype(np.float32) * np.float32(100),
        (rng.standard_normal(20) * 1e-5).astype(np.float32),
        np.frombuffer(rng.integers(0, 2**32, 40, dtype=np.uint32).tobytes(), np.float32),
    ])
    f64 = np.concatenate([
        np.array([1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-11, 1 + 2.0**-8 + 2.0**-40, 1 + 2.0**-8, 1 - 2.0**-60, 65519.999999,
                  1e300, -1e300, 1e-300, np.nan, 3.3e38, 3.3961e38, 3.40282356e38], np.float64),
        rng.standard_normal(40) * 1000,
    ])
    i64 = np.array([0, 1, -1, 2049, 2051, 65504, 65519, 65520, 70000, 2**24 + 1, 2**24 + 3, 2**31 - 1, -2**31,
                    2**53 + 1, 2**62 + 2**54 + 1, -2**63, 2**63 - 1], np.int64)
    u64 = np.array([0, 1, 2**63, 2**64 - 1, 2**40 + 2**32 + 1, 2**24 + 2**16 + 1], np.uint64)
    out = []
    for src, vals in [("f32", f32), ("f64", f64), ("i64", i64), ("u64", u64), ("i32", i64[:13].astype(np.int32))]:
        for dst in ["f16", "bf16"]:
            y = np.asarray(lax.convert_element_type(jnp.asarray(vals), NAMES[dst]))
            out.append({"from": src, "to": dst, "x": enc(vals), "y": enc(y)})
    halves = np.array([0.0, -0.5, 1.5, 2.5, -2.5, 127.5, 128.0, 255.9, 256.0, 300.0, -129.0, 40000.0, 65504.0,
                       -65504.0, np.inf, -np.inf, np.nan], np.float32)
    for src in ["f16", "bf16"]:
        x = jnp.asarray(halves, NAMES[src])
        for dst in ["bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64"]:
            y = np.asarray(lax.convert_element_type(x, NAMES[dst]))
            out.append({"from": src, "to": dst, "x": enc(np.asarray(x)), "y": enc(y)})
    return out


def elementwise():
    rng = np.random.default_rng(11)
    out = []
    base = np.concatenate([rng.standard_normal(24) * 3, [0.0, -0.0, 1.0, 0.5, 1e-3, 60000.0, -7.25]]).astype(np.float32)
    pos = np.abs(base) + np.float32(0.01)
    unary = {"neg": jnp.negative, "exp": jnp.exp, "log": jnp.log, "sin": jnp.sin, "tanh": jnp.tanh,
             "sqrt": jnp.sqrt, "logistic": jax.nn.sigmoid, "floor": jnp.floor, "abs": jnp.abs, "erf": jax.scipy.special.erf}
    for d in ["f16", "bf16"]:
        for op, f in unary.items():
            x = jnp.asarray(pos if op in ("log", "sqrt") else base, NAMES[d])
            out.append({"op": op, "dtype": d, "args": [enc(x)], "y": enc(f(x))})
        x, y = jnp.asarray(base, NAMES[d]), jnp.asarray(base[::-1].copy(), NAMES[d])
        for op, f in {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": jnp.divide,
                      "max": jnp.maximum, "pow": lambda a, b: jnp.power(jnp.abs(a), b), "atan2": jnp.arctan2,
                      "lt": jnp.less, "eq": jnp.equal}.items():
            out.append({"op": op, "dtype": d, "args": [enc(x), enc(y)], "y": enc(f(x, y))})
    for d in ["i8", "i16", "u8", "u16", "u64"]:
        info = np.iinfo(NAMES[d])
        vals = np.concatenate([[info.min, info.max, 0, 1, 2, 3, info.max - 1, 7], rng.integers(info.min, info.max, 16,
                                                                                             dtype=np.int64 if d != "u64" else np.uint64, endpoint=True)])
        x = jnp.asarray(vals.astype(NAMES[d]))
        y = jnp.asarray(vals[::-1].astype(NAMES[d]))
        s = jnp.asarray((np.arange(len(vals)) % (8 * np.dtype(NAMES[d]).itemsize + 3)).astype(NAMES[d]))
        for op, f, args in [("add", jnp.add, [x, y]), ("sub", jnp.subtract, [x, y]), ("mul", jnp.multiply, [x, y]),
                            ("floor_divide", jnp.floor_divide, [x, y]), ("remainder", jnp.remainder, [x, y]),
                            ("max", jnp.maximum, [x, y]), ("left_shift", jnp.left_shift, [x, s]),
                            ("right_shift", jnp.right_shift, [x, s]),
                            ("population_count", lax.population_count, [x]), ("clz", lax.clz, [x]),
                            ("not", lax.bitwise_not, [x]), ("neg", lax.neg, [x]), ("lt", jnp.less, [x, y])]:
            if op == "neg" and d.startswith("u"):
                continue
            out.append({"op": op, "dtype": d, "args": [enc(a) for a in args], "y": enc(f(*args))})
    return out


def reductions():
    rng = np.random.default_rng(5)
    out = []
    for d in ["f16", "bf16"]:
        for n in [7, 1000, 4099]:
            x = jnp.asarray(rng.standard_normal(n).astype(np.float32) + np.float32(0.3), NAMES[d])
            out.append({"op": "sum", "dtype": d, "x": enc(x), "y": enc(jnp.sum(x)), "max": enc(jnp.max(x))})
    for d in ["i8", "u8", "i16", "u16", "u64"]:
        x = jnp.asarray(rng.integers(0, 100, 300).astype(NAMES[d]))
        out.append({"op": "sum", "dtype": d, "x": enc(x), "y": enc(jnp.sum(x, dtype=NAMES[d])),
                    "max": enc(jnp.max(x))})
    return out


# The unary complex ops in 100-digit arithmetic (mpmath), rounded once: the
# reference where XLA's own complex functions lose digits (sinh near 0).
EXACT = {
    "exp": mpmath.exp, "log": mpmath.log, "log1p": lambda z: mpmath.log(1 + z), "expm1": mpmath.expm1,
    "sqrt": mpmath.sqrt, "rsqrt": lambda z: 1 / mpmath.sqrt(z), "sin": mpmath.sin, "cos": mpmath.cos,
    "tan": mpmath.tan, "sinh": mpmath.sinh, "cosh": mpmath.cosh, "tanh": mpmath.tanh, "asin": mpmath.asin,
    "acos": mpmath.acos, "atan": mpmath.atan, "asinh": mpmath.asinh, "acosh": mpmath.acosh, "atanh": mpmath.atanh,
    "logistic": lambda z: 1 / (1 + mpmath.exp(-z)), "square": lambda z: z * z, "reciprocal": lambda z: 1 / z,
    "neg": lambda z: -z, "sign": lambda z: z / abs(z) if z != 0 else z, "abs": abs, "real": lambda z: z.real,
    "imag": lambda z: z.imag, "conj": mpmath.conj, "angle": mpmath.arg,
}


def complex_cases():
    mpmath.mp.dps = 100
    """Complex ops, reductions, products and derivatives, c64 and c128."""
    rng = np.random.default_rng(13)
    out = {"unary": [], "binary": [], "reduce": [], "matmul": [], "grad": []}
    z0 = (rng.standard_normal(20) + 1j * rng.standard_normal(20)) * 1.5
    z0 = np.concatenate([z0, [0j, 1e-4 + 2e-4j, -3 + 0j, 0.5j, 2 - 1e-3j]])
    w0 = (rng.standard_normal(len(z0)) + 1j * rng.standard_normal(len(z0)))
    unary = {"exp": jnp.exp, "log": jnp.log, "log1p": jnp.log1p, "expm1": jnp.expm1, "sqrt": jnp.sqrt,
             "rsqrt": lax.rsqrt, "sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan, "sinh": jnp.sinh, "cosh": jnp.cosh,
             "tanh": jnp.tanh, "asin": jnp.arcsin, "acos": jnp.arccos, "atan": jnp.arctan, "asinh": jnp.arcsinh,
             "acosh": jnp.arccosh, "atanh": jnp.arctanh, "logistic": jax.nn.sigmoid, "square": jnp.square,
             "reciprocal": jnp.reciprocal, "neg": jnp.negative, "sign": jnp.sign, "abs": jnp.abs, "real": jnp.real,
             "imag": jnp.imag, "conj": jnp.conj, "angle": jnp.angle}
    for d in ["c64", "c128"]:
        z = jnp.asarray(z0, NAMES[d])
        w = jnp.asarray(w0, NAMES[d])
        for op, f in unary.items():
            if op in ("log", "rsqrt", "reciprocal", "angle", "sign"):
                x = jnp.where(z == 0, 1 + 1j, z).astype(NAMES[d])
            else:
                x = z
            y = f(x)
            exact = np.array([complex(EXACT[op](mpmath.mpc(v.real, v.imag))) for v in np.asarray(x, np.complex128)])
            exact = exact.astype(np.asarray(y).dtype) if np.iscomplexobj(np.asarray(y)) else exact.real.astype(y.dtype)
            out["unary"].append({"op": op, "dtype": d, "x": enc(x), "y": enc(y), "ydtype": name(y.dtype),
                                 "exact": enc(exact)})
        for op, f in {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": jnp.divide,
                      "eq": jnp.equal, "ne": jnp.not_equal}.items():
            y = f(z, w)
            out["binary"].append({"op": op, "dtype": d, "x": enc(z), "w": enc(w), "y": enc(y), "ydtype": name(y.dtype)})
        m = jnp.asarray(z0[:20].reshape(4, 5), NAMES[d])
        out["reduce"].append({"dtype": d, "x": enc(m), "sum": enc(jnp.sum(m, axis=1)), "mean": enc(jnp.mean(m)),
                              "cumsum": enc(jnp.cumsum(m, axis=0)), "var": enc(jnp.var(m, axis=1)),
                              "prod": enc(jnp.prod(m, axis=1))})
        a = jnp.asarray(rng.standard_normal((6, 7)) + 1j * rng.standard_normal((6, 7)), NAMES[d])
        b = jnp.asarray(rng.standard_normal((7, 5)) + 1j * rng.standard_normal((7, 5)), NAMES[d])
        out["matmul"].append({"dtype": d, "a": enc(a), "b": enc(b), "y": enc(a @ b)})
        # grad of real-valued functions of complex inputs, JAX's convention (the conjugate of df/dz, twice).
        c = jnp.asarray(w0[:6], NAMES[d])
        zz = jnp.asarray(z0[:6], NAMES[d])
        fns = {
            "abs2": lambda z: jnp.sum(jnp.abs(z) ** 2),
            "abs": lambda z: jnp.sum(jnp.abs(z)),
            "real_cz": lambda z: jnp.sum(jnp.real(c * z * z)),
            "imag_exp": lambda z: jnp.sum(jnp.imag(jnp.exp(z) * jnp.conj(z))),
            "angle": lambda z: jnp.sum(jnp.angle(z)),
            "log_abs_sin": lambda z: jnp.sum(jnp.log(jnp.abs(jnp.sin(z)))),
            "mean_matmul": lambda z: jnp.real(jnp.mean(jnp.outer(z, c) @ jnp.conj(z))),
        }
        for fname, f in fns.items():
            out["grad"].append({"f": fname, "dtype": d, "z": enc(zz), "c": enc(c), "value": enc(f(zz)),
                                "grad": enc(jax.grad(f)(zz))})
        # complex(x, y) from real parts, differentiated in the parts.
        xr = jnp.asarray(z0[:6].real, NAMES["f32" if d == "c64" else "f64"])
        yr = jnp.asarray(z0[:6].imag, NAMES["f32" if d == "c64" else "f64"])
        g = jax.grad(lambda x, y: jnp.sum(jnp.abs(lax.complex(x, y) * c) ** 2 + jnp.real(jnp.exp(lax.complex(x, y)))),
                     argnums=(0, 1))(xr, yr)
        out["grad"].append({"f": "parts", "dtype": d, "z": enc(lax.complex(xr, yr)), "c": enc(c),
                            "grad": enc(g[0]), "grad_y": enc(g[1])})
    return out


def fft_cases():
    """jnp.fft's functions and their gradients (f32/c64 and f64/c128)."""
    rng = np.random.default_rng(17)
    out = []
    for real_name, cplx_name in [("f32", "c64"), ("f64", "c128")]:
        R, C = NAMES[real_name], NAMES[cplx_name]

        def add(fn_name, fn, x, **kw):
            y = fn(x)
            out.append({"fn": fn_name, "dtype": name_of(x), "shape": list(x.shape), "x": enc(x), "y": enc(y),
                        "yshape": list(y.shape), "ydtype": name(y.dtype), **kw})

        def name_of(x):
            return name(x.dtype)

        for n in [8, 12, 7]:
            z = jnp.asarray(rng.standard_normal(n) + 1j * rng.standard_normal(n), C)
            add("fft", jnp.fft.fft, z)
            add("ifft", jnp.fft.ifft, z)
        for n in [16, 15]:
            r = jnp.asarray(rng.standard_normal(n), R)
            add("rfft", jnp.fft.rfft, r)
            h = jnp.fft.rfft(r)
            add("irfft", lambda v, n=n: jnp.fft.irfft(v, n), h, n=n)
        m = jnp.asarray(rng.standard_normal((4, 6)), R)
        add("fft2", jnp.fft.fft2, m)
        add("rfft2", jnp.fft.rfft2, m)
        add("irfft2", lambda v: jnp.fft.irfft2(v, (4, 6)), jnp.fft.rfft2(m))
        t = jnp.asarray(rng.standard_normal((2, 3, 5)) + 1j * rng.standard_normal((2, 3, 5)), C)
        add("fftn", jnp.fft.fftn, t)
        add("ifftn_ortho", lambda v: jnp.fft.ifftn(v, norm="ortho"), t)
        add("fft_forward_n10", lambda v: jnp.fft.fft(v, n=10, axis=1, norm="forward"), t)
        add("rfftn_axes02", lambda v: jnp.fft.rfftn(v, axes=(0, 2)), jnp.real(t).astype(R))
        # gradients
        x = jnp.asarray(rng.standard_normal(10), R)
        z = jnp.asarray(rng.standard_normal(6) + 1j * rng.standard_normal(6), C)
        c = jnp.asarray(rng.standard_normal(6) + 1j * rng.standard_normal(6), C)
        grads = {
            "rfft_power": (lambda a: jnp.sum(jnp.abs(jnp.fft.rfft(a)) ** 2), x),
            "fft_real": (lambda a: jnp.sum(jnp.real(jnp.fft.fft(a) * c)), z),
            "ifft_abs": (lambda a: jnp.sum(jnp.abs(jnp.fft.ifft(a))), z),
            "irfft_weighted": (lambda a: jnp.sum(jnp.fft.irfft(a, 10) * jnp.arange(10.0, dtype=R)), z),
            "irfft_odd": (lambda a: jnp.sum(jnp.sin(jnp.fft.irfft(a, 11))), z),
            "rfft2_energy": (lambda a: jnp.sum(jnp.abs(jnp.fft.rfft2(a.reshape(2, 5))) ** 3), x),
        }
        for gname, (f, a) in grads.items():
            out.append({"fn": "grad_" + gname, "dtype": name(a.dtype), "shape": list(a.shape), "x": enc(a),
                        "c": enc(c), "y": enc(jax.grad(f)(a)), "value": enc(f(a))})
    out.append({"fn": "fftfreq", "y": enc(jnp.fft.fftfreq(7, 0.5)), "y8": enc(jnp.fft.fftfreq(8)),
                "rfft7": enc(jnp.fft.rfftfreq(7, 0.5)), "shift": enc(jnp.fft.fftshift(jnp.arange(7.0))),
                "ishift": enc(jnp.fft.ifftshift(jnp.arange(6.0)))})
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "tests/dtypes/jax_dtype_values.json"
    data = {"jax_version": jax.__version__, "ml_dtypes_version": ml_dtypes.__version__,
            "promotion": promotion(), "convert": conversions(), "elementwise": elementwise(),
            "reductions": reductions(), "complex": complex_cases(), "fft": fft_cases()}
    with open(path, "w") as f:
        json.dump(data, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
