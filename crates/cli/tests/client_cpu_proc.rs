//! The client's two CPU figures — CPU time and run-queue wait — against the kernel's own counts,
//! read from outside the process: `pgrig run` (and `pgrig study`) is started pinned to one CPU
//! beside a thread that spins on the same CPU, and while it runs the test samples its worker
//! thread's `/proc/PID/task/TID/schedstat` (run time, run-queue wait); when it has exited (a
//! zombie, not yet reaped) the process's `/proc/PID/stat` utime + stime. What pgrig stores
//! (`--json`, the study's record), prints (summary, the study's run line) and shows live
//! (progress lines) must fall within those bounds, and the flags follow the figures: a thread
//! that shared its CPU is `host-contended`, not `client-saturated`. The bounds hold on a loaded
//! machine (more load only widens the gap between samples, which the bounds account for). The
//! tests take turns with the suite's other timing tests (`common::alone`).

use crate::common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pgrig_testkit::fresh_db;
use serde_json::Value;

/// Clock ticks per second of `/proc/PID/stat`'s utime and stime.
fn clock_ticks() -> f64 {
    // SAFETY: sysconf only reads a configuration value.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 }
}

/// The first CPU the test may run on.
fn a_cpu() -> usize {
    let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).expect("affinity");
    (0..nix::sched::CpuSet::count())
        .find(|&c| set.is_set(c).unwrap_or(false))
        .expect("a usable CPU")
}

/// Lets the calling thread (or process, before exec) run only on `cpu`.
fn pin(cpu: usize) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t with one bit set is a valid mask; pid 0 = the caller.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A thread spinning on `cpu` until the returned flag is set.
fn spinner(cpu: usize) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let h = std::thread::spawn(move || {
        pin(cpu).unwrap();
        let mut x = 0u64;
        while !s.load(Ordering::Relaxed) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0);
    });
    (stop, h)
}

/// One reading of the worker thread's schedstat: seconds on a CPU and waiting for one, and
/// when the reading started.
#[derive(Clone, Copy, Debug)]
struct Sample {
    at: Instant,
    run_s: f64,
    wait_s: f64,
}

/// What the test saw from outside: the worker thread's first and last readings, when it was
/// first seen gone, and the process's utime + stime once it had exited.
#[derive(Debug)]
struct Outside {
    /// the last look before the worker thread existed
    unborn: Instant,
    first: Sample,
    last: Sample,
    gone: Instant,
    process_cpu_s: f64,
}

/// How far a schedstat reading can trail the truth: the kernel adds a stint on a CPU or in the
/// run queue when it ends (a running thread's time at the next tick), so a reading taken
/// mid-stint misses it; the worker's connection before its measured window counts here too.
/// Stints last a few ms even on a loaded machine (one scheduler slice per runnable task).
const LAG_S: f64 = 0.1;

impl Outside {
    /// CPU time the worker can have spent in its benchmark window: at least what it spent
    /// between our readings, at most its whole life — and not more than the process's.
    fn cpu_bounds(&self) -> (f64, f64) {
        let lo = self.last.run_s - self.first.run_s - LAG_S;
        let gap = self.gone.duration_since(self.last.at).as_secs_f64();
        let tick = 1.0 / clock_ticks();
        let hi = (self.last.run_s + gap + LAG_S).min(self.process_cpu_s + 2.0 * tick);
        (lo, hi)
    }

    /// The same for the run-queue wait.
    fn wait_bounds(&self) -> (f64, f64) {
        let gap = self.gone.duration_since(self.last.at).as_secs_f64();
        (
            self.last.wait_s - self.first.wait_s - LAG_S,
            self.last.wait_s + gap + LAG_S,
        )
    }
}

/// The TID of the process's thread named `name`, if it is alive.
fn thread_named(pid: u32, name: &str) -> Option<String> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    dir.flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|tid| {
            std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm"))
                .is_ok_and(|c| c.trim() == name)
        })
}

fn schedstat(pid: u32, tid: &str) -> Option<Sample> {
    let at = Instant::now();
    let s = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).ok()?;
    let mut f = s.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some(Sample {
        at,
        run_s: f.next()?? as f64 / 1e9,
        wait_s: f.next()?? as f64 / 1e9,
    })
}

/// `/proc/PID/stat`: (state, utime + stime in seconds). The command name is in parentheses and
/// may hold spaces: the fields after its closing one are counted.
fn proc_stat(pid: u32) -> Option<(char, f64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // after the name: state(3) ... utime(14) stime(15), counted from field 3
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some((f[0].chars().next()?, ticks / clock_ticks()))
}

