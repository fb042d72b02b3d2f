#!/usr/bin/env python3
"""graft beside JAX and PyTorch on the same workloads (bench/peers/README.md).

Runs ./build/bench/peers_graft, jax_peer.py and torch_peer.py as separate
processes, interleaved, --runs times, each with the same thread count
(OMP_NUM_THREADS, and pinned to that many CPUs when fewer than all), and
prints one Markdown table: each program's time per workload (the median over
runs of each run's best repeat, with the runs' min-max) and graft's ratios to
each peer (run by run, median and min-max). Below 1x graft is faster.
A peer that is not installed is skipped with a message. The programs' #check
values (losses, gradient sums, the chains' element-by-element error against
graft) are compared, so a row only stands if every program computed the same.

  python3 bench/peers/run.py [--graft ./build/bench/peers_graft] [--runs 3]
                             [--threads N] [--python PY] [--no-compile]
                             [--save DIR | --load DIR]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = [  # order of the table, with what each row is
    ("chain_logistic", "logistic(tanh(x*1.5+0.5)*x) - exp(x)*0.25, f32[16M]"),
    ("chain_sin", "exp(sin(x)*2+x) - x*0.5, f32[16M]"),
    ("mlp_value_and_grad", "MLP 784-512-512-10, batch 256: jit(value_and_grad) step"),
    ("per_example_grads", "per-example grads, MLP 64-64-10, batch 128: jit(vmap(grad))"),
    ("eager_op_f32_8", "one eager multiply on f32[8]"),
    ("jit_call_3op_f32_8", "cached jitted tanh(x*y+1) on f32[8], per call"),
    ("gemm_1024", "matmul f32 1024^3"),
    ("first_call_deep_mlp", "first call of jit(grad(loss)), MLP of 400 layers x 16"),
]


def run_program(name, cmd, env, threads, timeout):
    """stdout lines of one program run, or None with a message when it cannot run."""
    pin = None
    if threads < os.cpu_count():
        cpus = sorted(os.sched_getaffinity(0))[:threads]
        pin = lambda: os.sched_setaffinity(0, cpus)  # noqa: E731
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, preexec_fn=pin)
    except FileNotFoundError:
        print(f"{name}: {cmd[0]} not found: skipped", file=sys.stderr)
        return None
    except subprocess.TimeoutExpired:
        print(f"{name}: timed out after {timeout} s: skipped", file=sys.stderr)
        return None
    lines = p.stdout.splitlines()
    for line in lines:
        if line.startswith("#skip"):
            print(f"{line.split(chr(9), 1)[1]}: skipped", file=sys.stderr)
            return None
        if line.startswith("#note"):
            print(f"{name}: {line.split(chr(9), 1)[1]}", file=sys.stderr)
    if p.returncode != 0:
        print(f"{name}: exit {p.returncode}: skipped\n{p.stderr[-2000:]}", file=sys.stderr)
        return None
    return lines


def parse(lines):
    times, checks, about = {}, {}, ""
    for line in lines:
        f = line.split("\t")
        if line.startswith("#check") and len(f) == 3:
            checks[f[1]] = float(f[2])
        elif line.startswith("#program"):
            about = f[1]
        elif not line.startswith("#") and len(f) == 3:
            times[f[0]] = float(f[1])  # the best repeat of this run
    return times, checks, about


def fmt_time(s):
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def ratio_cell(values):
    m = statistics.median(values)
    return f"{m:.2f}x" if len(values) == 1 else f"{m:.2f}x ({min(values):.2f}-{max(values):.2f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graft", default="./build/bench/peers_graft")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--python", default=sys.executable, help="the Python that has jax and torch")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile (slow to compile)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per program run")
    ap.add_argument("--save", help="keep each program run's output in this directory")
    ap.add_argument("--load", help="print the table of outputs kept by --save, running nothing")
    a = ap.parse_args()

    names = ["graft", "jax", "torch"]
    runs = {name: [] for name in names}  # name -> [(times, checks)]
    about = {}
    if a.load:
        for name in names:
            r = 0
            while os.path.exists(path := os.path.join(a.load, f"{name}.{r}.txt")):
                with open(path) as f:
                    times, checks, about[name] = parse(f.read().splitlines())
                runs[name].append((times, checks))
                r += 1
        with open(os.path.join(a.load, "threads.txt")) as f:
            a.threads, a.runs = (int(v) for v in f.read().split())
    else:
        dump = tempfile.mkdtemp(prefix="graft-peers-")
        env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
        programs = {
            "graft": [a.graft, "--dump", dump],
            "jax": [a.python, os.path.join(HERE, "jax_peer.py"), "--dump", dump],
            "torch": [a.python, os.path.join(HERE, "torch_peer.py"), "--dump", dump]
            + (["--no-compile"] if a.no_compile else []),
        }
        if a.save:
            os.makedirs(a.save, exist_ok=True)
            with open(os.path.join(a.save, "threads.txt"), "w") as f:
                f.write(f"{a.threads} {a.runs}\n")
        skipped = set()
        for r in range(a.runs):
            for name in names:
                if name in skipped:
                    continue
                print(f"run {r + 1}/{a.runs}: {name}", file=sys.stderr, flush=True)
                lines = run_program(name, programs[name], env, a.threads, a.timeout)
                if lines is None:
                    skipped.add(name)
                    continue
                if a.save:
                    with open(os.path.join(a.save, f"{name}.{r}.txt"), "w") as f:
                        f.write("\n".join(lines) + "\n")
                times, checks, about[name] = parse(lines)
                runs[name].append((times, checks))
        shutil.rmtree(dump, ignore_errors=True)
    return render(a, names, runs, about)


def render(a, names, runs, about):
    # Columns: each program's variants (name, name[interpreter], name[compile]).
    columns = []
    for name in names:
        for times, _ in runs[name][:1]:
            for v in sorted({k.partition("[")[2].rstrip("]") for k in times}):
                columns.append((name, v))

    def series(name, key):
        return [t[key] for t, _ in runs[name] if key in t]

    def key(w, v):
        return f"{w}[{v}]" if v else w

    print(f"threads: {a.threads} of {os.cpu_count()} CPUs; {a.runs} runs. Times: the median over runs of each run's"
          " best repeat. Ratios: graft's time over the peer's, run by run: median (min-max).")
    for name in about:
        print(f"- {name}: {about[name]}")
    heads = [f"{n}[{v}]" if v else n for n, v in columns]
    # graft's default backend over each peer's column, and graft's interpreter over JAX.
    pairs = [("", n, v) for n, v in columns if n != "graft"]
    if ("graft", "interpreter") in columns and ("jax", "") in columns:
        pairs.append(("interpreter", "jax", ""))
    rheads = [f"{key('graft', gv)} / {key(n, v)}" for gv, n, v in pairs]
    print()
    print("| workload | " + " | ".join(heads + rheads) + " |")
    print("|---" * (1 + len(heads) + len(rheads)) + "|")
    for w, what in WORKLOADS:
        cells = []
        for n, v in columns:
            s = series(n, key(w, v))
            cells.append(fmt_time(statistics.median(s)) if s else "-")
        for gv, n, v in pairs:
            g, p = series("graft", key(w, gv)), series(n, key(w, v))
            k = min(len(g), len(p))
            cells.append(ratio_cell([g[i] / p[i] for i in range(k)]) if k else "-")
        print(f"| {what} | " + " | ".join(cells) + " |")

    # Checks: every program's values against graft's (the chains: element by element).
    print()
    bad = []
    ref = runs["graft"][0][1] if runs["graft"] else {}
    for name in names:
        for _, checks in runs[name][:1]:
            for k, v in checks.items():
                if k.endswith(":maxerr_vs_graft"):
                    if not v <= 1e-5:
                        bad.append(f"{name} {k} = {v:.3g} (tolerance 1e-5)")
                    continue
                base = k.replace("[interpreter]", "").replace("[compile]", "")
                if base in ref and not abs(v - ref[base]) <= 1e-4 * max(1.0, abs(ref[base])):
                    bad.append(f"{name} {k} = {v:.9g}, graft {ref[base]:.9g}")
    errs = [f"{n} {k.split(':')[0]}: {v:.2g}" for n in names for _, c in runs[n][:1] for k, v in c.items()
            if k.endswith(":maxerr_vs_graft")]
    if errs:
        print("elementwise chains, max |peer - graft| / max(1, |graft|): " + "; ".join(errs))
    print("checks: " + ("every program computed the same values (losses, gradient sums to 1e-4 relative)"
                        if not bad else "DISAGREE: " + "; ".join(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
