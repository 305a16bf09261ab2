//! pgbench's own log files (`-l`): the per-transaction log
//! (`client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]`, `time`
//! in µs or `skipped`/`failed`/`serialization`/`deadlock`/`other`) and the aggregated log
//! (`--aggregate-interval`: `interval_start num_transactions sum_latency sum_latency_2 min_latency
//! max_latency ...`, PostgreSQL 15 adding lag, skipped, retried, retries and failures). A run's
//! thread files (`PREFIX.PID`, `PREFIX.PID.1`, ...) are read together into one run.

use std::collections::BTreeMap;

use crate::bound;
use crate::error::ReportError;
use crate::input::curve;
use crate::model::{Distribution, Latency, Run, Second};

/// One transaction of the per-transaction log.
struct Tx {
    script: u32,
    /// completion time in µs since the epoch
    end_us: f64,
    /// latency in µs; None when skipped or failed
    latency_us: Option<f64>,
    retries: f64,
}

/// One line of the aggregated log.
struct Interval {
    start: f64,
    ok: f64,
    sum_us: f64,
    max_us: f64,
    failed: f64,
    retries: f64,
}

fn bad(file: &str, line: usize, message: String) -> ReportError {
    ReportError::Input {
        file: file.to_string(),
        line,
        message,
    }
}

/// A finite number (`inf`, `nan` and `1e999` are refused: pgbench never writes them).
fn number(file: &str, line: usize, field: &str, what: &str) -> Result<f64, ReportError> {
    match field.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(bad(
            file,
            line,
            format!("{what} \"{field}\" is not a finite number"),
        )),
        Err(_) => Err(bad(
            file,
            line,
            format!("expected a number for {what}, found \"{field}\" (not a pgbench -l log line)"),
        )),
    }
}

/// Reads the log files of one run (one file per pgbench thread) into a run named `id`.
pub fn parse(id: &str, files: &[(String, String)]) -> Result<Run, ReportError> {
    let first = files
        .iter()
        .flat_map(|(_, t)| t.split_whitespace().next())
        .next();
    let aggregated = match first {
        None => {
            return Err(ReportError::Empty(format!(
                "{}: the log is empty (no transactions logged)",
                files.first().map(|f| f.0.as_str()).unwrap_or(id)
            )))
        }
        // the aggregated log starts with a Unix time, the per-transaction log with a client id
        Some(f) => f.parse::<f64>().map(|v| v > 1e8).unwrap_or(false),
    };
    if aggregated {
        let mut all = Vec::new();
        // pgbench aligns intervals to whole seconds: a file's first one began before the run
        let mut partial_until = f64::NEG_INFINITY;
        for (name, text) in files {
            let file = intervals(name, text)?;
            partial_until = partial_until.max(file.first().map_or(partial_until, |i| i.start));
            all.extend(file);
        }
        Ok(from_intervals(id, all, partial_until))
    } else {
        let mut all = Vec::new();
        for (name, text) in files {
            all.extend(transactions(name, text)?);
        }
        Ok(from_transactions(id, all))
    }
}

fn transactions(file: &str, text: &str) -> Result<Vec<Tx>, ReportError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        if f.len() < 6 || f.len() > 8 {
            return Err(bad(file, n, format!(
                "expected 6 to 8 fields (client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]), found {}",
                f.len()
            )));
        }
        let latency_us = match f[2] {
            "skipped" | "failed" | "serialization" | "deadlock" | "other" => None,
            t => Some(number(file, n, t, "the latency (time)")?),
        };
        let script = number(file, n, f[3], "script_no")? as u32;
        let end_us = number(file, n, f[4], "time_epoch")? * 1e6 + number(file, n, f[5], "time_us")?;
        if !end_us.is_finite() {
            return Err(bad(
                file,
                n,
                format!("time_epoch \"{}\" is out of range", f[4]),
            ));
        }
        let retries = if f.len() == 8 {
            number(file, n, f[7], "retries")?
        } else {
            0.0
        };
        out.push(Tx {
            script,
            end_us,
            latency_us,
            retries,
        });
    }
    Ok(out)
}

fn intervals(file: &str, text: &str) -> Result<Vec<Interval>, ReportError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        if f.len() < 6 {
            return Err(bad(file, n, format!(
                "expected at least 6 fields (interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency ...), found {}",
                f.len()
            )));
        }
        let v: Vec<f64> = f
            .iter()
            .enumerate()
            .map(|(k, x)| number(file, n, x, &format!("field {}", k + 1)))
            .collect::<Result<_, _>>()?;
        // PostgreSQL 15+: ... skipped retried retries serialization_failures deadlock_failures [other]
        let (retries, failed) = if v.len() >= 15 {
            (v[12], v[13..].iter().sum())
        } else {
            (0.0, 0.0)
        };
        out.push(Interval {
            start: v[0],
            ok: v[1],
            sum_us: v[2],
            max_us: v[5],
            failed,
            retries,
        });
    }
    Ok(out)
}