/// Samples the worker thread every few ms until it is gone, then waits for the process to be a
/// zombie and reads its CPU.
fn watch(pid: u32) -> Outside {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut unborn = Instant::now();
    let tid = loop {
        let look = Instant::now();
        if let Some(t) = thread_named(pid, "pgrig-worker-0") {
            break t;
        }
        unborn = look;
        assert!(Instant::now() < deadline, "no worker thread appeared");
        std::thread::sleep(Duration::from_millis(1));
    };
    let first = schedstat(pid, &tid).expect("the worker's schedstat");
    let mut last = first;
    while let Some(s) = schedstat(pid, &tid) {
        last = s;
        std::thread::sleep(Duration::from_millis(5));
    }
    let gone = Instant::now();
    let process_cpu_s = loop {
        match proc_stat(pid) {
            Some(('Z', cpu)) => break cpu,
            Some(_) => {}
            None => panic!("pgrig was reaped before its CPU was read"),
        }
        assert!(Instant::now() < deadline, "pgrig did not exit");
        std::thread::sleep(Duration::from_millis(5));
    };
    Outside {
        unborn,
        first,
        last,
        gone,
        process_cpu_s,
    }
}

/// A client-only script (meta-commands: the client never waits for the server), in `dir`.
fn spin_script(dir: &Path) -> std::path::PathBuf {
    let script = dir.join("spin.sql");
    std::fs::write(&script, "\\set a random(1, 1000000)\n\\set b :a * 2 + 1\n").unwrap();
    script
}

/// Runs `c` pinned to `cpu`, watching its worker thread from outside; returns what the test
/// saw and the command's stdout and stderr (it must succeed).
fn spawn_pinned(mut c: Command, cpu: usize, dir: &Path) -> (Outside, String, String) {
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    c.stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    // SAFETY: between fork and exec only sched_setaffinity (async-signal-safe) runs.
    unsafe { c.pre_exec(move || pin(cpu)) };
    let mut child = c.spawn().expect("start pgrig");
    let outside = watch(child.id());
    let status = child.wait().unwrap();
    let (stdout, stderr) = (
        std::fs::read_to_string(out).unwrap(),
        std::fs::read_to_string(err).unwrap(),
    );
    assert!(status.success(), "{stdout}\n{stderr}");
    (outside, stdout, stderr)
}

/// `pgrig run` of the client-only script for 3 s, pinned to `cpu`; also returns its `--json`.
fn run_pinned(cpu: usize, dir: &Path) -> (Outside, String, String, Value) {
    let db = fresh_db("cpu_proc");
    let json = dir.join("run.json");
    let mut c = common::pgrig_cmd(&db);
    c.args(["run", "--target", &db.conninfo(), "-w"])
        .arg(spin_script(dir))
        .args(["-T", "3s", "-c", "1", "-j", "1", "--json"])
        .arg(&json);
    let (outside, stdout, stderr) = spawn_pinned(c, cpu, dir);
    let doc = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    (outside, stdout, stderr, doc)
}

/// The number after `prefix` in the line starting with `label`.
fn number_after(text: &str, label: &str, prefix: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no line {label:?} in\n{text}"));
    let rest = &line[line.find(prefix).unwrap_or_else(|| panic!("{line}")) + prefix.len()..];
    let n: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    n.parse().unwrap_or_else(|_| panic!("{line}"))
}

fn within(what: &str, v: f64, (lo, hi): (f64, f64)) {
    eprintln!("{what}: pgrig {v:.4}, /proc bounds [{lo:.4}, {hi:.4}]");
    assert!(lo <= v && v <= hi, "{what}: {v} outside [{lo}, {hi}]");
}

#[test]
fn cpu_time_and_run_queue_wait_match_proc_and_name_the_contention() {
    let _alone = common::alone();
    let cpu = a_cpu();
    let dir = tempfile::tempdir().unwrap();
    let (stop, spin) = spinner(cpu);
    let (outside, stdout, stderr, doc) = run_pinned(cpu, dir.path());
    stop.store(true, Ordering::Relaxed);
    spin.join().unwrap();
    eprintln!("{outside:?}\n{stdout}");
    let c = &doc["client_cpu"];
    let t = &c["threads"][0];
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"));
    let (cpu_s, wait_s, wall_s) = (f(t, "cpu_time_s"), f(t, "run_queue_wait_s"), f(t, "wall_s"));
    // stored: the JSON's seconds within what the kernel counted for the thread and process
    within("CPU time (s)", cpu_s, outside.cpu_bounds());
    within("run-queue wait (s)", wait_s, outside.wait_bounds());
    // on a CPU or waiting for one: never more than the thread lived
    let life = outside.gone.duration_since(outside.unborn).as_secs_f64();
    within("CPU time + run-queue wait (s)", cpu_s + wait_s, (0.0, life));
    assert!((f(c, "cpu_time") - cpu_s / wall_s).abs() < 1e-9, "{c}");
    assert!(
        (f(c, "run_queue_wait") - wait_s / wall_s).abs() < 1e-9,
        "{c}"
    );
    // printed: the summary's seconds are the same figures (two decimals)
    let (lo, hi) = outside.cpu_bounds();
    let printed = number_after(&stdout, "client CPU time:", "time:");
    within("summary CPU time (s)", printed, (lo - 0.005, hi + 0.005));
    let printed = number_after(&stdout, "client run-queue wait:", "wait:");
    let (lo, hi) = outside.wait_bounds();
    within(
        "summary run-queue wait (s)",
        printed,
        (lo - 0.005, hi + 0.005),
    );
    progress_lines_add_up(&stderr, cpu_s, wait_s);
    // sharing its CPU with a spinner, the thread got about half of it and waited the rest:
    // host-contended, and never client-saturated (which would blame the client's own CPU)
    let sc = &doc["self_check"];
    assert!(f(c, "run_queue_wait") >= 0.1, "{c}");
    assert_eq!(sc["host_contended"], true, "{sc}");
    assert!(
        stderr.contains("client thread 0 waited for a CPU"),
        "{stderr}"
    );
    assert!(f(c, "cpu_time") < 0.9, "{c}");
    assert_eq!(sc["client_saturated"], false, "{sc}");
}

