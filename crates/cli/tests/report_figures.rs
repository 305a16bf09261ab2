//! `pgrig report`'s figures against independent clocks.
//!
//! pgbench's own aggregated log (`-l --aggregate-interval=1`): with one client and no think time,
//! an interval's `sum_latency` is the time the client was busy in it — the part of the interval
//! the run covered. pgbench aligns intervals to whole seconds, so the first one began before the
//! run (PostgreSQL 15: 0.4–0.85 s covered) and must not be rated as a full second; the report's
//! seconds must be exactly the covered ones, its TPS their transactions over their busy time, and
//! near pgbench's own TPS.
//!
//! The tail of a run: a stall the test causes itself (a lock on `pgbench_branches` held until
//! after the run's end) makes the last seconds of `pgrig run` dip; they are part of the run (its
//! document says how long it measured), so the report shades no tail.

mod common;

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
    let covered: Vec<&(f64, f64, f64)> = lines.iter().filter(|l| l.2 >= 0.95).collect();
    let m = pgrig_report::input::load("unused.db", std::slice::from_ref(&file)).unwrap();
    let r = &m.loose[0];
    let t0 = lines[0].0;
    let rated: Vec<f64> = r.series.iter().map(|s| t0 + s.t - 1.0).collect();
    let full: Vec<f64> = covered.iter().map(|l| l.0).collect();
    let busy: f64 = covered.iter().map(|l| l.2).sum();
    let by_clock = covered.iter().map(|l| l.1).sum::<f64>() / busy;
    eprintln!(
        "report: {} transactions, {:.1} TPS over seconds {rated:?}; the client's busy time: \
         seconds {full:?} covered, {by_clock:.1} TPS; pgbench: {processed} transactions, {tps} TPS; \
         the first interval covered {:.3} s",
        r.ok, r.tps, lines[0].2
    );
    assert!(lines[0].2 < 0.95, "pgbench's first interval is partial");
    assert_eq!(rated, full, "the report rates exactly the covered seconds");
    assert!(
        (r.tps - by_clock).abs() <= 0.02 * by_clock,
        "{} vs {by_clock}",
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
