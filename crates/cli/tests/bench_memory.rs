//! The client's memory per thread: `pgrig bench` with one thread per client keeps its peak
//! resident set within a small margin of pgbench's under the same command line. Each worker
//! thread holds latency histograms (per script, per second), which used to be sized for an
//! hour of latency up front (180 kB of counts each): at `-c 1000 -j 1000` pgrig peaked at
//! 451 MB where pgbench 15 peaked at 40 MB. Peaks are the kernel's own figure (`ru_maxrss` of
//! the waited-for child), measured side by side in one test at two thread counts: the cost of
//! a thread is the slope between them (what the binary and its start-up cost is the same at
//! both and drops out).

use crate::common;

use std::process::Command;

use common::*;
use pgrig_testkit::fresh_db;

/// Threads (= clients) of the comparison: within the test cluster's connections, with room for
/// the other tests running beside it.
const FEW: usize = 20;
const MANY: usize = 100;

/// The most a thread of pgrig's may cost over one of pgbench's, in kB. Measured with the debug
/// build: 317–402 kB (the histograms grow with the latencies a loaded machine gives; released,
/// 245–275), and 513 kB when each histogram took 180 kB up front.
const MAX_KB_PER_THREAD: i64 = 450;

/// Runs `c` to its end and returns (exit code, peak resident set in kB).
#[allow(clippy::zombie_processes)] // the child is reaped by wait4, which also gives its rusage
fn peak_rss(mut c: Command) -> (Option<i32>, i64) {
    c.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let child = c.spawn().expect("start the client");
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills; the pid is our own child's.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; status and usage are valid for writes.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4");
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, usage.ru_maxrss)
}

/// Peak resident set of `tool` (`pgbench` or pgrig) with `threads` threads and clients.
fn peak_at(db: &pgrig_testkit::TestDb, tool: &str, threads: usize) -> i64 {
    let n = threads.to_string();
    let args = ["-c", &n, "-j", &n, "-t", "20", "-S"];
    let mut c = match tool {
        "pgbench" => db.pgbench(),
        _ => {
            let mut c = pgrig_cmd(db);
            c.arg("bench");
            c
        }
    };
    c.args(args);
    let (code, kb) = peak_rss(c);
    assert_eq!(code, Some(0), "{tool} with {threads} threads");
    kb
}

#[test]
fn a_client_thread_costs_little_more_memory_than_pgbenchs() {
    let db = fresh_db("bench_memory");
    pgbench_init(&db, 1);
    let slope = |tool: &str| {
        let (few, many) = (peak_at(&db, tool, FEW), peak_at(&db, tool, MANY));
        eprintln!("{tool}: peak RSS {few} kB with {FEW} threads, {many} kB with {MANY}");
        (many - few) / (MANY - FEW) as i64
    };
    let (theirs, ours) = (slope("pgbench"), slope("pgrig"));
    eprintln!("a thread: pgbench {theirs} kB, pgrig {ours} kB");
    assert!(
        ours - theirs <= MAX_KB_PER_THREAD,
        "a thread of pgrig's costs {ours} kB, of pgbench's {theirs} kB"
    );
}
