//! Text for people: the one-line summary of a run, and the table per point at the end (median,
//! min, max and coefficient of variation of tps across repetitions, with flags for client
//! saturation, host contention, high spread, failures and contention). Pure functions over result documents.

use std::fmt::Write;

use serde_json::Value;

/// `clients=4 isolation=serializable`
pub fn point_label(point: &Value) -> String {
    match point.as_object() {
        Some(m) if !m.is_empty() => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                o => format!("{k}={o}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => "(single point)".into(),
    }
}

fn f(v: &Value, path: &[&str]) -> f64 {
    let mut cur = v;
    for p in path {
        cur = &cur[*p];
    }
    cur.as_f64().unwrap_or(0.0)
}

/// One line per finished run.
pub fn run_line(r: &Value) -> String {
    let cpu = crate::client_cpu::of(r).unwrap_or_default();
    format!(
        "{} rep {} round {}: {:.1} tps, p99 {:.3} ms, {} failed, {} retries, client CPU time {:.0}%, run-queue wait {:.0}%",
        point_label(&r["point"]),
        r["repetition"],
        r["round"],
        f(r, &["tps"]),
        f(r, &["latency_ms", "p99"]),
        f(r, &["transactions", "failed"]),
        f(r, &["transactions", "retries"]),
        100.0 * cpu.cpu_time,
        100.0 * cpu.run_queue_wait,
    )
}

/// `client-saturated` and `host-contended` when any of the runs raises them.
fn client_cpu_flags(ds: &[&Value]) -> Vec<&'static str> {
    let raised: Vec<&'static str> = ds
        .iter()
        .filter_map(|d| crate::client_cpu::of(d))
        .flat_map(|c| c.flags())
        .collect();
    [
        crate::client_cpu::CLIENT_SATURATED,
        crate::client_cpu::HOST_CONTENDED,
    ]
    .into_iter()
    .filter(|f| raised.contains(f))
    .collect()
}

/// Share of the sampled sessions that waited on a lock (`Lock:*` wait events).
pub fn lock_share(r: &Value) -> f64 {
    let Some(ev) = r["wait_events"]["events"].as_object() else {
        return 0.0;
    };
    let total: f64 = ev.values().filter_map(Value::as_f64).sum();
    let lock: f64 = ev
        .iter()
        .filter(|(k, _)| k.starts_with("Lock:"))
        .filter_map(|(_, v)| v.as_f64())
        .sum();
    if total > 0.0 {
        lock / total
    } else {
        0.0
    }
}

/// Median, min, max and coefficient of variation (population, in %) of `xs`.
pub fn spread(xs: &[f64]) -> (f64, f64, f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let mut s = xs.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    let median = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    let mean = s.iter().sum::<f64>() / n as f64;
    let var = s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    let cv = if mean > 0.0 {
        100.0 * var.sqrt() / mean
    } else {
        0.0
    };
    (median, s[0], s[n - 1], cv)
}

