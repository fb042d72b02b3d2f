"""PyTorch's side of bench/peers/run.py: the workloads of bench/peers_graft.cpp
on the CPU, two ways:
  name            eager PyTorch as most users run it (autograd for gradients,
                  torch.func.vmap(grad) for per-example gradients)
  name[compile]   torch.compile of the same function (TorchInductor's C++/OpenMP
                  code), where graft's workload is a jit; the first call is
                  timed with Inductor's cache in a fresh directory (cold)
Eager PyTorch has no jitted call and no compile step, so jit_call_3op_f32_8 and
first_call_deep_mlp exist only as [compile]. Threads: torch.set_num_threads
with run.py's OMP_NUM_THREADS (all cores by default).
Usage: python torch_peer.py [--dump DIR] [--no-compile]
"""
import os
import atexit
import shutil
import sys
import tempfile
import time

if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:  # a fresh Inductor cache: the first call compiles cold
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="torchinductor-peers-")
    atexit.register(shutil.rmtree, os.environ["TORCHINDUCTOR_CACHE_DIR"], True)

import numpy as np

try:
    import torch
except ImportError:
    print("#skip\ttorch not installed")
    raise SystemExit(0)

from common import (chain_input, check, compare_dump, det, dump_dir, labels, mlp_problem, report, threads, timed_spread)

COMPILE = "--no-compile" not in sys.argv


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def sum_abs(a):
    return float(torch.sum(torch.abs(a.detach().double())))


def guarded(name, fn):
    """Runs one torch.compile workload; one that fails is reported and skipped."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (a compile failure must not hide the other workloads)
        print(f"#note\t{name}: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}", flush=True)


def first_call_deep_mlp():
    layers, width = 400, 16
    params = [(t(det((width, width), 1.0 + i, 0.3)), t(det((width,), 1000.0 + i, 0.1))) for i in range(layers)]
    x = t(det((16, width), 5.0, 1.0))

    def loss(ps, h):
        for w, b in ps:
            h = torch.tanh(h @ w + b)
        return torch.mean(h * h)

    jg = torch.compile(torch.func.grad(loss))
    t0 = time.perf_counter()
    g = jg(params, x)
    s = time.perf_counter() - t0
    report("first_call_deep_mlp[compile]", (s, s))
    check("first_call_deep_mlp[compile]", sum(sum_abs(w) for w, _ in g))


def chains(dump):
    x = t(chain_input())
    fs = {
        "chain_logistic": lambda v: torch.sigmoid(torch.tanh(v * 1.5 + 0.5) * v) - torch.exp(v) * 0.25,
        "chain_sin": lambda v: torch.exp(torch.sin(v) * 2.0 + v) - v * 0.5,
    }
    for name, f in fs.items():
        y = f(x)
        report(name, timed_spread(lambda: f(x), 9))
        check(name, sum_abs(y))
        compare_dump(dump, name, y.numpy())
        if COMPILE:
            def compiled(name=name, f=f):
                cf = torch.compile(f)
                yc = cf(x)
                report(name + "[compile]", timed_spread(lambda: cf(x), 9))
                check(name + "[compile]", sum_abs(yc))
            guarded(name + "[compile]", compiled)


def mlp_loss(p, x, y):
    h1 = torch.tanh(x @ p["w1"] + p["b1"])
    h2 = torch.tanh(h1 @ p["w2"] + p["b2"])
    return -torch.mean(torch.sum(y * torch.log_softmax(h2 @ p["w3"] + p["b3"], dim=-1), dim=-1))


def mlp():
    p, x_np, y_np = mlp_problem()
    p = {k: t(v).requires_grad_() for k, v in p.items()}
    x, y = t(x_np), t(y_np)

    def step():  # value and every gradient, as autograd users write it
        loss = mlp_loss(p, x, y)
        grads = torch.autograd.grad(loss, list(p.values()))
        return loss, grads

    def four(fn):
        for _ in range(4):
            v, _ = fn()
            v.item()  # the step is done when its value is read

    v, g = step()
    report("mlp_value_and_grad", timed_spread(lambda: four(step), 11, per=4))
    check("mlp_value_and_grad:loss", float(v))
    check("mlp_value_and_grad:sum|dw1|", sum_abs(g[0]))
    if COMPILE:
        def compiled():
            pd = {k: v.detach() for k, v in p.items()}
            gv = torch.compile(torch.func.grad_and_value(mlp_loss))
            gc, vc = gv(pd, x, y)
            report("mlp_value_and_grad[compile]", timed_spread(lambda: four(lambda: gv(pd, x, y)[::-1]), 11, per=4))
            check("mlp_value_and_grad[compile]:loss", float(vc))
            check("mlp_value_and_grad[compile]:sum|dw1|", sum_abs(gc["w1"]))
        guarded("mlp_value_and_grad[compile]", compiled)


def per_example():
    n_in, hidden, out, batch = 64, 64, 10, 128
    p = {"w1": det((n_in, hidden), 11, 0.3), "b1": det((hidden,), 12, 0.1),
         "w2": det((hidden, out), 13, 0.3), "b2": det((out,), 14, 0.1)}
    p = {k: t(v) for k, v in p.items()}
    xs, ys = t(det((batch, n_in), 15, 1.0)), t(labels(batch, out))

    def loss(p, x, y):  # one example: x [64], y one-hot [10]
        h = torch.tanh(x @ p["w1"] + p["b1"])
        return -torch.sum(torch.log_softmax(h @ p["w2"] + p["b2"], dim=-1) * y)

    f = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))
    g = f(p, xs, ys)
    report("per_example_grads", timed_spread(lambda: f(p, xs, ys), 21))
    check("per_example_grads", sum_abs(g["w1"]))
    if COMPILE:
        def compiled():
            cf = torch.compile(f)
            gc = cf(p, xs, ys)
            report("per_example_grads[compile]", timed_spread(lambda: cf(p, xs, ys), 21))
            check("per_example_grads[compile]", sum_abs(gc["w1"]))
        guarded("per_example_grads[compile]", compiled)


def dispatch():
    x, y = torch.full((8,), 0.5), torch.full((8,), 1.0)
    ops = 5000

    def eager():
        z = x
        for _ in range(ops):
            z = z * y
    eager()
    report("eager_op_f32_8", timed_spread(eager, 40, per=ops))
    if COMPILE:
        def compiled():
            jf = torch.compile(lambda a, b: torch.tanh(a * b + 1.0))
            r = jf(x, y)
            calls = 20000

            def loop():
                for _ in range(calls):
                    jf(x, y)
            report("jit_call_3op_f32_8[compile]", timed_spread(loop, 7, per=calls))
            check("jit_call_3op_f32_8[compile]", sum_abs(r))
        guarded("jit_call_3op_f32_8[compile]", compiled)


def gemm():
    n = 1024
    a, b = t(det((n, n), 21, 1.0)), t(det((n, n), 22, 1.0))
    c = a @ b
    report("gemm_1024", timed_spread(lambda: a @ b, 9))
    check("gemm_1024", sum_abs(c))


def main():
    torch.set_num_threads(threads())
    print(f"#program\ttorch {torch.__version__}, {torch.get_num_threads()} threads")
    torch.tanh(torch.ones(8))
    with torch.no_grad():
        if COMPILE:
            torch.compile(lambda v: v + 1.0)(torch.ones(8))  # start the compiler (cold cache)
            guarded("first_call_deep_mlp[compile]", first_call_deep_mlp)
        chains(dump_dir())
    mlp()
    with torch.no_grad():
        per_example()
        dispatch()
        gemm()


if __name__ == "__main__":
    main()
