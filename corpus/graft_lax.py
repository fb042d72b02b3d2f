"""graft's ops in jax.lax: an interpreter of graft graph JSON (corpus/README.md)
with graft's documented semantics (docs/OPS.md).

    run_graph(graph, inputs, wide) -> outputs

`graph` is the "graph" object of a graph.json; `inputs` are arrays in the
graph's dtypes; with wide=True, f32 and c64 values compute in f64 and c128
(how the corpus's answers are made). scripts/make_corpus.py writes the
corpus with it and corpus/run_jax.py checks the corpus against JAX with it;
another implementation can read it as executable documentation of what each
op computes. Needs jax and numpy.
"""
import ml_dtypes
import numpy as np

import jax
import jax.ad_checkpoint  # noqa: F401 (checkpoint_name)
import jax.extend.random as jax_random_ext  # noqa: F401
import jax.scipy.special  # noqa: F401 (ndtr, log_ndtr, ndtri)
import jax._src.lax.linalg as jax_linalg  # geqrf (jax.lax.linalg does not export it)
import jax._src.lax.windowed_reductions as jax_windows  # select_and_gather_add, select_and_scatter_add
import jax.numpy as jnp
from jax import lax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

# bf16 is ml_dtypes' bfloat16 (JAX's jnp.bfloat16), which np.save writes as 2-byte void records ("<V2").
DTYPES = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
          "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
          "f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}
NAMES = {np.dtype(v): k for k, v in DTYPES.items()}
FLOATS = ("f16", "bf16", "f32", "f64")
UNSIGNED = ("u8", "u16", "u32", "u64")
# The values jvp and vjp answers are given for: floats and complex numbers.
INEXACT = FLOATS + ("c64", "c128")
WIDE = {"f16": np.float64, "bf16": np.float64, "f32": np.float64, "c64": np.complex128}


def np_dtype(name, wide):
    """The NumPy dtype JAX computes a graft dtype in (f16, bf16 and f32 widened to f64, c64 to c128, for the
    answers)."""
    return WIDE[name] if (wide and name in WIDE) else DTYPES[name]


def load_npy(path):
    """An .npy file of the corpus, 2-byte void records read as bf16 (how NumPy stores ml_dtypes' bfloat16)."""
    a = np.load(path)
    return a.view(ml_dtypes.bfloat16) if a.dtype == np.dtype("V2") else a


def widen(x):
    """x as the answers compute it: floats in f64, complex numbers in c128, integers and bools as they are."""
    x = np.asarray(x)
    if np.iscomplexobj(x):
        return x.astype(np.complex128)
    return x.astype(np.float64) if (x.dtype.kind == "f" or x.dtype == DTYPES["bf16"]) else x


@jax.custom_jvp
def f16_of_f64(x):
    """f64 to f16 rounded once, on every CPU. (XLA rounds once where the CPU has AVX512-FP16, elsewhere through f32,
    twice: 1 + 2^-11 + 2^-40 gives 1 there, not 1 + 2^-10.) The f32 rounded to odd (toward zero, its last bit set
    when that dropped anything) rounds to f16 as the f64 would."""
    f = x.astype(np.float32)
    back = f.astype(np.float64)
    u = lax.bitcast_convert_type(f, np.uint32)
    u = jnp.where(jnp.abs(back) > jnp.abs(x), u - np.uint32(1), u)
    u = jnp.where((back != x) & jnp.isfinite(f), u | np.uint32(1), u)
    return lax.bitcast_convert_type(u, np.float32).astype(np.float16)


@f16_of_f64.defjvp
def _f16_of_f64_jvp(primals, tangents):
    return f16_of_f64(primals[0]), tangents[0].astype(np.float16)


def convert(ins, attrs, node, wide):
    """convert_element_type; widened, a conversion to a narrow float still rounds as that type does (and the
    result is widened again), so the answers hold the narrow type's exact values."""
    to, x = attr(attrs, "new_dtype"), ins[0]
    out = f16_of_f64(x) if (to == "f16" and x.dtype == np.float64) else x.astype(DTYPES[to])
    return out.astype(WIDE[to]) if (wide and to in WIDE) else out


# ---- attributes in graft's JSON encoding

def attr(attrs, name):
    (kind, value), = attrs[name].items()
    return value


def I(v):
    return {"int": int(v)}


def Is(v):
    return {"ints": [int(x) for x in v]}


def D(name):
    return {"dtype": name}


def S(v):
    return {"string": v}


def Gs(*graphs):
    return {"graphs": list(graphs)}


