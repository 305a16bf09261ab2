//! `pgrig report`'s figures against independent clocks.
//!
//! pgbench's own aggregated log (`-l --aggregate-interval=1`): with one client and no think time,
//! an interval's `sum_latency` is the time the client was busy in it — the part of the interval
//! the run covered. pgbench aligns intervals to whole seconds, so the first one began before the
//! run (PostgreSQL 15: 0.4–0.85 s covered) and must not be rated as a full second; the report's
//! seconds must be exactly the log's later ones, its TPS their transactions per second, near the
//! client's busy-time rate and pgbench's own TPS. (Busy time only confirms: on a loaded host a
//! client waits for a CPU between transactions, so a whole second can show less than 0.95 s busy.)
//!
//! The tail of a run: a stall the test causes itself (a lock on `pgbench_branches` held until
//! after the run's end) makes the last seconds of `pgrig run` dip; they are part of the run (its
//! document says how long it measured), so the report shades no tail.

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use pgrig_testkit::fresh_db;

/// The number after `label` in pgbench's report.
fn figure(stdout: &str, label: &str) -> f64 {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label:?} in\n{stdout}"));
    let n: String = line
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    n.parse().unwrap()
}

#[test]
fn an_aggregated_logs_partial_first_second_is_counted_but_not_rated() {
    let _alone = common::alone();
    let db = fresh_db("agg_log");
    common::pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("agg");
    let prefix_arg = format!("--log-prefix={}", prefix.display());
    let out = common::pgbench(
        &db,
        &[
            "-T",
            "4",
            "-c",
            "1",
            "-l",
            "--aggregate-interval=1",
            &prefix_arg,
        ],
    );
    assert!(out.success(), "{}", out.stderr);
    let processed = figure(&out.stdout, "number of transactions actually processed:");
    let tps = figure(&out.stdout, "tps =");
    let file = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path().display().to_string())
        .find(|p| p.contains("agg."))
        .unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    eprintln!("{file}:\n{text}");
    // (interval start, transactions, seconds the one client was busy)
    let lines: Vec<(f64, f64, f64)> = text
        .lines()
        .map(|l| {
            let f: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            (f[0], f[1], f[2] / 1e6)
        })
        .collect();
    // every interval after each file's first is a whole second of the run
    let covered: Vec<&(f64, f64, f64)> = lines.iter().skip(1).collect();
    let m = pgrig_report::input::load("unused.db", std::slice::from_ref(&file)).unwrap();
    let r = &m.loose[0];
    let t0 = lines[0].0;
    let rated: Vec<f64> = r.series.iter().map(|s| t0 + s.t - 1.0).collect();
    let full: Vec<f64> = covered.iter().map(|l| l.0).collect();
    let busy: f64 = covered.iter().map(|l| l.2).sum();
    let by_clock = covered.iter().map(|l| l.1).sum::<f64>() / busy;
    eprintln!(
        "report: {} transactions, {:.1} TPS over seconds {rated:?}; the log's whole seconds \
         {full:?}, {by_clock:.1} TPS by the client's busy time; pgbench: {processed} transactions, \
         {tps} TPS; the first interval covered {:.3} s",
        r.ok, r.tps, lines[0].2
    );
    assert_eq!(rated, full, "the report rates exactly the whole seconds");
    // the rate over the whole seconds, from the log: exactly what the report says
    let per_second = covered.iter().map(|l| l.1).sum::<f64>() / covered.len() as f64;
    assert!(
        (r.tps - per_second).abs() <= 1e-9 * per_second,
        "{} vs the whole seconds' {per_second}",
        r.tps
    );
    // the client's busy time agrees (it is at most the second; under load a little less)
    assert!(
        r.tps <= by_clock * 1.01 && r.tps >= by_clock * 0.5,
        "{} vs {by_clock} by busy time",
        r.tps
    );
    // pgbench's own figure also rates the unlogged last fraction of a second; on a busy host one
    // second differs from the next by as much as a quarter
    assert!(
        (r.tps - tps).abs() <= 0.25 * tps,
        "{} vs pgbench's {tps}",
        r.tps
    );
    let logged: f64 = lines.iter().map(|l| l.1).sum();
    assert_eq!(r.ok, logged, "every logged transaction counts");
    // pgbench leaves the last, partial interval out of its log
    assert!(logged <= processed);
}

#[test]
fn a_stall_until_the_runs_end_is_not_shaded_as_its_tail() {
    let _alone = common::alone();
    let db = fresh_db("stall_tail");
    common::pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut c = common::pgrig_cmd(&db);
    c.args([
        "run",
        "--target",
        &db.conninfo(),
        "-c",
        "2",
        "-T",
        "8s",
        "--json",
    ])
    .arg(&json)
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    // every tpcb-like transaction updates a branch: none completes while the lock is held
    std::thread::sleep(Duration::from_millis(5300));
    db.psql(
        "BEGIN; LOCK TABLE pgbench_branches IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3.2); COMMIT",
    );
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = pgrig_report::input::load("unused.db", &[json.display().to_string()]).unwrap();
    let r = &m.loose[0];
    let tps: Vec<f64> = r.series.iter().map(|s| s.tps).collect();
    let mut sorted = tps.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let stalled: Vec<f64> = r
        .series
        .iter()
        .filter(|s| s.tps < 0.1 * median)
        .map(|s| s.t)
        .collect();
    eprintln!(
        "seconds {:?}: TPS {tps:?}, stalled {stalled:?}, measured {} s",
        r.series.iter().map(|s| s.t).collect::<Vec<_>>(),
        r.duration_s
    );
    let last = r.series.last().unwrap().t;
    assert!(
        stalled.contains(&last),
        "the stall reaches the run's last second"
    );
    assert!(
        last <= r.duration_s + 1e-3,
        "every second is inside the run"
    );
    let sections = pgrig_report::choose::sections(&m, &pgrig_report::metric::METRICS[0]);
    let chart = sections[0]
        .charts
        .iter()
        .find(|c| c.id == "run-tps-over-time")
        .unwrap();
    let bands: Vec<&str> = chart.bands.iter().map(|b| b.label.as_str()).collect();
    assert!(
        !bands.contains(&"tail"),
        "the stall is shaded as a tail: {bands:?}"
    );
}
