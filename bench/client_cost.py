#!/usr/bin/env python3
"""Client cost of pgrig vs the installed pgbench, side by side on one throwaway server.

Measures, in one run (alternating A/B where timing matters):
  * user-space instructions per transaction (callgrind, -c 1, difference of two -t counts),
  * TPS and client CPU (user+sys) per transaction for -c 8 -j 2 -T 5 in every query mode,
    plus a pipelined script,
  * system calls per transaction (perf's raw_syscalls tracepoint),
  * peak RSS with -c 1000 -j 2 and the cost of one idle client.
Writes the "## Client cost" section of docs/performance.md (with --write) and prints it.

Usage: bench/client_cost.py [--rounds N] [--duration S] [--write]
Needs: cargo, pgbench, valgrind, perf (as root, the server runs as an unprivileged user).
"""

import argparse
import glob
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, env=None, check=True):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return p


def run_measured(cmd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.stdout, p.stderr, cpu


def peak_rss_kb(cmd, env):
    """Peak RSS of one command, via GNU time (RUSAGE_CHILDREN's max is sticky across children)."""
    p = sh(["/usr/bin/time", "-f", "RSS %M", *cmd], env=env)
    m = re.search(r"^RSS (\d+)$", p.stderr, re.M)
    return int(m.group(1))


def tx_count(stdout):
    m = re.search(r"number of transactions actually processed: (\d+)", stdout)
    return int(m.group(1))


def tps(stdout):
    m = re.search(r"tps = ([\d.]+) \(without initial connection time\)", stdout)
    return float(m.group(1))


def real_pgbench():
    """The pgbench binary itself: Debian's /usr/bin/pgbench is a Perl wrapper (pg_wrapper), which
    would hide pgbench from valgrind and add Perl's start-up to its CPU time."""
    if os.environ.get("PGRIG_PGBENCH"):
        return os.environ["PGRIG_PGBENCH"]
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pgbench"), key=lambda p: int(p.split("/")[4]))
    return found[-1] if found else shutil.which("pgbench")


class Tools:
    def __init__(self, pgrig, env):
        self.pgrig = pgrig
        self.env = env
        self.pgbench = real_pgbench()

    def cmd(self, tool, args):
        if tool == "pgbench":
            return [self.pgbench, *args]
        return [self.pgrig, "bench", *args]


def callgrind_instr(cmd, env):
    # valgrind's own messages go to a log file: its exit summary can go missing when stderr is
    # a pipe of its own.
    with tempfile.TemporaryDirectory() as d:
        out, log = os.path.join(d, "callgrind.out"), os.path.join(d, "valgrind.log")
        sh(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", f"--log-file={log}", *cmd], env=env)
        text = open(log).read()
    m = re.findall(r"Collected : (\d+)", text)
    if not m:
        sys.exit(f"no callgrind summary for {' '.join(cmd)}:\n{text[-2000:]}")
    return sum(int(x) for x in m)


def instructions_per_tx(tools, tool, args, t1=1000, t2=3000, env=None):
    env = env or tools.env
    a = callgrind_instr(tools.cmd(tool, [*args, "-c", "1", "-t", str(t1)]), env)
    b = callgrind_instr(tools.cmd(tool, [*args, "-c", "1", "-t", str(t2)]), env)
    return (b - a) / (t2 - t1)


def syscalls_per_tx_perf(tools, tool, args):
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as f:
        p = sh(["perf", "stat", "-e", "raw_syscalls:sys_enter", "-x,", "-o", f.name, *tools.cmd(tool, args)], env=tools.env)
        count = next(int(l.split(",")[0]) for l in f.read().splitlines() if "raw_syscalls" in l)
    return count / tx_count(p.stdout)


def throughput(tools, args, rounds, duration):
    """Alternating runs; returns {tool: (median tps, median cpu us per tx)}."""
    res = {"pgbench": [], "pgrig": []}
    for _ in range(rounds):
        for tool in ("pgbench", "pgrig"):
            out, _, cpu = run_measured(tools.cmd(tool, [*args, "-T", str(duration)]), tools.env)
            res[tool].append((tps(out), cpu / tx_count(out) * 1e6))
    med = lambda xs: sorted(xs)[len(xs) // 2]
    return {t: (med([x[0] for x in v]), med([x[1] for x in v])) for t, v in res.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--write", action="store_true", help="update docs/performance.md")
    ap.add_argument("--skip-callgrind", action="store_true")
    opts = ap.parse_args()

    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    sh(["cargo", "build", "--profile", "profiling", "-p", "pgrig-cli"])
    pgrig = os.path.join(target, "profiling", "pgrig")

    state = tempfile.mkdtemp(prefix="pgrig-bench-")
    env = dict(os.environ, XDG_RUNTIME_DIR=state)
    start = sh([pgrig, "server", "start", "--max-connections", "1100"], env=env)
    for k, v in re.findall(r"^export (\w+)=(.*)$", start.stdout, re.M):
        env[k] = v
    try:
        tools = Tools(pgrig, env)
        sh([tools.pgbench, "-i", "-q", "-s", "10"], env=env)
        report = measure(tools, opts)
    finally:
        sh([pgrig, "server", "stop"], env=env, check=False)
        shutil.rmtree(state, ignore_errors=True)

    print(report)
    if opts.write:
        path = os.path.join(ROOT, "docs", "performance.md")
        text = open(path).read()
        # only this script's own section (the analysis after it is written by hand)
        new = re.sub(r"## Client cost \(bench/client_cost\.py\).*?(?=\n## |\Z)",
                     lambda _: report.rstrip() + "\n", text, count=1, flags=re.S)
        open(path, "w").write(new)


def measure(tools, opts):
    lines = []
    pg_version = sh([tools.pgbench, "--version"]).stdout.strip()
    rev = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.strip()
    cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    lines += [
        "## Client cost (bench/client_cost.py)",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} with `bench/client_cost.py --rounds {opts.rounds} "
        f"--duration {opts.duration}` at pgrig {rev}, against {pg_version}; {os.cpu_count()} cores "
        f"({cpu_model}), {platform.release()}; one throwaway server (`pgrig server start`), "
        "pgbench tables at scale 10, client and server on the same machine.",
        "",
    ]
    if not opts.skip_callgrind:
        lines += ["### User-space instructions per transaction (callgrind, `-c 1`, Δ of `-t 3000` and `-t 1000`)", ""]
        lines += [
            "pgrig is measured with speculative reads off (`PGRIG_RT_SPECULATE=0`), and as built in the",
            "last column (a thread's sole connection tries `recvfrom` before `epoll_wait` while that",
            "pays; under valgrind the timing that decides it is not the real one).",
            "",
        ]
        lines += ["| workload | pgbench | pgrig | pgrig / pgbench | goal | pgrig, speculating |",
                  "|---|---:|---:|---:|---:|---:|"]
        for name, args in [("select-only `-M prepared`", ["-S", "-M", "prepared"]),
                           ("tpcb-like `-M prepared`", ["-M", "prepared"]),
                           ("select-only `-M simple`", ["-S", "-M", "simple"]),
                           ("select-only `-M extended`", ["-S", "-M", "extended"])]:
            a = instructions_per_tx(tools, "pgbench", args)
            b = instructions_per_tx(tools, "pgrig", args, env=dict(tools.env, PGRIG_RT_SPECULATE="0"))
            c = instructions_per_tx(tools, "pgrig", args)
            goal = "≤ 0.33" if "prepared" in name else "≤ 1"
            lines.append(f"| {name} | {a:,.0f} | {b:,.0f} | {b / a:.2f} | {goal} | {c:,.0f} |")
        lines.append("")

    lines += ["### System calls per transaction (`perf stat -e raw_syscalls:sys_enter`, `-S -M prepared -T 4`)", ""]
    lines += ["strace slows the traced client so much that it changes what it does (pgbench's first",
              "`recvfrom` then finds the response already there); perf's tracepoint count does not.", ""]
    lines += ["| clients | pgbench | pgrig | ratio |", "|---|---:|---:|---:|"]
    for c, j in (("1", "1"), ("8", "2")):
        a = syscalls_per_tx_perf(tools, "pgbench", ["-S", "-M", "prepared", "-c", c, "-j", j, "-T", "4"])
        b = syscalls_per_tx_perf(tools, "pgrig", ["-S", "-M", "prepared", "-c", c, "-j", j, "-T", "4"])
        lines.append(f"| `-c {c} -j {j}` | {a:.2f} | {b:.2f} | {b / a:.2f} |")
    lines.append("")

    pipeline = os.path.join(tempfile.mkdtemp(), "pipeline.sql")
    with open(pipeline, "w") as f:
        f.write("\\set aid random(1, 100000 * :scale)\n\\startpipeline\n")
        f.write("SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n" * 8)
        f.write("\\endpipeline\n")
    lines += [f"### Throughput and client CPU (`-c 8 -j 2 -T {opts.duration}`, {opts.rounds} alternating rounds, medians)", ""]
    lines += ["| workload | pgbench tps | pgrig tps | tps ratio (goal ≥ 1.15) | pgbench CPU µs/tx | pgrig CPU µs/tx | CPU ratio (goal ≤ 0.5) |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for name, args in [("select-only prepared", ["-S", "-M", "prepared"]),
                       ("select-only extended", ["-S", "-M", "extended"]),
                       ("select-only simple", ["-S", "-M", "simple"]),
                       ("pipelined 8 selects, extended", ["-M", "extended", "-f", pipeline])]:
        r = throughput(tools, [*args, "-c", "8", "-j", "2"], opts.rounds, opts.duration)
        (at, ac), (bt, bc) = r["pgbench"], r["pgrig"]
        lines.append(f"| {name} | {at:,.0f} | {bt:,.0f} | {bt / at:.2f} | {ac:.2f} | {bc:.2f} | {bc / ac:.2f} |")
    lines.append("")

    lines += ["### Memory (`-S -c 1000 -j 2 -t 20`, peak RSS)", ""]
    lines += ["| tool | peak RSS, 1000 clients | peak RSS, 1 client | per idle client |", "|---|---:|---:|---:|"]
    for tool in ("pgbench", "pgrig"):
        big = peak_rss_kb(tools.cmd(tool, ["-S", "-c", "1000", "-j", "2", "-t", "20"]), tools.env)
        one = peak_rss_kb(tools.cmd(tool, ["-S", "-c", "1", "-j", "1", "-t", "20"]), tools.env)
        lines.append(f"| {tool} | {big / 1024:.1f} MB | {one / 1024:.1f} MB | {(big - one) / 999:.1f} kB |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