def literal(a):
    a = np.array(a, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
    return {"literal": {"dtype": NAMES[a.dtype], "shape": list(a.shape), "data": a.tobytes().hex()}}


# ---- graft's ops in JAX

def run_graph(g, args, wide):
    env = {}
    for spec, a in zip(g["inputs"], args):
        env[spec["id"]] = a
    for n in g["nodes"]:
        outs = OPS[n["op"]]([env[i] for i in n["inputs"]], n.get("attrs", {}), n, wide)
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        for spec, o in zip(n["outputs"], outs):
            env[spec["id"]] = o
    return [env[i] for i in g["outputs"]]


def unary(f):
    return lambda ins, attrs, node, wide: f(ins[0])


def binary(f):
    return lambda ins, attrs, node, wide: f(ins[0], ins[1])


def reduce(f):
    def op(ins, attrs, node, wide):
        x = ins[0]
        return f(x, axis=tuple(attr(attrs, "axes"))).astype(x.dtype)
    return op


def cumulative(f):
    def op(ins, attrs, node, wide):
        return f(ins[0], axis=attr(attrs, "axis"), reverse=bool(attr(attrs, "reverse")))
    return op


def arg(f):
    def op(ins, attrs, node, wide):
        return f(ins[0], axis=attr(attrs, "axis")).astype(DTYPES[attr(attrs, "index_dtype")])
    return op


def gather(ins, attrs, node, wide):
    x, idx = ins
    axis, b = attr(attrs, "axis"), attr(attrs, "batch_dims")

    def take(x, idx):  # out-of-range indices are clamped
        return jnp.take(x, jnp.clip(idx, 0, x.shape[axis - b] - 1), axis=axis - b)
    for _ in range(b):
        take = jax.vmap(take)
    return take(x, idx)


def window_attrs(attrs):
    """A windowed node's attributes as jax.lax's reduce_window takes them."""
    return (tuple(attr(attrs, "window_dimensions")), tuple(attr(attrs, "window_strides")),
            tuple(zip(attr(attrs, "padding_low"), attr(attrs, "padding_high"))),
            tuple(attr(attrs, "base_dilation")), tuple(attr(attrs, "window_dilation")))


def reduce_window(x, attrs, fn, init):
    """lax.reduce_window from the reduction's identity in x's dtype."""
    if init in ("max", "min"):
        big = np.inf if jnp.issubdtype(x.dtype, jnp.floating) else np.iinfo(x.dtype).max
        init = -big if init == "max" else big
        if not jnp.issubdtype(x.dtype, jnp.floating) and init < 0:
            init = np.iinfo(x.dtype).min
    return lax.reduce_window(x, np.array(init, x.dtype), fn, *window_attrs(attrs))


def svd(ins, attrs, node, wide):
    """graft's svd outputs (s, u, vt), as JAX's svd_p; lax.linalg.svd returns (u, s, vt)."""
    if not attr(attrs, "compute_uv"):
        return lax.linalg.svd(ins[0], full_matrices=False, compute_uv=False)
    u, s, vt = lax.linalg.svd(ins[0], full_matrices=bool(attr(attrs, "full_matrices")), compute_uv=True)
    return [s, u, vt]


def scatter_add(ins, attrs, node, wide):
    x, idx, upd = ins
    axis, b = attr(attrs, "axis"), attr(attrs, "batch_dims")

    def add(x, idx, upd):  # out-of-range indices (negative ones too) are dropped
        a = axis - b
        size = x.shape[a]
        idx = jnp.where((idx < 0) | (idx >= size), size, idx)
        return x.at[(slice(None),) * a + (idx,)].add(upd, mode="drop")
    for _ in range(b):
        add = jax.vmap(add)
    return add(x, idx, upd)


def constant(ins, attrs, node, wide):
    lit = attr(attrs, "value")
    a = np.frombuffer(bytes.fromhex(lit["data"]), dtype=DTYPES[lit["dtype"]]).reshape(lit["shape"])
    return jnp.asarray(a.astype(np_dtype(lit["dtype"], wide)))


def cond(ins, attrs, node, wide):
    branches = [lambda *a, g=g: tuple(run_graph(g, list(a), wide)) for g in attr(attrs, "branches")]
    index, args = ins[0], ins[1:]
    if index.dtype == jnp.bool_:
        return list(lax.cond(index, branches[1], branches[0], *args))
    return list(lax.switch(jnp.clip(index, 0, len(branches) - 1), branches, *args))


def while_(ins, attrs, node, wide):
    cn, bn = attr(attrs, "cond_nconsts"), attr(attrs, "body_nconsts")
    cconsts, bconsts, init = ins[:cn], ins[cn:cn + bn], ins[cn + bn:]
    cg, bg = attr(attrs, "cond")[0], attr(attrs, "body")[0]
    return list(lax.while_loop(lambda c: run_graph(cg, list(cconsts) + list(c), wide)[0],
                               lambda c: tuple(run_graph(bg, list(bconsts) + list(c), wide)), tuple(init)))


def scan(ins, attrs, node, wide):
    nc, nk = attr(attrs, "num_consts"), attr(attrs, "num_carry")
    consts, init, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]
    body = attr(attrs, "body")[0]

    def step(carry, x):
        out = run_graph(body, list(consts) + list(carry) + list(x), wide)
        return tuple(out[:nk]), tuple(out[nk:])
    carry, ys = lax.scan(step, tuple(init), tuple(xs), length=attr(attrs, "length"), reverse=bool(attr(attrs, "reverse")))
    return list(carry) + list(ys)