/// The table per point (and round) of a study's result documents (query runs have their own:
/// `query::summary::table`; "" when only those are given).
pub fn points_table(docs: &[Value]) -> String {
    let mut groups: Vec<(String, u64, Vec<&Value>)> = Vec::new();
    for d in docs.iter().filter(|d| d["workload"] != "query") {
        let key = point_label(&d["point"]);
        let round = d["round"].as_u64().unwrap_or(1);
        match groups.iter_mut().find(|g| g.0 == key && g.1 == round) {
            Some(g) => g.2.push(d),
            None => groups.push((key, round, vec![d])),
        }
    }
    if groups.is_empty() && !docs.is_empty() {
        return String::new();
    }
    let rounds = groups.iter().any(|g| g.1 > 1);
    let width = groups.iter().map(|g| g.0.len()).max().unwrap_or(5).max(5);
    let mut out = String::new();
    let _ = write!(out, "{:<width$}", "point");
    if rounds {
        out.push_str(" round");
    }
    let _ = writeln!(
        out,
        "  runs  tps median       min       max   cv%  p99 ms  retries  failed  flags"
    );
    for (label, round, ds) in &groups {
        let tps: Vec<f64> = ds.iter().map(|d| f(d, &["tps"])).collect();
        let (med, min, max, cv) = spread(&tps);
        let p99s: Vec<f64> = ds.iter().map(|d| f(d, &["latency_ms", "p99"])).collect();
        let retries: f64 = ds.iter().map(|d| f(d, &["transactions", "retries"])).sum();
        let failed: f64 = ds.iter().map(|d| f(d, &["transactions", "failed"])).sum();
        let aborted: f64 = ds.iter().map(|d| f(d, &["aborted_clients"])).sum();
        let mut flags = Vec::new();
        for flag in client_cpu_flags(ds) {
            flags.push(flag);
        }
        if cv > 10.0 {
            flags.push("high-spread");
        }
        if failed > 0.0 || aborted > 0.0 {
            flags.push("failures");
        }
        if retries > 0.0 || ds.iter().any(|d| lock_share(d) > 0.2) {
            flags.push("contention");
        }
        let _ = write!(out, "{label:<width$}");
        if rounds {
            let _ = write!(out, " {round:>5}");
        }
        let _ = writeln!(
            out,
            "  {:>4}  {:>10.1}  {:>8.1}  {:>8.1}  {:>4.1}  {:>6.3}  {:>7}  {:>6}  {}",
            ds.len(),
            med,
            min,
            max,
            cv,
            spread(&p99s).0,
            retries,
            failed,
            flags.join(",")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spread_of_repetitions() {
        let (med, min, max, cv) = spread(&[100.0, 120.0, 80.0]);
        assert_eq!((med, min, max), (100.0, 80.0, 120.0));
        assert!((cv - 16.33).abs() < 0.01);
        assert_eq!(spread(&[1.0, 3.0]).0, 2.0);
    }

    #[test]
    fn table_flags_spread_failures_and_contention() {
        let doc = |tps: f64, retries: u64| {
            json!({"point": {"clients": 4}, "round": 1, "tps": tps,
                   "client_cpu_time": 0.2, "client_run_queue_wait": 0.01,
                   "latency_ms": {"p99": 1.0}, "transactions": {"retries": retries, "failed": 0},
                   "aborted_clients": 0})
        };
        let t = points_table(&[doc(100.0, 0), doc(150.0, 3)]);
        assert!(t.contains("clients=4"), "{t}");
        assert!(t.contains("high-spread,contention"), "{t}");
        assert!(run_line(&doc(1.0, 2)).starts_with("clients=4 rep null"));
        assert!(
            run_line(&doc(1.0, 2)).ends_with("client CPU time 20%, run-queue wait 1%"),
            "{}",
            run_line(&doc(1.0, 2))
        );
    }

    /// The study run: 0.36 s of CPU in 4.1 s was flagged client-saturated because the
    /// record's `client_cpu` added the run-queue wait; read from its threads it is 9 % CPU time
    /// and host-contended.
    #[test]
    fn an_old_record_that_waited_for_a_cpu_is_host_contended_not_client_saturated() {
        let doc = json!({"point": {"clients": 4}, "round": 1, "tps": 50.0, "client_cpu": 0.95,
            "client_threads": [{"user_s": 0.3, "sys_s": 0.06, "wait_s": 3.5, "wall_s": 4.1,
                                "busy": 0.95}],
            "latency_ms": {"p99": 1.0}, "transactions": {"retries": 0, "failed": 0},
            "aborted_clients": 0});
        let t = points_table(std::slice::from_ref(&doc));
        assert!(
            t.contains("host-contended") && !t.contains("client-saturated"),
            "{t}"
        );
        let line = run_line(&doc);
        assert!(
            line.ends_with("client CPU time 9%, run-queue wait 85%"),
            "{line}"
        );
    }
}
