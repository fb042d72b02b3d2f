#!/usr/bin/env python3
"""Runs graft's corpus against JAX: the reference runner, and a template for another implementation's.

    python3 corpus/run_jax.py [--include GLOB]... [--exclude GLOB]... [--xfail FILE] [--list] [-v] [--corpus DIR]

For every case of index.json (corpus/README.md describes the files and the schema) it reads the graph and
inputs, runs each check the case has files for through the implementation below, and compares with the
stored answers by the corpus's comparison rule:

    per element |got - want| <= atol + rtol * |want|, with the case's "tolerance" (rtol, atol) from
    index.json ("value" for eval and vmap, "derivative" for the rest); NaN equals NaN; an infinity equals
    only itself; complex numbers part by part; integers and bools exactly. Floats compare in float64.

Must-reject graphs (index.json's "rejects") must be refused: here, a graph passes when running its nodes on
values of their operands' types raises or gives other types than the graph declares.

The implementation here is JAX: graft's ops in jax.lax (graft_lax.py, beside this file) and JAX's jvp,
vjp, vmap and grad. To run the corpus on another library, replace the methods of `Implementation` (run a
graph; its jvp; vjp; vmap with in_axes; grad) and keep the rest.

--include/--exclude take glob patterns over case names (e.g. 'cond/*'); --xfail names a file of patterns
(one per line, '#' comments) for checks expected to fail, written CASE or CASE:CHECK (e.g.
'while/*:vmap'). Exit status 0 when every check that is not expected to fail passes; an expected failure
that passes is reported (XPASS) but is not an error.
"""
import argparse
import fnmatch
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graft_lax  # noqa: E402  (sets jax to float64 on the CPU)
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

CORPUS = os.path.dirname(os.path.abspath(__file__))


class Implementation:
    """What the runner asks of an implementation. Each method takes and returns NumPy arrays (lists of them)."""

    def __init__(self, graph):
        self.graph = graph  # the "graph" object of graph.json

    def run(self, inputs):
        """The graph's outputs on inputs (the answers are float64: f32 and c64 values compute widened)."""
        return [np.asarray(o) for o in graft_lax.run_graph(self.graph, [self._wide(x) for x in inputs], True)]

    def jvp(self, inputs, positions, tangents, outputs):
        """Tangents of the outputs at `outputs` for tangents of the inputs at `positions`."""
        f = self._of(inputs, positions, outputs)
        return [np.asarray(t) for t in jax.jvp(f, [self._wide(inputs[i]) for i in positions], tangents)[1]]

    def vjp(self, inputs, positions, cotangents, outputs):
        """Cotangents of the inputs at `positions` for cotangents of the outputs at `outputs`."""
        f = self._of(inputs, positions, outputs)
        _, pullback = jax.vjp(f, *[self._wide(inputs[i]) for i in positions])
        return [np.asarray(t) for t in pullback(list(cotangents))]

    def vmap(self, batched_inputs, in_axes):
        """The outputs for each example, stacked on axis 0; in_axes[i] is None for an input every example shares."""
        return [np.asarray(o) for o in jax.vmap(lambda *xs: graft_lax.run_graph(self.graph, list(xs), True),
                                                in_axes=tuple(in_axes))(*[self._wide(x) for x in batched_inputs])]

    def grad(self, objective, x):
        """The gradient of a scalar function (written with this implementation's arrays) at x."""
        return jax.grad(objective)(self._wide(x))

    def objective(self, inputs, position, weights, outputs):
        """x -> sum_k sum(out_k * w_k): the inputs with input `position` replaced by x."""
        def s(x):
            xs = [self._wide(v) for v in inputs]
            xs[position] = x
            outs = graft_lax.run_graph(self.graph, xs, True)
            return sum(jnp.sum(outs[k] * w) for k, w in zip(outputs, weights))
        return s

    # -- helpers
    def _wide(self, x):
        return jnp.asarray(graft_lax.widen(x))

    def _of(self, inputs, positions, outputs):
        def f(*fx):
            xs = [self._wide(v) for v in inputs]
            for i, v in zip(positions, fx):
                xs[i] = v
            outs = graft_lax.run_graph(self.graph, xs, True)
            return [outs[k] for k in outputs]
        return f