def random_bits(ins, attrs, node, wide):
    # graft's documented layout (docs/API.md): words 2c and 2c+1 are the two
    # outputs of threefry-2x32 on the counter c = (high, low word); the
    # cipher is JAX's own. (jax.random.bits lays counters out differently.)
    shape = tuple(attr(attrs, "shape"))
    n = int(np.prod(shape))
    pairs = (n + 1) // 2
    c = np.arange(pairs, dtype=np.uint64)
    count = jnp.concatenate([jnp.asarray((c >> 32).astype(np.uint32)), jnp.asarray(c.astype(np.uint32))])
    out = jax_random_ext.threefry_2x32(ins[0], count).reshape(2, pairs)
    return jnp.stack([out[0], out[1]], axis=1).reshape(-1)[:n].reshape(shape)


def select(pred, on_true, on_false):
    """graft's select takes a bool predicate only (lax.select_n would also take an int32 case index)."""
    if pred.dtype != np.bool_:
        raise TypeError("select: the predicate must be bool, not %s" % pred.dtype)
    return lax.select(pred, on_true, on_false)


def clamp_starts(x_shape, sizes, starts):
    # graft's dynamic_slice primitive clamps each start into [0, dim - size], as
    # JAX's primitive does; lax.dynamic_slice would first wrap a negative start
    # Python-style, so the starts are clamped here before it sees them.
    return [jnp.clip(s, 0, d - k) for s, d, k in zip(starts, x_shape, sizes)]