/// Thread files share interval starts: their intervals merged, by start.
fn merge_threads(all: Vec<Interval>) -> BTreeMap<i64, Interval> {
    let mut by_start: BTreeMap<i64, Interval> = BTreeMap::new();
    for iv in all {
        let e = by_start.entry(iv.start as i64).or_insert(Interval {
            start: iv.start,
            ok: 0.0,
            sum_us: 0.0,
            max_us: 0.0,
            failed: 0.0,
            retries: 0.0,
        });
        e.ok += iv.ok;
        e.sum_us += iv.sum_us;
        e.max_us = e.max_us.max(iv.max_us);
        e.failed += iv.failed;
        e.retries += iv.retries;
    }
    by_start
}

/// The aggregation interval: the smallest gap between interval starts (1 s without one).
fn interval_step(starts: &[f64]) -> f64 {
    let step = starts
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    if step.is_finite() && step > 0.0 {
        step
    } else {
        1.0
    }
}

/// The run of the aggregated log's intervals; those starting at or before `partial_until` (each
/// thread file's first interval) are partial — the run began inside them — and give no rate: their
/// transactions count in the totals, the per-second series and TPS come from the full intervals
/// (all of them when there is no other).
fn from_intervals(id: &str, all: Vec<Interval>, partial_until: f64) -> Run {
    let by_start = merge_threads(all);
    let starts: Vec<f64> = by_start.values().map(|i| i.start).collect();
    let step = interval_step(&starts);
    let t0 = starts.first().copied().unwrap_or(0.0);
    let full = |i: &&Interval| i.start > partial_until;
    let partial = by_start.values().filter(|i| !full(i)).count();
    let rated = |i: &&Interval| full(i) || partial == by_start.len();
    let series: Vec<Second> = by_start
        .values()
        .filter(rated)
        .map(|i| Second {
            t: i.start - t0 + step,
            tps: i.ok / step,
            latency_mean_ms: (i.ok > 0.0).then(|| i.sum_us / i.ok / 1000.0),
            latency_max_ms: (i.ok > 0.0).then_some(i.max_us / 1000.0),
            failed: i.failed,
            retries: i.retries,
            ..Second::default()
        })
        .collect();
    let series = bound::series(series);
    let ok: f64 = by_start.values().map(|i| i.ok).sum();
    let sum: f64 = by_start.values().map(|i| i.sum_us).sum();
    let rated_ok: f64 = by_start.values().filter(rated).map(|i| i.ok).sum();
    // the rated intervals, counted before the series is bounded (which may merge seconds)
    let rated_n = by_start.values().filter(rated).count();
    let duration = rated_n as f64 * step;
    let mut provenance = vec![(
        "source".into(),
        "pgbench aggregated log (--aggregate-interval)".into(),
    )];
    if partial < by_start.len() && partial > 0 {
        provenance.push((
            "partial first interval".into(),
            format!(
                "{} transaction(s) in the interval(s) the run began inside: counted, not rated (TPS over the {} full interval(s))",
                fmt_count(by_start.values().filter(|i| !full(i)).map(|i| i.ok).sum()),
                rated_n
            ),
        ));
    }
    Run {
        id: id.to_string(),
        tps: if duration > 0.0 {
            rated_ok / duration
        } else {
            0.0
        },
        duration_s: duration,
        ok,
        failed: by_start.values().map(|i| i.failed).sum(),
        retries: by_start.values().map(|i| i.retries).sum(),
        latency: Latency {
            mean: (ok > 0.0).then(|| sum / ok / 1000.0),
            max: by_start
                .values()
                .filter(|i| i.ok > 0.0)
                .map(|i| i.max_us / 1000.0)
                .reduce(f64::max),
            ..Latency::default()
        },
        series,
        provenance,
        ..Run::default()
    }
}

fn fmt_count(n: f64) -> String {
    format!("{n:.0}")
}

fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    Some(sorted[i] / 1000.0)
}

