"""JAX's side of bench/peers/run.py: the workloads of bench/peers_graft.cpp,
written as a JAX user writes them (jax.jit, jax.value_and_grad, jax.vmap), on
the CPU backend. Times block on the result (JAX dispatches asynchronously),
except the dispatch workloads, which time a loop of calls and block once at
the end, as JAX's own dispatch benchmarks do. XLA's CPU client runs on all
cores by default; run.py sets the same OMP_NUM_THREADS for every program.
Usage: python jax_peer.py [--dump DIR]
"""
import time

import numpy as np

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    print("#skip\tjax not installed")
    raise SystemExit(0)

from common import (chain_input, check, compare_dump, det, dump_dir, labels, mlp_problem, report, timed_spread)


def first_call_deep_mlp():
    layers, width = 400, 16
    params = [(jnp.asarray(det((width, width), 1.0 + i, 0.3)), jnp.asarray(det((width,), 1000.0 + i, 0.1)))
              for i in range(layers)]
    x = jnp.asarray(det((16, width), 5.0, 1.0))

    def loss(ps, h):
        for w, b in ps:
            h = jnp.tanh(h @ w + b)
        return jnp.mean(h * h)

    jg = jax.jit(jax.grad(loss))
    t0 = time.perf_counter()
    g = jax.block_until_ready(jg(params, x))
    s = time.perf_counter() - t0
    report("first_call_deep_mlp", (s, s))
    check("first_call_deep_mlp", sum(float(jnp.sum(jnp.abs(w))) for w, _ in g))


def chains(dump):
    x = jnp.asarray(chain_input())
    fs = {
        "chain_logistic": lambda v: jax.nn.sigmoid(jnp.tanh(v * 1.5 + 0.5) * v) - jnp.exp(v) * 0.25,
        "chain_sin": lambda v: jnp.exp(jnp.sin(v) * 2.0 + v) - v * 0.5,
    }
    for name, f in fs.items():
        jf = jax.jit(f)
        y = jax.block_until_ready(jf(x))
        report(name, timed_spread(lambda: jf(x).block_until_ready(), 9))
        check(name, np.sum(np.abs(np.asarray(y, np.float64))))
        compare_dump(dump, name, y)


def mlp_loss(p, x, y):
    h1 = jnp.tanh(x @ p["w1"] + p["b1"])
    h2 = jnp.tanh(h1 @ p["w2"] + p["b2"])
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(h2 @ p["w3"] + p["b3"], axis=-1), axis=-1))


def mlp():
    p, x_np, y_np = mlp_problem()
    p = {k: jnp.asarray(v) for k, v in p.items()}
    x, y = jnp.asarray(x_np), jnp.asarray(y_np)
    step = jax.jit(jax.value_and_grad(mlp_loss))
    v, g = jax.block_until_ready(step(p, x, y))

    def four():
        for _ in range(4):
            vi, _ = step(p, x, y)
            float(vi)  # the step is done when its value is read
    report("mlp_value_and_grad", timed_spread(four, 11, per=4))
    check("mlp_value_and_grad:loss", float(v))
    check("mlp_value_and_grad:sum|dw1|", np.sum(np.abs(np.asarray(g["w1"], np.float64))))


def per_example():
    n_in, hidden, out, batch = 64, 64, 10, 128
    p = {"w1": det((n_in, hidden), 11, 0.3), "b1": det((hidden,), 12, 0.1),
         "w2": det((hidden, out), 13, 0.3), "b2": det((out,), 14, 0.1)}
    p = {k: jnp.asarray(v) for k, v in p.items()}
    xs, ys = jnp.asarray(det((batch, n_in), 15, 1.0)), jnp.asarray(labels(batch, out))

    def loss(p, x, y):  # one example: x [64], y one-hot [10]
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return -jnp.sum(jax.nn.log_softmax(h @ p["w2"] + p["b2"]) * y)

    f = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    g = jax.block_until_ready(f(p, xs, ys))
    report("per_example_grads", timed_spread(lambda: jax.block_until_ready(f(p, xs, ys)), 21))
    check("per_example_grads", np.sum(np.abs(np.asarray(g["w1"], np.float64))))


def dispatch():
    x, y = jnp.full((8,), 0.5, jnp.float32), jnp.full((8,), 1.0, jnp.float32)
    ops = 5000

    def eager():
        z = x
        for _ in range(ops):
            z = z * y
        z.block_until_ready()
    eager()
    report("eager_op_f32_8", timed_spread(eager, 40, per=ops))
    jf = jax.jit(lambda a, b: jnp.tanh(a * b + 1.0))
    r = jax.block_until_ready(jf(x, y))
    calls = 20000

    def loop():
        for _ in range(calls):
            out = jf(x, y)
        out.block_until_ready()
    report("jit_call_3op_f32_8", timed_spread(loop, 7, per=calls))
    check("jit_call_3op_f32_8", np.sum(np.abs(np.asarray(r, np.float64))))


def gemm():
    n = 1024
    a, b = jnp.asarray(det((n, n), 21, 1.0)), jnp.asarray(det((n, n), 22, 1.0))
    mm = jax.jit(jnp.matmul)
    c = jax.block_until_ready(mm(a, b))
    report("gemm_1024", timed_spread(lambda: mm(a, b).block_until_ready(), 9))
    check("gemm_1024", np.sum(np.abs(np.asarray(c, np.float64))))


def main():
    print(f"#program\tjax {jax.__version__}, jaxlib {jax.lib.__version__ if hasattr(jax.lib, '__version__') else ''}"
          f", {jax.devices()[0].platform}")
    jax.block_until_ready(jax.jit(lambda v: v + 1.0)(jnp.ones(8)))  # start the runtime and the compiler
    first_call_deep_mlp()
    chains(dump_dir())
    mlp()
    per_example()
    dispatch()
    gemm()


if __name__ == "__main__":
    main()