def refuses(graph):
    """Whether the implementation refuses a graph: here, whether running each node's op on values of its operands'
    types raises or gives types other than the node declares (graft refuses these graphs before running them)."""
    try:
        env = {}
        for spec in graph["inputs"]:
            env[spec["id"]] = jax.ShapeDtypeStruct(tuple(spec["shape"]), graft_lax.DTYPES[spec["dtype"]])
        for n in graph["nodes"]:
            op = graft_lax.OPS[n["op"]]
            outs = jax.eval_shape(lambda *a: op(list(a), n.get("attrs", {}), n, False), *[env[i] for i in n["inputs"]])
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            if len(outs) != len(n["outputs"]):
                return True
            for spec, o in zip(n["outputs"], outs):
                if tuple(spec["shape"]) != tuple(o.shape) or graft_lax.DTYPES[spec["dtype"]] != o.dtype:
                    return True
                env[spec["id"]] = o
        return any(v not in env for v in graph["outputs"])
    except Exception:
        return True


def mismatch(got, want, rtol, atol):
    """None when got matches want by the comparison rule, else where and how they differ."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    if np.iscomplexobj(want) or np.iscomplexobj(got):
        for part, name in ((np.real, "real part"), (np.imag, "imaginary part")):
            why = mismatch(part(got), part(want), rtol, atol)
            if why:
                return name + ": " + why
        return None
    if want.dtype.kind in "biu":
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
    else:
        g, w = got.astype(np.float64).reshape(-1), want.astype(np.float64).reshape(-1)
        with np.errstate(invalid="ignore"):
            ok = (np.isnan(g) & np.isnan(w)) | (g == w) | (np.abs(g - w) <= atol + rtol * np.abs(w))
        bad = np.flatnonzero(~ok)
    if bad.size:
        i = bad[0]
        return "element %d: got %r, expected %r (%d elements differ)" % (i, got.reshape(-1)[i], want.reshape(-1)[i],
                                                                        bad.size)
    return None


def checks(meta, d, impl):
    """Yields (check name, got, want, derivative?) for every check the case has files for."""
    files = meta["files"]

    def load(key):
        return [graft_lax.load_npy(os.path.join(d, f)) for f in files[key]]
    inputs = [graft_lax.load_npy(os.path.join(d, "in_%d.npy" % i)) for i in range(len(impl.graph["inputs"]))]
    fin, fout = meta["float_inputs"], meta["float_outputs"]
    yield "eval", impl.run(inputs), load("eval"), False
    if "jvp" in files:
        yield "jvp", impl.jvp(inputs, fin, load("jvp_tangents"), fout), load("jvp"), True
    if "vjp" in files:
        yield "vjp", impl.vjp(inputs, fin, load("vjp_cotangents"), fout), load("vjp"), True
    if "hessian" in files:
        s = impl.objective(inputs, fin[0], load("hessian_weights"), fout)
        h = jax.hessian(s)(impl._wide(inputs[fin[0]]))
        yield "hessian", [np.asarray(h)], [graft_lax.load_npy(os.path.join(d, files["hessian"]))], True
    if "vmap" in files:
        batched = load("vmap_inputs")
        yield "vmap", impl.vmap(batched, [0] * len(batched)), load("vmap"), False
    if "vmap_axes" in files:
        yield "vmap_axes", impl.vmap(load("vmap_axes_inputs"), meta["vmap_in_axes"]), load("vmap_axes"), False
    if "vmap_grad" in files:
        batched, ws = load("vmap_inputs"), load("vmap_grad_weights")
        per_example = [impl.grad(impl.objective([b[e] for b in batched], fin[0], [w[e] for w in ws], fout),
                                 batched[fin[0]][e]) for e in range(3)]
        yield "vmap_grad", [np.stack([np.asarray(g) for g in per_example])], load("vmap_grad"), True
    if "hvp" in files:
        ws = load("vmap_grad_weights")
        s = impl.objective(inputs, fin[0], [w[0] for w in ws], fout)
        x0, v = impl._wide(inputs[fin[0]]), jnp.asarray(load("hvp_vector")[0])
        yield "hvp", [np.asarray(jax.jvp(jax.grad(s), (x0,), (v,))[1])], load("hvp"), True


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--include", action="append", default=[], help="run only cases matching GLOB (repeatable)")
    p.add_argument("--exclude", action="append", default=[], help="skip cases matching GLOB (repeatable)")
    p.add_argument("--xfail", help="file of CASE or CASE:CHECK patterns expected to fail")
    p.add_argument("--list", action="store_true", help="list the selected cases and stop")
    p.add_argument("-v", "--verbose", action="store_true", help="a line per check")
    p.add_argument("--corpus", default=CORPUS, help="the corpus directory (default: this script's)")
    a = p.parse_args()
    index = json.load(open(os.path.join(a.corpus, "index.json")))
    if index.get("format") != "graft.jax_corpus" or index.get("version") != 2:
        sys.exit("run_jax.py: %s is not a version 2 graft.jax_corpus index" % os.path.join(a.corpus, "index.json"))
    xfail = []
    if a.xfail:
        xfail = [line.split("#")[0].strip() for line in open(a.xfail)]
        xfail = [x for x in xfail if x]
    selected = [c for c in index["cases"]
                if (not a.include or any(fnmatch.fnmatch(c["name"], g) for g in a.include))
                and not any(fnmatch.fnmatch(c["name"], g) for g in a.exclude)]
    if a.list:
        print("\n".join(c["name"] for c in selected))
        return 0
    counts = {"pass": 0, "fail": 0, "xfail": 0, "xpass": 0}
    for meta in selected:
        d = os.path.join(a.corpus, "cases", meta["name"])
        impl = Implementation(json.load(open(os.path.join(d, "graph.json")))["graph"])
        try:
            results = list(checks(meta, d, impl))
        except Exception as e:  # an implementation that raises fails the case
            results = [("run", None, None, False, "raised %s: %s" % (type(e).__name__, e))]
        for r in results:
            name, got, want, derivative = r[:4]
            why = r[4] if len(r) > 4 else None
            if why is None:
                tol = meta["tolerance"]["derivative" if derivative else "value"]
                if len(got) != len(want):
                    why = "%d results, expected %d" % (len(got), len(want))
                for k, (g, w) in enumerate(zip(got, want)):
                    m = None if why else mismatch(g, w, tol["rtol"], tol["atol"])
                    if m:
                        why = "result %d: %s" % (k, m)
            expected_fail = any(fnmatch.fnmatch(meta["name"], x) or fnmatch.fnmatch(meta["name"] + ":" + name, x)
                                for x in xfail)
            kind = ("xfail" if why else "xpass") if expected_fail else ("fail" if why else "pass")
            counts[kind] += 1
            if kind in ("fail", "xpass") or a.verbose:
                print("%-5s %s: %s%s" % (kind.upper(), meta["name"], name, (": " + why) if why else ""))
    # Must-reject graphs: the implementation must refuse each (graft names the error class in index.json).
    rejects = [r for r in index.get("rejects", [])
               if (not a.include or any(fnmatch.fnmatch(r["name"], g) for g in a.include))
               and not any(fnmatch.fnmatch(r["name"], g) for g in a.exclude)]
    for r in rejects:
        graph = json.load(open(os.path.join(a.corpus, "cases", r["name"], "graph.json")))["graph"]
        refused = refuses(graph)
        expected_fail = any(fnmatch.fnmatch(r["name"], x) for x in xfail)
        kind = ("xpass" if refused else "xfail") if expected_fail else ("pass" if refused else "fail")
        counts[kind] += 1
        if kind in ("fail", "xpass") or a.verbose:
            print("%-5s %s: %s" % (kind.upper(), r["name"], "refused" if refused else "accepted, expected " + r["error"]))
    print("%d cases and %d must-reject graphs, %d checks: %d passed, %d failed, %d expected failures, "
          "%d unexpected passes (JAX %s)" % (len(selected), len(rejects), sum(counts.values()), counts["pass"],
                                            counts["fail"], counts["xfail"], counts["xpass"], jax.__version__))
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