/// Transactions (sorted by completion) into seconds: count, latency percentiles, failures.
/// A run longer than [`bound::MAX_SERIES_POINTS`] seconds (or with a gap that long) is counted
/// in wider intervals, so the series never has more points than that, whatever the epochs.
fn per_second(all: &[Tx]) -> Vec<Second> {
    let t0 = all.first().map(|t| (t.end_us / 1e6).floor()).unwrap_or(0.0);
    let span = all.last().map(|t| t.end_us / 1e6 - t0).unwrap_or(0.0);
    let width = bound::interval_width(span);
    let mut buckets: BTreeMap<i64, (Vec<f64>, f64, f64)> = BTreeMap::new();
    for tx in all {
        let b = (((tx.end_us / 1e6) - t0) / width).floor() as i64;
        let b = b.clamp(0, bound::MAX_SERIES_POINTS as i64 - 1);
        let e = buckets.entry(b).or_default();
        match tx.latency_us {
            Some(l) => e.0.push(l),
            None => e.1 += 1.0,
        }
        e.2 += tx.retries;
    }
    let last = buckets.keys().next_back().copied().unwrap_or(0);
    (0..=last)
        .map(|b| {
            let (mut lat, failed, retries) = buckets.remove(&b).unwrap_or_default();
            lat.sort_by(f64::total_cmp);
            Second {
                t: (b + 1) as f64 * width,
                tps: lat.len() as f64 / width,
                latency_mean_ms: (!lat.is_empty())
                    .then(|| lat.iter().sum::<f64>() / lat.len() as f64 / 1000.0),
                latency_p50_ms: quantile(&lat, 0.5),
                latency_p99_ms: quantile(&lat, 0.99),
                latency_max_ms: quantile(&lat, 1.0),
                failed: failed / width,
                retries: retries / width,
                ..Second::default()
            }
        })
        .collect()
}

