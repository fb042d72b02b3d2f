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
                             [--contended [N]] [--save DIR | --load DIR] [--models]

--contended runs every program twice per round, alone and beside N (default
1) busy processes it starts itself (a Python loop each, on the same CPUs), and
adds a second table: each program's time with the competitors over its time
alone, the figure a shared machine costs (graft's goal: at most 2.2x with one
competitor on 2 cores, growing no faster than the cores the others take).

--models then runs the model training steps (bench/gpt_step in f32 and with
bf16 products, bench/resnet_step), each beside JAX and PyTorch with its
losses checked, and prints their tables.
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


def pinning(threads):
    """A preexec_fn pinning a child to the first `threads` CPUs, or None when that is all of them."""
    if threads >= os.cpu_count():
        return None
    cpus = sorted(os.sched_getaffinity(0))[:threads]
    return lambda: os.sched_setaffinity(0, cpus)


class Competitors:
    """N busy processes (a Python loop each) on the programs' CPUs, for as long as the `with` lasts."""

    def __init__(self, n, threads):
        self.n, self.threads, self.procs = n, threads, []

    def __enter__(self):
        for _ in range(self.n):
            self.procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                               preexec_fn=pinning(self.threads)))
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def run_program(name, cmd, env, threads, timeout):
    """stdout lines of one program run, or None with a message when it cannot run."""
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                           preexec_fn=pinning(threads))
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
    ap.add_argument("--contended", type=int, nargs="?", const=1, default=0, metavar="N",
                    help="also run each program beside N busy processes (default 1) and compare")
    ap.add_argument("--models", action="store_true",
                    help="then run the model training steps (bench/gpt_step in f32 and bf16, bench/resnet_step), "
                         "each beside JAX and PyTorch with its losses checked, and print their tables")
    a = ap.parse_args()

    names = ["graft", "jax", "torch"]
    runs = {name: [] for name in names}  # name -> [(times, checks)]
    contended = {name: [] for name in names}  # the same, run beside the competitors
    about = {}
    if a.load:
        for name in names:
            for store, suffix in ((runs, ""), (contended, ".contended")):
                r = 0
                while os.path.exists(path := os.path.join(a.load, f"{name}.{r}{suffix}.txt")):
                    with open(path) as f:
                        times, checks, about[name] = parse(f.read().splitlines())
                    store[name].append((times, checks))
                    r += 1
        with open(os.path.join(a.load, "threads.txt")) as f:
            a.threads, a.runs, *rest = (int(v) for v in f.read().split())
            a.contended = rest[0] if rest else 0
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
                f.write(f"{a.threads} {a.runs} {a.contended}\n")
        skipped = set()
        # Alone, then (with --contended) beside the competitors, program by
        # program, so both see the machine in the same state.
        conditions = [(runs, "", 0)] + ([(contended, ".contended", a.contended)] if a.contended else [])
        for r in range(a.runs):
            for name in names:
                for store, suffix, n in conditions:
                    if name in skipped:
                        continue
                    print(f"run {r + 1}/{a.runs}: {name}" + (f" beside {n} busy process(es)" if n else ""),
                          file=sys.stderr, flush=True)
                    with Competitors(n, a.threads):
                        lines = run_program(name, programs[name], env, a.threads, a.timeout)
                    if lines is None:
                        skipped.add(name)
                        continue
                    if a.save:
                        with open(os.path.join(a.save, f"{name}.{r}{suffix}.txt"), "w") as f:
                            f.write("\n".join(lines) + "\n")
                    times, checks, about[name] = parse(lines)
                    store[name].append((times, checks))
        shutil.rmtree(dump, ignore_errors=True)
    status = render(a, names, runs, about)
    if a.contended:
        render_contention(a, names, runs, contended)
    if a.models and not a.load:
        status = run_models(a) or status
    return status


def run_models(a):
    """The model steps: each program runs its own peers (--python) and checks
    their losses (a nonzero exit when they disagree); their tables are
    printed as they come. Returns 1 if any failed."""
    build = os.path.dirname(os.path.dirname(os.path.abspath(a.graft)))
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    failed = 0
    for title, cmd in (("GPT step, f32", ["gpt_step"]), ("GPT step, bf16 products", ["gpt_step", "--bf16"]),
                       ("ResNet-18 step, f32", ["resnet_step"])):
        program = os.path.join(build, "bench", cmd[0])
        print(f"\n### {title}\n", flush=True)
        if not os.path.exists(program):
            print(f"({program} is not built: cmake --build build --target bench_{cmd[0]})")
            continue
        p = subprocess.run([program, "--python", a.python] + cmd[1:], env=env, capture_output=True, text=True,
                           timeout=a.timeout)
        table = [l for l in p.stdout.splitlines() if l.startswith("|") or l.startswith("losses") or
                 l.startswith("first loss")]
        print("\n".join(table))
        if p.returncode != 0:
            print(f"({cmd[0]} exited {p.returncode}: the losses disagree or a peer failed)")
            failed = 1
    return failed


def render_contention(a, names, runs, contended):
    """Each program's time beside the competitors over its time alone, run by run."""
    columns = []
    for name in names:
        for times, _ in runs[name][:1]:
            columns += [(name, v) for v in sorted({k.partition("[")[2].rstrip("]") for k in times})]

    def key(w, v):
        return f"{w}[{v}]" if v else w

    print()
    print(f"Beside {a.contended} busy process(es) on the same {a.threads} CPU(s): each program's time over its"
          " own time alone, run by run: median (min-max); then graft's worst row.")
    print()
    print("| workload | " + " | ".join(f"{key(n, v)} alone" for n, v in columns) + " | "
          + " | ".join(f"{key(n, v)} contended/alone" for n, v in columns) + " |")
    print("|---" * (1 + 2 * len(columns)) + "|")
    worst = (0.0, "")
    for w, what in WORKLOADS:
        alone, ratios = [], []
        for n, v in columns:
            q = [t[key(w, v)] for t, _ in runs[n] if key(w, v) in t]
            c = [t[key(w, v)] for t, _ in contended[n] if key(w, v) in t]
            k = min(len(q), len(c))
            alone.append(fmt_time(statistics.median(q)) if q else "-")
            rs = [c[i] / q[i] for i in range(k)]
            ratios.append(ratio_cell(rs) if rs else "-")
            if n == "graft" and rs and statistics.median(rs) > worst[0]:
                worst = (statistics.median(rs), key(what, v))
        print(f"| {what} | " + " | ".join(alone + ratios) + " |")
    if worst[1]:
        print()
        print(f"graft's worst row: {worst[0]:.2f}x ({worst[1]})")


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
