"""Shared by the peers of bench/peers/run.py: the inputs, timing and output
format of bench/peers_graft.cpp, so every framework does the same work on the
same numbers.

Output lines (stdout):  workload<TAB>best seconds<TAB>median seconds
                        #check<TAB>workload<TAB>value
"""
import os
import statistics
import sys
import time

import numpy as np

N_CHAIN = 1 << 24


def det(shape, seed, scale):
    """float32(sin(k*0.7 + seed)) * float32(scale) for the flat index k (peers_graft.cpp's det)."""
    n = int(np.prod(shape))
    v = np.sin(np.arange(n, dtype=np.float64) * 0.7 + seed).astype(np.float32)
    return (v * np.float32(scale)).reshape(shape)


def labels(batch, classes):
    """One-hot float32 labels (k*3) mod classes for example k."""
    y = np.zeros((batch, classes), np.float32)
    y[np.arange(batch), (np.arange(batch) * 3) % classes] = 1.0
    return y


def mlp_problem():
    """The MLP 784-512-512-10 step's parameters, inputs and one-hot labels (numpy, float32)."""
    batch, n_in, hidden, out = 256, 784, 512, 10
    s = lambda fan_in: np.float32(1.0 / np.sqrt(fan_in))
    p = {"w1": det((n_in, hidden), 1, s(n_in)), "b1": det((hidden,), 2, 0.1),
         "w2": det((hidden, hidden), 3, s(hidden)), "b2": det((hidden,), 4, 0.1),
         "w3": det((hidden, out), 5, s(hidden)), "b3": det((out,), 6, 0.1)}
    return p, det((batch, n_in), 7, 1.0), labels(batch, out)


def chain_input():
    """x in [-4, 4): (float32(k) * 2^-24 - 0.5) * 8, as peers_graft.cpp computes it."""
    x = np.arange(N_CHAIN, dtype=np.float32) * np.float32(1.0 / N_CHAIN) - np.float32(0.5)
    return x * np.float32(8.0)


def timed_spread(f, repeats, per=1):
    """(best, median) seconds of `repeats` timed calls of f, divided by `per`."""
    s = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        s.append(time.perf_counter() - t0)
    return min(s) / per, statistics.median(s) / per


def report(name, t):
    print(f"{name}\t{t[0]:.6g}\t{t[1]:.6g}", flush=True)


def check(name, value):
    print(f"#check\t{name}\t{float(value):.9g}", flush=True)


def compare_dump(dump, name, y):
    """Element-by-element agreement with graft's output (written by peers_graft --dump)."""
    path = os.path.join(dump, name + ".npy") if dump else ""
    if not path or not os.path.exists(path):
        return
    want = np.load(path).astype(np.float64)
    got = np.asarray(y, dtype=np.float64)
    if got.shape != want.shape:
        check(name + ":maxerr_vs_graft", float("inf"))
        return
    err = np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want)))
    check(name + ":maxerr_vs_graft", err)


def dump_dir():
    return sys.argv[sys.argv.index("--dump") + 1] if "--dump" in sys.argv else ""


def threads():
    """The thread count run.py asked for (all cores by default)."""
    return int(os.environ.get("OMP_NUM_THREADS", os.cpu_count()))