fn from_transactions(id: &str, mut all: Vec<Tx>) -> Run {
    all.sort_by(|a, b| a.end_us.total_cmp(&b.end_us));
    let series = per_second(&all);
    let mut lat: Vec<f64> = all.iter().filter_map(|t| t.latency_us).collect();
    lat.sort_by(f64::total_cmp);
    let duration = match (all.first(), all.last()) {
        (Some(a), Some(b)) => ((b.end_us - a.end_us) / 1e6).max(1e-3),
        _ => 0.0,
    };
    let mut scripts: Vec<u32> = all.iter().map(|t| t.script).collect();
    scripts.sort_unstable();
    scripts.dedup();
    let mut distributions = vec![Distribution {
        name: "all transactions".into(),
        points: curve::from_samples(lat.clone()),
    }];
    if scripts.len() > 1 {
        for s in scripts {
            let l = all
                .iter()
                .filter(|t| t.script == s)
                .filter_map(|t| t.latency_us)
                .collect();
            distributions.push(Distribution {
                name: format!("script {s}"),
                points: curve::from_samples(l),
            });
        }
    }
    distributions.retain(|d| !d.points.is_empty());
    Run {
        id: id.to_string(),
        tps: lat.len() as f64 / duration.max(1e-9),
        duration_s: duration,
        ok: lat.len() as f64,
        failed: all.iter().filter(|t| t.latency_us.is_none()).count() as f64,
        retries: all.iter().map(|t| t.retries).sum(),
        latency: Latency {
            mean: (!lat.is_empty()).then(|| lat.iter().sum::<f64>() / lat.len() as f64 / 1000.0),
            p50: quantile(&lat, 0.5),
            p90: quantile(&lat, 0.9),
            p95: quantile(&lat, 0.95),
            p99: quantile(&lat, 0.99),
            p99_9: quantile(&lat, 0.999),
            max: quantile(&lat, 1.0),
        },
        series,
        distributions,
        provenance: vec![("source".into(), "pgbench per-transaction log (-l)".into())],
        ..Run::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Result<Run, ReportError> {
        parse("log", &[("pgbench_log.1".into(), text.into())])
    }

    #[test]
    fn per_transaction_log_gives_seconds_and_percentiles() {
        let r = one("0 1 1000 0 1700000000 100000\n0 2 3000 0 1700000000 900000\n1 1 2000 0 1700000001 500000\n1 2 failed 0 1700000001 600000\n").unwrap();
        assert_eq!(r.series.len(), 2);
        assert_eq!(r.series[0].tps, 2.0);
        assert_eq!(r.series[1].failed, 1.0);
        assert_eq!(r.latency.p50, Some(2.0));
        assert_eq!(r.latency.max, Some(3.0));
        assert_eq!(r.ok, 3.0);
    }

    #[test]
    fn aggregated_log_of_pg15_and_pg14() {
        let r = one("1699999999 4 8000 0 1000 5000 0 0 0 0 0 0 0 0 0\n1700000000 10 20000 0 1000 5000 0 0 0 0 0 1 2 3 0\n1700000001 20 20000 0 500 900 0 0 0 0 0 0 0 0 0\n").unwrap();
        assert_eq!(r.series.len(), 2);
        assert_eq!(
            (r.series[0].tps, r.series[0].failed, r.series[0].retries),
            (10.0, 3.0, 2.0)
        );
        assert_eq!(r.series[1].latency_mean_ms, Some(1.0));
        let old = one("1700000000 10 20000 0 1000 5000\n").unwrap();
        assert_eq!(old.tps, 10.0);
    }

    #[test]
    fn epochs_a_century_apart_give_a_bounded_series() {
        // issue 21: tried to allocate 13.6 GB and aborted
        let r = one("0 1 1000 0 1700000000 0\n0 2 1000 0 1800000000 0\n").unwrap();
        assert!(
            r.series.len() <= bound::MAX_SERIES_POINTS,
            "{}",
            r.series.len()
        );
        assert_eq!(r.series.iter().filter(|s| s.tps > 0.0).count(), 2);
        assert_eq!(r.ok, 2.0);
        // an 11-day gap (a 240 MB page)
        let r = one("0 1 1000 0 1700000000 0\n0 2 1000 0 1700950400 0\n").unwrap();
        assert!(r.series.len() <= bound::MAX_SERIES_POINTS);
        let r = one("0 1 1000 0 1 0\n0 2 1000 0 1000000000000000000 0\n").unwrap();
        assert!(r.series.len() <= bound::MAX_SERIES_POINTS);
    }

    #[test]
    fn non_finite_values_are_refused_with_file_and_line() {
        // issue 21: `inf` and `1e18` epochs panicked with "capacity overflow"
        let e = one("0 1 1000 0 1700000000 0\n0 2 1000 0 inf 0\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "pgbench_log.1:2: time_epoch \"inf\" is not a finite number"
        );
        let e = one("0 1 nan 0 1700000000 0\n").unwrap_err().to_string();
        assert!(
            e.starts_with("pgbench_log.1:1: the latency (time) \"nan\""),
            "{e}"
        );
        let e = one("0 1 1 0 1e306 0\n").unwrap_err().to_string();
        assert_eq!(e, "pgbench_log.1:1: time_epoch \"1e306\" is out of range");
        let e = one("1700000000 10 20000 0 1000 5000\n1700000001 -inf 1 0 1 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("pgbench_log.1:2: field 2 \"-inf\""), "{e}");
    }

    #[test]
    fn aggregated_logs_over_a_long_span_are_bounded() {
        let text: String = (0..30_000)
            .map(|i| format!("{} 10 20000 0 1000 5000\n", 1_700_000_000 + i))
            .collect();
        let r = one(&text).unwrap();
        assert!(r.series.len() <= bound::MAX_SERIES_POINTS);
        // the first interval is the run's partial first second: counted, not rated
        assert_eq!((r.ok, r.duration_s, r.tps), (300_000.0, 29_999.0, 10.0));
    }

    #[test]
    fn a_partial_first_interval_is_counted_but_not_rated_as_a_full_second() {
        // the run began at .7 of the first second: 30 transactions there, then 100 a second
        let two = |start: u64, n: u64| format!("{start} {n} {} 0 1000 1000\n", n * 1000);
        let text = [
            two(1700000000, 30),
            two(1700000001, 100),
            two(1700000002, 100),
        ]
        .concat();
        let r = parse("log", &[("pgbench_log.1".into(), text.clone())]).unwrap();
        assert_eq!(r.ok, 230.0, "every transaction counts");
        assert_eq!(r.tps, 100.0, "the rate is the full seconds'");
        assert_eq!(r.series.iter().map(|s| s.t).collect::<Vec<_>>(), [2.0, 3.0]);
        assert!(r.series.iter().all(|s| s.tps == 100.0));
        // a second thread that began in the next second: both first intervals are partial
        let late = [two(1700000001, 60), two(1700000002, 100)].concat();
        let r = parse(
            "log",
            &[
                ("pgbench_log.1".into(), text),
                ("pgbench_log.1.1".into(), late),
            ],
        )
        .unwrap();
        assert_eq!((r.ok, r.tps, r.series.len()), (390.0, 200.0, 1));
    }

    #[test]
    fn malformed_lines_name_file_and_line() {
        let e = one("0 1 1000 0 1700000000 100000\n0 2 abc 0 1700000000 100000\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "pgbench_log.1:2: expected a number for the latency (time), found \"abc\" (not a pgbench -l log line)"
        );
        let e = one("0 1 1000\n").unwrap_err().to_string();
        assert!(
            e.starts_with("pgbench_log.1:1: expected 6 to 8 fields"),
            "{e}"
        );
        assert!(one("\n").is_err());
    }
}
