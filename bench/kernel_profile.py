#!/usr/bin/env python3
"""Where a client's CPU goes, by kernel path: pgbench and pgrig side by side.

Runs `perf record -g` (cpu-clock sampling, works without a PMU, e.g. in a VM) on the installed
pgbench and on pgrig for the same benchmark against the server in the PG* environment, and
classifies every sample of the client process by its stack:

  user            the client's own code (and libc)
  send: wake      inside sendto, waking the backend (sock_def_readable / try_to_wake_up)
  send: other     the rest of sendto (copying, skb allocation, entry/exit)
  recv            recvfrom
  poll: sleep     epoll_wait / ppoll blocked (scheduler switching away and back)
  poll: other     the rest of epoll_wait / ppoll
  preempted       switched out on the way back from a system call (another task's turn)
  other kernel    page faults, timers, start-up

Each sample carries its cpu-clock period, so the shares add up to the client's own CPU time
(perf's overhead is not in it); µs/tx divides that by the transactions.
Usage: bench/kernel_profile.py [--duration 5] [--args "-S -M prepared -c 8 -j 2"]
Env: PGRIG (the pgrig binary; default target/profiling/pgrig, built with `cargo build --profile profiling`), PGBENCH (default: pgbench on PATH).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

CATS = ["user", "send: wake", "send: other", "recv", "poll: sleep", "poll: other",
        "preempted", "other kernel"]


def classify(stack):
    """stack: list of symbol names, leaf first; kernel frames have addresses >= 0xffff…"""
    kernel = [s for k, s in stack if k]
    if not kernel or not stack[0][0]:
        return "user"
    names = set(kernel)
    if "exit_to_user_mode_loop" in names and "schedule" in names and not (
            names & {"do_epoll_wait", "do_sys_poll", "do_epoll_pwait.part.0"}):
        return "preempted"
    if names & {"__sys_sendto", "__x64_sys_sendto"}:
        if names & {"sock_def_readable", "try_to_wake_up", "__wake_up_sync_key"}:
            return "send: wake"
        return "send: other"
    if names & {"__sys_recvfrom", "__x64_sys_recvfrom"}:
        return "recv"
    if names & {"do_epoll_wait", "do_sys_poll", "__x64_sys_epoll_pwait", "__x64_sys_ppoll"}:
        return "poll: sleep" if "schedule" in names else "poll: other"
    return "other kernel"


def profile(label, cmd, duration, tmp):
    data = os.path.join(tmp, label + ".perf")
    out = subprocess.run(["perf", "record", "-q", "-g", "-o", data, "--"] + cmd,
                         capture_output=True, text=True)
    tps = next((float(l.split("=")[1].split()[0]) for l in out.stdout.splitlines()
                if l.startswith("tps =")), None)
    if tps is None:
        sys.exit(f"{label} failed:\n{out.stdout}\n{out.stderr}")
    script = subprocess.run(["perf", "script", "-i", data, "-F", "period,ip,sym"],
                            capture_output=True, text=True).stdout
    ns = dict.fromkeys(CATS, 0)
    stack, period = [], 0
    for line in script.splitlines() + [""]:
        line = line.strip()
        if not line:
            if stack:
                ns[classify(stack)] += period
            stack = []
            continue
        if not stack and line.split()[0].isdigit() and len(line.split()) == 1:
            period = int(line)  # the sample's header line: its cpu-clock period in ns
            continue
        ip, _, sym = line.partition(" ")
        stack.append((ip.startswith("ffffffff"), sym))
    total = sum(ns.values()) or 1
    us_tx = total / 1000 / (tps * duration)
    return label, tps, us_tx, {k: v / total for k, v in ns.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--args", default="-S -M prepared -c 8 -j 2")
    a = ap.parse_args()
    pgrig = os.environ.get("PGRIG", os.path.join(os.path.dirname(__file__), "..", "target",
                                                 "profiling", "pgrig"))
    pgbench = os.environ.get("PGBENCH", shutil.which("pgbench"))
    bargs = a.args.split() + ["-T", str(a.duration)]
    with tempfile.TemporaryDirectory() as tmp:
        rows = [profile("pgbench", [pgbench] + bargs, a.duration, tmp),
                profile("pgrig", [pgrig, "bench"] + bargs, a.duration, tmp)]
    print(f"`{a.args} -T {a.duration}`; perf record -g (cpu-clock samples of the client "
          "process, weighted by their period)\n")
    print("| path | " + " | ".join(f"{r[0]} (% / µs/tx)" for r in rows) + " |")
    print("|---|" + "---:|" * len(rows))
    for c in CATS:
        print(f"| {c} | " + " | ".join(f"{r[3][c]*100:.0f} % / {r[3][c]*r[2]:.2f}" for r in rows)
              + " |")
    print("| **total** | " + " | ".join(f"{r[2]:.2f} µs/tx at {r[1]:,.0f} tps" for r in rows)
          + " |")


if __name__ == "__main__":
    main()