/// Each progress line's shares cover one second: summed, they are at most the run's figures
/// (the last partial second has no line), less the rounding to whole percent.
fn progress_lines_add_up(stderr: &str, cpu_s: f64, wait_s: f64) {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("progress:"))
        .collect();
    assert!(!lines.is_empty(), "{stderr}");
    let sum = |prefix: &str| -> f64 {
        let pct = |l: &&str| number_after(l, "progress:", prefix);
        lines.iter().map(pct).sum::<f64>() / 100.0
    };
    let n = lines.len() as f64;
    within(
        "progress CPU time (s)",
        sum("client CPU time"),
        (0.0, cpu_s + 0.005 * n + 0.02),
    );
    within(
        "progress run-queue wait (s)",
        sum("run-queue wait"),
        (0.0, wait_s + 0.005 * n + 0.02),
    );
}

/// `pgrig study` of the same client-only run, pinned beside a spinner: the stored record's
/// seconds fall within /proc's bounds, its two figures are the thread's shares, and the
/// study's line and table name them: `host-contended`, not `client-saturated`.
#[test]
fn a_study_run_stores_and_flags_the_two_figures_as_proc_counts_them() {
    let _alone = common::alone();
    let cpu = a_cpu();
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db("cpu_proc_study");
    spin_script(dir.path());
    let study = format!(
        "name = \"cpu\"\n[target]\nurl = \"{}\"\n[workload]\nscripts = [\"spin.sql\"]\n\
         duration = \"3s\"\nclients = 1\nthreads = 1\n",
        db.url()
    );
    std::fs::write(dir.path().join("study.toml"), study).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["study", "study.toml"]).current_dir(dir.path());
    let (stop, spin) = spinner(cpu);
    let (outside, stdout, stderr) = spawn_pinned(c, cpu, dir.path());
    stop.store(true, Ordering::Relaxed);
    spin.join().unwrap();
    eprintln!("{outside:?}\n{stdout}\n{stderr}");
    let mut e = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    e.args(["results", "export", "--format", "json"])
        .current_dir(dir.path());
    let export = pgrig_testkit::run(e);
    assert!(export.success(), "{}", export.stderr);
    let runs: Value = serde_json::from_str(&export.stdout).unwrap();
    let r = &runs[0];
    let t = &r["client_threads"][0];
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"));
    within(
        "stored CPU time (s)",
        f(t, "cpu_time_s"),
        outside.cpu_bounds(),
    );
    within(
        "stored run-queue wait (s)",
        f(t, "run_queue_wait_s"),
        outside.wait_bounds(),
    );
    let wall = f(t, "wall_s");
    assert!(
        (f(r, "client_cpu_time") - f(t, "cpu_time_s") / wall).abs() < 1e-9,
        "{r}"
    );
    assert!((f(r, "client_run_queue_wait") - f(t, "run_queue_wait_s") / wall).abs() < 1e-9);
    let all = format!("{stdout}{stderr}");
    let line = all
        .lines()
        .find(|l| l.contains("client CPU time"))
        .unwrap_or_else(|| panic!("no run line in\n{all}"));
    let shown = number_after(line, "", "client CPU time");
    assert!(
        (shown - 100.0 * f(r, "client_cpu_time")).abs() <= 0.5 + 1e-9,
        "{line}"
    );
    assert!(
        f(r, "client_run_queue_wait") >= 0.1 && f(r, "client_cpu_time") < 0.9,
        "{r}"
    );
    assert!(all.contains("host-contended"), "{all}");
    assert!(!all.contains("client-saturated"), "{all}");
}
