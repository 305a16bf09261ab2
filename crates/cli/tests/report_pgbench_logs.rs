//! `pgrig report` of pgbench's own aggregated log (`-l --aggregate-interval=1`) against an
//! independent clock: with one client and no think time, an interval's `sum_latency` is the time
//! the client was busy in it — the part of the interval the run covered. pgbench aligns intervals
//! to whole seconds, so the first one began before the run (PostgreSQL 15: 0.85 s covered) and
//! must not be rated as a full second; the report's seconds must be exactly the covered ones, its
//! TPS their transactions over their busy time, and near pgbench's own TPS.

mod common;

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
    let m = pgrig_report::input::load("unused.db", &[file.clone()]).unwrap();
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
    assert!(
        (r.tps - tps).abs() <= 0.1 * tps,
        "{} vs pgbench's {tps}",
        r.tps
    );
    let logged: f64 = lines.iter().map(|l| l.1).sum();
    assert_eq!(r.ok, logged, "every logged transaction counts");
    // pgbench leaves the last, partial interval out of its log
    assert!(logged <= processed);
}