OPS = {
    "neg": unary(lambda x: -x), "abs": unary(jnp.abs), "sign": unary(jnp.sign), "floor": unary(jnp.floor),
    "ceil": unary(jnp.ceil), "round": unary(jnp.round), "exp": unary(jnp.exp), "log": unary(jnp.log),
    "log1p": unary(jnp.log1p), "expm1": unary(jnp.expm1), "sqrt": unary(jnp.sqrt), "rsqrt": unary(lax.rsqrt),
    "sin": unary(jnp.sin), "cos": unary(jnp.cos), "tan": unary(jnp.tan), "asin": unary(jnp.arcsin),
    "acos": unary(jnp.arccos), "atan": unary(jnp.arctan), "sinh": unary(jnp.sinh), "cosh": unary(jnp.cosh),
    "tanh": unary(jnp.tanh), "logistic": unary(lax.logistic), "erf": unary(lax.erf), "erf_inv": unary(lax.erf_inv), "cbrt": unary(lax.cbrt), "square": unary(lambda x: x * x),
    "reciprocal": unary(lambda x: 1 / x), "is_finite": unary(jnp.isfinite), "not": unary(jnp.invert),
    "stop_gradient": unary(lax.stop_gradient), "copy": unary(lambda x: x),
    "add": binary(lax.add), "sub": binary(lax.sub), "mul": binary(lax.mul), "div": binary(lax.div),
    "rem": binary(lax.rem), "pow": binary(lambda x, y: lax.pow(x, y) if jnp.issubdtype(x.dtype, jnp.floating) else jnp.power(x, y)),
    "max": binary(lax.max), "min": binary(lax.min), "atan2": binary(lax.atan2), "and": binary(lax.bitwise_and),
    "shift_left": binary(lax.shift_left), "shift_right_arithmetic": binary(lax.shift_right_arithmetic),
    "shift_right_logical": binary(lax.shift_right_logical), "population_count": unary(lax.population_count),
    "clz": unary(lax.clz),
    "erfc": unary(lax.erfc), "exp2": unary(jnp.exp2), "log2": unary(jnp.log2), "log10": unary(jnp.log10),
    "asinh": unary(jnp.arcsinh), "acosh": unary(jnp.arccosh), "atanh": unary(jnp.arctanh), "trunc": unary(jnp.trunc),
    "nextafter": binary(jnp.nextafter), "lgamma": unary(lax.lgamma), "digamma": unary(lax.digamma),
    "bessel_i0e": unary(lax.bessel_i0e), "bessel_i1e": unary(lax.bessel_i1e), "ndtr": unary(jax.scipy.special.ndtr),
    "log_ndtr": unary(jax.scipy.special.log_ndtr), "ndtri": unary(jax.scipy.special.ndtri),
    "igamma": binary(lax.igamma), "igammac": binary(lax.igammac), "igamma_grad_a": binary(lax.igamma_grad_a),
    "random_gamma_grad": binary(lax.random_gamma_grad), "polygamma": binary(lax.polygamma), "zeta": binary(lax.zeta),
    "betainc": lambda ins, attrs, node, wide: lax.betainc(*ins),
    "top_k": lambda ins, attrs, node, wide: list(lax.top_k(ins[0], attr(attrs, "k"))),
    "or": binary(lax.bitwise_or), "xor": binary(lax.bitwise_xor), "eq": binary(lax.eq), "ne": binary(lax.ne),
    "lt": binary(lax.lt), "le": binary(lax.le), "gt": binary(lax.gt), "ge": binary(lax.ge),
    "select": lambda ins, attrs, node, wide: select(*ins),
    "convert_element_type": convert,
    # lax's reductions: an empty axis gives the identity (jnp.max refuses it)
    "reduce_sum": reduce(jnp.sum), "reduce_max": reduce(lambda x, axis: lax.reduce_max(x, axis)),
    "reduce_min": reduce(lambda x, axis: lax.reduce_min(x, axis)),
    "reduce_prod": reduce(jnp.prod), "reduce_and": reduce(lambda x, axis: lax.reduce_and(x, axis)),  # logical on bool, bitwise on integers
    "reduce_or": reduce(lambda x, axis: lax.reduce_or(x, axis)),
    "argmax": arg(jnp.argmax), "argmin": arg(jnp.argmin),
    "cumsum": cumulative(lax.cumsum), "cumprod": cumulative(lax.cumprod), "cummax": cumulative(lax.cummax),
    "cummin": cumulative(lax.cummin),
    "broadcast_in_dim": lambda ins, attrs, node, wide: lax.broadcast_in_dim(
        ins[0], tuple(attr(attrs, "shape")), tuple(attr(attrs, "broadcast_dimensions"))),
    "reshape": lambda ins, attrs, node, wide: jnp.reshape(ins[0], tuple(attr(attrs, "new_sizes"))),
    "transpose": lambda ins, attrs, node, wide: jnp.transpose(ins[0], attr(attrs, "permutation")),
    "rev": lambda ins, attrs, node, wide: lax.rev(ins[0], tuple(attr(attrs, "dimensions"))),
    "slice": lambda ins, attrs, node, wide: lax.slice(ins[0], attr(attrs, "start_indices"), attr(attrs, "limit_indices"),
                                                      attr(attrs, "strides")),
    "concatenate": lambda ins, attrs, node, wide: lax.concatenate(ins, attr(attrs, "dimension")),
    "pad": lambda ins, attrs, node, wide: lax.pad(ins[0], ins[1], list(zip(
        attr(attrs, "padding_low"), attr(attrs, "padding_high"), attr(attrs, "padding_interior")))),
    "dynamic_slice": lambda ins, attrs, node, wide: lax.dynamic_slice(
        ins[0], clamp_starts(ins[0].shape, attr(attrs, "slice_sizes"), ins[1:]), attr(attrs, "slice_sizes")),
    "dynamic_update_slice": lambda ins, attrs, node, wide: lax.dynamic_update_slice(
        ins[0], ins[1], clamp_starts(ins[0].shape, ins[1].shape, ins[2:])),
    "gather": gather, "scatter_add": scatter_add,
    "sort": lambda ins, attrs, node, wide: list(lax.sort(tuple(ins), dimension=attr(attrs, "dimension"),
                                                         is_stable=bool(attr(attrs, "is_stable")),
                                                         num_keys=attr(attrs, "num_keys"))),
    "iota": lambda ins, attrs, node, wide: lax.broadcasted_iota(np_dtype(attr(attrs, "dtype"), wide),
                                                               tuple(attr(attrs, "shape")), attr(attrs, "dimension")),
    "constant": constant,
    "dot_general": lambda ins, attrs, node, wide: lax.dot_general(
        ins[0], ins[1], ((attr(attrs, "lhs_contracting"), attr(attrs, "rhs_contracting")),
                         (attr(attrs, "lhs_batch"), attr(attrs, "rhs_batch"))),
        precision=lax.Precision.HIGHEST, preferred_element_type=ins[0].dtype),
    "cholesky": lambda ins, attrs, node, wide: lax.linalg.cholesky(ins[0], symmetrize_input=False),
    "triangular_solve": lambda ins, attrs, node, wide: lax.linalg.triangular_solve(
        ins[0], ins[1], left_side=bool(attr(attrs, "left_side")), lower=bool(attr(attrs, "lower")),
        transpose_a=bool(attr(attrs, "transpose_a")), conjugate_a=bool(attr(attrs, "conjugate_a")) if "conjugate_a" in attrs else False,
        unit_diagonal=bool(attr(attrs, "unit_diagonal"))),
    "lu": lambda ins, attrs, node, wide: list(lax.linalg.lu(ins[0])),
    "qr": lambda ins, attrs, node, wide: list(lax.linalg.qr(ins[0], full_matrices=bool(attr(attrs, "full_matrices")))),
    "geqrf": lambda ins, attrs, node, wide: list(jax_linalg.geqrf(ins[0])),
    "householder_product": lambda ins, attrs, node, wide: lax.linalg.householder_product(ins[0], ins[1]),
    "svd": svd,
    "eigh": lambda ins, attrs, node, wide: list(lax.linalg.eigh(ins[0], lower=bool(attr(attrs, "lower")),
                                                                symmetrize_input=False)),
    "conv_general_dilated": lambda ins, attrs, node, wide: lax.conv_general_dilated(
        ins[0], ins[1], window_strides=tuple(attr(attrs, "window_strides")),
        padding=list(zip(attr(attrs, "padding_low"), attr(attrs, "padding_high"))),
        lhs_dilation=tuple(attr(attrs, "lhs_dilation")), rhs_dilation=tuple(attr(attrs, "rhs_dilation")),
        dimension_numbers=lax.ConvDimensionNumbers(tuple(attr(attrs, "lhs_spec")), tuple(attr(attrs, "rhs_spec")),
                                                   tuple(attr(attrs, "out_spec"))),
        feature_group_count=attr(attrs, "feature_group_count"), batch_group_count=attr(attrs, "batch_group_count"),
        precision=lax.Precision.HIGHEST),
    "reduce_window_sum": lambda ins, attrs, node, wide: reduce_window(ins[0], attrs, lax.add, 0),
    "reduce_window_max": lambda ins, attrs, node, wide: reduce_window(ins[0], attrs, lax.max, "max"),
    "reduce_window_min": lambda ins, attrs, node, wide: reduce_window(ins[0], attrs, lax.min, "min"),
    "select_and_gather_add": lambda ins, attrs, node, wide: jax_windows._select_and_gather_add(
        ins[0], ins[1], lax.ge_p if attr(attrs, "select") == "ge" else lax.le_p, *window_attrs(attrs)),
    "select_and_scatter_add": lambda ins, attrs, node, wide: jax_windows._select_and_scatter_add(
        ins[0], ins[1], lax.ge_p if attr(attrs, "select") == "ge" else lax.le_p, *window_attrs(attrs)[:3]),
    "eig": lambda ins, attrs, node, wide: list(lax.linalg.eig(
        ins[0], compute_left_eigenvectors=bool(attr(attrs, "compute_left_eigenvectors")),
        compute_right_eigenvectors=bool(attr(attrs, "compute_right_eigenvectors")))),
    "lu_pivots_to_permutation": lambda ins, attrs, node, wide: lax.linalg.lu_pivots_to_permutation(
        ins[0], attr(attrs, "permutation_size")),
    "random_bits": random_bits,
    "cond": cond, "while": while_, "scan": scan,
    "remat": lambda ins, attrs, node, wide: run_graph(attr(attrs, "body")[0], ins, wide),
    "checkpoint_name": lambda ins, attrs, node, wide: jax.ad_checkpoint.checkpoint_name(ins[0], attr(attrs, "name")),
    "complex": binary(lax.complex), "real": unary(lax.real), "imag": unary(lax.imag), "conj": unary(lax.conj),
    "fft": lambda ins, attrs, node, wide: lax.fft(ins[0], lax.FftType[attr(attrs, "fft_type").upper()],
                                                  tuple(attr(attrs, "fft_lengths"))),
}
