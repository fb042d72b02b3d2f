#!/usr/bin/env python3
"""Writes tests/random/jax_values.json: jax.random's draws for fixed seeds,
which graft::random must reproduce (tests/random/jax_random_test.cpp).

    /work/venv-peers/bin/python scripts/make_random_values.py   # a venv with jax

JAX's defaults: the threefry2x32 implementation with jax_threefry_partitionable
on. f64 cases run with jax_enable_x64. Floats are stored as bit patterns in
hex (exact through JSON); integers as numbers. Also erf_inv on a grid of
points in (-1, 1), f32 and f64, the function jax.random.normal goes through.
"""
import json
import sys

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402


def hexes(a):
    a = np.asarray(a)
    width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    return [format(int(v), "x") for v in a.view(width).ravel()]


def ints(a):
    return [int(v) for v in np.asarray(a).ravel()]


def main():
    assert jax.config.jax_default_prng_impl == "threefry2x32"
    assert jax.config.jax_threefry_partitionable
    cases = []
    for seed in [0, 42, 2**32 + 7, 2**63 + 12345]:
        k = jax.random.PRNGKey(np.uint64(seed))
        c = {"seed": str(seed), "key": ints(k)}
        c["split3"] = ints(jax.random.split(k, 3))
        c["fold_in"] = {str(d): ints(jax.random.fold_in(k, np.uint32(d))) for d in [0, 1, 7, 4000000000]}
        c["bits_2x3"] = ints(jax.random.bits(k, (2, 3), jnp.uint32))
        c["bits_7"] = ints(jax.random.bits(k, (7,), jnp.uint32))
        c["uniform_f32"] = hexes(jax.random.uniform(k, (9,), jnp.float32))
        c["uniform_f64"] = hexes(jax.random.uniform(k, (9,), jnp.float64))
        c["uniform_f32_m3_5"] = hexes(jax.random.uniform(k, (9,), jnp.float32, -3.0, 5.0))
        c["normal_f32"] = hexes(jax.random.normal(k, (3, 4), jnp.float32))
        c["normal_f64"] = hexes(jax.random.normal(k, (3, 4), jnp.float64))
        c["bernoulli_0.3"] = [bool(v) for v in np.asarray(jax.random.bernoulli(k, np.float32(0.3), (10,)))]
        c["randint_m5_17"] = ints(jax.random.randint(k, (10,), -5, 17, jnp.int32))
        c["randint_full"] = ints(jax.random.randint(k, (6,), -2**31, 2**31, jnp.int32))
        c["randint_0_1000003"] = ints(jax.random.randint(k, (6,), 0, 1000003, jnp.int32))
        # Array parameters, broadcast against the shape: a hi <= lo pair (lo is drawn), hi past
        # the i32 range, the full range.
        c["randint_arrays"] = ints(jax.random.randint(
            k, (2, 4), jnp.asarray([-5, 0, 100, -2**31]), jnp.asarray([[17], [2**31]]), jnp.int32))
        c["bernoulli_arrays_f32"] = [bool(v) for v in np.asarray(jax.random.bernoulli(
            k, jnp.asarray([0.1, 0.5, 0.9], jnp.float32), (4, 3))).ravel()]
        c["bernoulli_arrays_f64"] = [bool(v) for v in np.asarray(jax.random.bernoulli(
            k, jnp.asarray([[0.25], [0.75]], jnp.float64))).ravel()]
        for name, t in [("f32", jnp.float32), ("f64", jnp.float64)]:
            c["truncated_normal_" + name] = hexes(jax.random.truncated_normal(k, -2.0, 2.0, (9,), t))
            c["truncated_normal_m1_3_" + name] = hexes(jax.random.truncated_normal(k, -1.0, 3.0, (9,), t))
            c["uniform_arrays_" + name] = hexes(jax.random.uniform(
                k, (2, 3), t, jnp.asarray([-1.0, 0.0, 2.5], t), jnp.asarray([[3.0], [1e3]], t)))
            c["truncated_normal_arrays_" + name] = hexes(jax.random.truncated_normal(
                k, jnp.asarray([-2.0, 0.0, 1.5], t), jnp.asarray([[2.0], [4.0]], t), (2, 3), t))
            for dist in ["exponential", "gumbel", "laplace", "logistic", "cauchy"]:
                c[dist + "_" + name] = hexes(getattr(jax.random, dist)(k, (9,), t))
        jax.config.update("jax_enable_x64", False)  # p = 0.5 is f32 then, as for a user without x64
        c["rademacher_i32"] = ints(jax.random.rademacher(k, (10,), jnp.int32))
        jax.config.update("jax_enable_x64", True)
        logits = jnp.array([[0.1, 2.0, -1.0, 0.5], [3.0, 0.0, 0.0, 0.0]], jnp.float32)
        c["categorical"] = ints(jax.random.categorical(k, logits))
        c["categorical_5x2"] = ints(jax.random.categorical(k, logits, shape=(5, 2)))
        c["categorical_axis0"] = ints(jax.random.categorical(k, logits, axis=0))
        c["permutation_10"] = ints(jax.random.permutation(k, 10))
        c["permutation_2000"] = ints(jax.random.permutation(k, 2000))
        c["permutation_rows"] = hexes(jax.random.permutation(k, jnp.arange(12, dtype=jnp.float32).reshape(4, 3), axis=0))
        c["permutation_cols"] = hexes(jax.random.permutation(k, jnp.arange(12, dtype=jnp.float32).reshape(4, 3), axis=1))
        c["permutation_vector"] = hexes(jax.random.permutation(k, jnp.arange(7, dtype=jnp.float32) * 1.5))
        # Every dtype: 8-, 16- and 64-bit bits, the halves' 16-bit uniforms and what is built on
        # them, randint in each integer width (its bits are that width's).
        for t in [jnp.uint8, jnp.uint16, jnp.uint64]:
            c["bits_" + jnp.dtype(t).name] = ints(jax.random.bits(k, (7,), t))
        for name, t in [("f16", jnp.float16), ("bf16", jnp.bfloat16)]:
            c["uniform_" + name] = hexes(jax.random.uniform(k, (200,), t))
            c["uniform_m3_5_" + name] = hexes(jax.random.uniform(k, (200,), t, -3.0, 5.0))
            c["normal_" + name] = hexes(jax.random.normal(k, (200,), t))
            c["truncated_normal_" + name] = hexes(jax.random.truncated_normal(k, -2.0, 2.0, (200,), t))
            for dist in ["exponential", "gumbel", "laplace", "logistic", "cauchy"]:
                c[dist + "_" + name] = hexes(getattr(jax.random, dist)(k, (50,), t))
            c["lecun_normal_8x5_" + name] = hexes(jax.nn.initializers.lecun_normal()(k, (8, 5), t))
        for t, lo, hi in [(jnp.int8, -5, 17), (jnp.int8, -128, 128), (jnp.uint8, 3, 250), (jnp.int16, -300, 30000),
                          (jnp.uint16, 0, 65536), (jnp.int64, -2**40, 2**40 + 3), (jnp.int64, -2**63, 2**63 - 1),
                          (jnp.uint32, 7, 2**32 - 5), (jnp.uint64, 0, 2**62 + 11)]:
            c["randint_%s_%d_%d" % (jnp.dtype(t).name, lo, hi)] = ints(jax.random.randint(k, (20,), lo, hi, t))
        inits = jax.nn.initializers
        c["lecun_normal_4x3"] = hexes(inits.lecun_normal()(k, (4, 3), jnp.float32))
        c["glorot_uniform_3x5"] = hexes(inits.glorot_uniform()(k, (3, 5), jnp.float32))
        c["he_normal_2x2x3x4"] = hexes(inits.he_normal()(k, (2, 2, 3, 4), jnp.float32))
        c["lecun_normal_4x3_f64"] = hexes(inits.lecun_normal()(k, (4, 3), jnp.float64))
        c["truncated_normal_init_6"] = hexes(inits.truncated_normal(0.5)(k, (6,), jnp.float32))
        c["normal_init_6"] = hexes(inits.normal(1.5)(k, (6,), jnp.float32))
        c["uniform_init_6"] = hexes(inits.uniform(2.0)(k, (6,), jnp.float32))
        # Marsaglia-Tsang gamma draws (a < 1 boosted), log-space ones, beta and dirichlet, and the
        # reparameterised gradient of a gamma draw in a.
        alphas = [0.05, 0.3, 1.0, 2.5, 7.0]
        for name, t in [("f32", jnp.float32), ("f64", jnp.float64)]:
            a = jnp.asarray(np.repeat(alphas, 40).reshape(5, 40), t)
            c["gamma_" + name] = hexes(jax.random.gamma(k, a, dtype=t))
            c["loggamma_" + name] = hexes(jax.random.loggamma(k, a, dtype=t))
            c["gamma_grad_" + name] = hexes(jax.grad(lambda v: jax.random.gamma(k, v, dtype=t).sum())(a))
            c["beta_" + name] = hexes(jax.random.beta(k, jnp.asarray(0.5, t), jnp.asarray([0.7, 2.0, 9.0], t), (4, 3), t))
            cov = jnp.asarray([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 1.5]], t)
            c["multivariate_normal_" + name] = hexes(jax.random.multivariate_normal(
                k, jnp.asarray([1.0, -2.0, 0.5], t), cov, (4,), t))
            c["multivariate_normal_batched_" + name] = hexes(jax.random.multivariate_normal(
                k, jnp.zeros((2, 1, 3), t), jnp.stack([cov, 2 * cov]), None, t))
            c["orthogonal_" + name] = hexes(jax.random.orthogonal(k, 4, (2,), t))
            c["orthogonal_wide_" + name] = hexes(jax.random.orthogonal(k, 3, (), t, m=5))
            c["orthogonal_tall_" + name] = hexes(jax.random.orthogonal(k, 6, (), t, m=2))
            c["orthogonal_init_" + name] = hexes(inits.orthogonal(1.5)(k, (3, 2, 4), t))
            c["orthogonal_init_axis0_" + name] = hexes(inits.orthogonal(column_axis=0)(k, (3, 5), t))
            c["dirichlet_" + name] = hexes(jax.random.dirichlet(k, jnp.asarray([0.2, 1.0, 3.0], t), (5,), t))
        jax.config.update("jax_enable_x64", False)  # choice's randint draws i32 then, graft's default
        pw = jnp.asarray([0.1, 0.0, 0.5, 0.25, 0.15], jnp.float32)
        c["choice_10"] = ints(jax.random.choice(k, 10, (7,)))
        c["choice_p"] = ints(jax.random.choice(k, 5, (3, 4), p=pw))
        c["choice_noreplace"] = ints(jax.random.choice(k, 10, (6,), replace=False))
        c["choice_noreplace_p"] = ints(jax.random.choice(k, 5, (3,), replace=False, p=pw))
        c["choice_rows"] = hexes(jax.random.choice(k, jnp.arange(12, dtype=jnp.float32).reshape(4, 3), (2,), axis=1))
        c["poisson"] = ints(jax.random.poisson(k, jnp.asarray([0.0, 0.5, 3.0, 9.9, 10.0, 37.5, 1000.0], jnp.float32), (50, 7)))
        jax.config.update("jax_enable_x64", True)
        cases.append(c)
    grid32 = np.linspace(-1, 1, 401, dtype=np.float32)[1:-1]
    grid32 = np.concatenate([grid32, np.float32([1 - 2**-24, -(1 - 2**-24), 1e-30, 0.999, 0.9999999, 0.5, 0])])
    grid64 = np.concatenate([np.linspace(-1, 1, 401)[1:-1], [1 - 2**-53, 1 - 1e-12, 1 - 1e-7, 0.99999, 1e-300, 0.0]])
    erf_inv = {
        "f32_in": hexes(grid32),
        "f32_out": hexes(lax.erf_inv(jnp.asarray(grid32))),
        "f64_in": hexes(grid64),
        "f64_out": hexes(lax.erf_inv(jnp.asarray(grid64))),
    }
    out = {"jax_version": jax.__version__, "keys": cases, "erf_inv": erf_inv}
    path = sys.argv[1] if len(sys.argv) > 1 else "tests/random/jax_values.json"
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
