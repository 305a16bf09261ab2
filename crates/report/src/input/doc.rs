//! One run document as JSON → a model [`Run`]. Two shapes are read: the results store's run
//! (`pgrig results show`/`export`: `point`, `per_statement`, `histogram`, `provenance`,
//! `server_stats`, ...) and the `--json` document of `pgrig bench`/`run` (`options`, `scripts`
//! with per-script percentiles and commands, `client_cpu`'s threads). Missing keys stay empty; this
//! is the one place that knows those key names.

use serde_json::Value;

use pgrig_results::view::{LatencyView, RunView, SecondView, SizesView, StatementView};

use crate::input::{curve, query};
use crate::model::{
    Distribution, Latency, PointValue, Run, Second, Server, SizeParts, Sizes, Statement,
};

/// A matrix value: strings as they are, numbers as numbers, anything else as compact JSON.
pub fn point_value(v: &Value) -> PointValue {
    match v {
        Value::String(s) => PointValue {
            text: s.clone(),
            number: None,
        },
        Value::Number(n) => PointValue {
            text: n.to_string(),
            number: n.as_f64(),
        },
        Value::Array(a) if a.len() == 1 => point_value(&a[0]),
        o => PointValue {
            text: o.to_string(),
            number: None,
        },
    }
}

fn latency(l: &LatencyView) -> Latency {
    Latency {
        mean: l.mean,
        p50: l.p50,
        p90: l.p90,
        p95: l.p95,
        p99: l.p99,
        p99_9: l.p99_9,
        max: l.max,
    }
}

/// The percentile points a summary gives (when no histogram is stored).
fn summary_curve(l: &Latency) -> Vec<(f64, f64)> {
    [
        (0.5, l.p50),
        (0.9, l.p90),
        (0.95, l.p95),
        (0.99, l.p99),
        (0.999, l.p99_9),
        (1.0, l.max),
    ]
    .into_iter()
    .filter_map(|(q, v)| v.map(|v| (q, v)))
    .collect()
}

/// How far past the run's measured end a second may reach and still count as whole.
const WHOLE_SECOND_GRACE_S: f64 = 0.05;

/// The run's seconds, whole seconds only: a last interval that reaches past the measured
/// duration (`duration_s`, when the document has it) by more than [`WHOLE_SECOND_GRACE_S`]
/// is the run's partial last second — a few transactions in a fraction of a second, which
/// drawn as a rate would look like a collapse — and is left out of every per-second chart.
fn series(v: &[SecondView], duration_s: Option<f64>) -> Vec<Second> {
    let whole = |t: f64| duration_s.is_none_or(|d| !d.is_finite() || t <= d + WHOLE_SECOND_GRACE_S);
    let all = v
        .iter()
        .enumerate()
        .map(|(i, s)| Second {
            t: s.second.unwrap_or((i + 1) as f64),
            tps: s.tps.unwrap_or(0.0),
            latency_mean_ms: s.latency_ms_mean,
            latency_p50_ms: s.latency_ms_p50,
            latency_p99_ms: s.latency_ms_p99,
            latency_max_ms: s.latency_ms_max,
            failed: s.failed.unwrap_or(0.0),
            retries: s.retries.unwrap_or(0.0),
            checkpoints: s.checkpoints.unwrap_or(0.0),
            wal_bytes: s.wal_bytes,
            server_cpu: s.server_cpu,
        })
        .filter(|s| whole(s.t))
        .collect();
    crate::bound::series(all)
}

fn server(v: &RunView) -> Server {
    let checkpoints = match (v.checkpoints_timed, v.checkpoints_requested) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    };
    let mut wait_events = v.wait_events.clone();
    wait_events.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Server {
        wal_bytes: v.wal_bytes,
        checkpoints,
        cpus_busy: v.cpus_busy,
        wait_events,
    }
}

fn sizes(v: &[(String, SizesView)]) -> Vec<(String, Sizes)> {
    v.iter()
        .map(|(t, s)| {
            (
                t.clone(),
                Sizes {
                    heap: s.heap.unwrap_or(0.0),
                    indexes: s.indexes.unwrap_or(0.0),
                    total: s.total.unwrap_or(0.0),
                },
            )
        })
        .collect()
}

/// The parts of each relation's size, for the relations whose run recorded them.
fn parts(v: &[(String, SizesView)]) -> Vec<(String, SizeParts)> {
    v.iter()
        .filter_map(|(t, s)| {
            let maps = s.fsm? + s.vm? + s.init.unwrap_or(0.0);
            Some((
                t.clone(),
                SizeParts {
                    main: s.main?,
                    maps,
                    toast: s.toast?,
                },
            ))
        })
        .collect()
}

/// Store documents: `per_statement`; bench documents: `scripts[].commands`.
fn statements(v: &RunView) -> Vec<Statement> {
    let stmt = |script: &str, c: &StatementView| Statement {
        script: script.to_string(),
        text: c.text.clone().unwrap_or_default(),
        executions: c.executions.unwrap_or(0.0),
        mean_ms: c.latency_ms_mean.unwrap_or(0.0),
        p99_ms: c.latency_ms.p99,
    };
    if let Some(list) = &v.per_statement {
        return list
            .iter()
            .map(|c| stmt(c.script.as_deref().unwrap_or(""), c))
            .collect();
    }
    let mut out = Vec::new();
    for s in &v.scripts {
        let name = s.desc.as_deref().unwrap_or("");
        for c in s.commands() {
            out.push(stmt(name, &c));
        }
    }
    out
}

fn distributions(v: &RunView, overall: &Latency) -> Vec<Distribution> {
    let all = if v.histogram.is_empty() {
        summary_curve(overall)
    } else {
        curve::from_buckets(&v.histogram)
    };
    let mut out = vec![Distribution {
        name: "all transactions".into(),
        points: all,
    }];
    if v.scripts.len() > 1 {
        for s in &v.scripts {
            out.push(Distribution {
                name: s.desc.clone().unwrap_or_else(|| "script".into()),
                points: summary_curve(&latency(&s.latency_ms)),
            });
        }
    }
    out.retain(|d| !d.points.is_empty());
    out
}

/// Flattens provenance (or a bench document's options) into `a.b = value` lines.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        Value::Null => {}
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        o => out.push((prefix.to_string(), o.to_string())),
    }
}

/// Maps one run document to a [`Run`] named `id`.
pub fn run(id: String, v: &Value) -> Run {
    from_view(id, &RunView::of(v))
}

/// Maps one run, read, to a [`Run`] named `id`.
pub fn from_view(id: String, v: &RunView) -> Run {
    let lat = latency(&v.latency_ms);
    let point = v
        .point
        .iter()
        .map(|(k, x)| (k.clone(), point_value(x)))
        .collect();
    let mut provenance = Vec::new();
    flatten(
        "",
        &pgrig_results::profiles::without_stacks(&v.provenance),
        &mut provenance,
    );
    flatten("options", &v.options, &mut provenance);
    let versions = [
        ("pgrig_version", &v.pgrig_version),
        ("server_version", &v.server_version),
        ("schema_version", &v.schema_version),
    ];
    for (key, s) in versions {
        if let Some(s) = s {
            provenance.push((key.to_string(), s.clone()));
        }
    }
    Run {
        id,
        target: v.target.clone().unwrap_or_default(),
        point,
        step: v
            .step_index
            .zip(v.step.clone())
            .map(|(i, n)| (i as usize, n)),
        repetition: v.repetition.unwrap_or(1) as u32,
        round: v.round.unwrap_or(1) as u32,
        tps: v.tps.unwrap_or(0.0),
        duration_s: v.duration_s.unwrap_or(0.0),
        ok: v.transactions.ok.unwrap_or(0.0),
        failed: v.transactions.failed.unwrap_or(0.0),
        retries: v.transactions.retries.unwrap_or(0.0),
        aborted_clients: v.aborted_clients.unwrap_or(0.0),
        client_cpu: v.client_cpu,
        server: server(v),
        relation_sizes: sizes(&v.relation_sizes),
        relation_parts: parts(&v.relation_sizes),
        statements: statements(v),
        series: series(&v.series, v.duration_s),
        distributions: distributions(v, &lat),
        latency: lat,
        provenance,
        query: query::plans(&v.queries),
        profiles: v.profiles.clone(),
        replay: v.replay.clone(),
    }
}

/// Whether a JSON object looks like a run document at all (query runs have no `transactions`).
pub fn is_run(v: &Value) -> bool {
    RunView::is_run(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn store_document_maps_point_sizes_and_histogram() {
        let v = json!({"tps": 10.0, "transactions": {"ok": 20, "failed": 1, "retries": 2},
            "point": {"clients": 4, "isolation": "serializable", "scripts": ["a.sql"]},
            "relation_sizes": {"t": {"heap": 1, "indexes": 2, "total": 3}},
            "histogram": {"unit": "us", "buckets": [[100, 1], [300, 1]]},
            "server_stats": {"checkpointer": {"checkpoints_timed": 1, "checkpoints_requested": 2},
                             "wal": {"wal_bytes": 400}},
            "wait_events": {"events": {"Lock:tuple": 3, "CPU:running": 5}},
            "provenance": {"host": {"cpus": 2}},
            "client_cpu_time": 0.5, "client_run_queue_wait": 0.25});
        let r = run("run 1".into(), &v);
        assert_eq!(
            r.point_label(),
            "clients=4 isolation=serializable scripts=a.sql"
        );
        assert_eq!(r.value("clients").unwrap().number, Some(4.0));
        assert_eq!(r.relation_sizes[0].1.total, 3.0);
        assert_eq!(r.distributions[0].points, vec![(0.5, 0.1), (1.0, 0.3)]);
        assert_eq!(r.server.checkpoints, Some(3.0));
        assert_eq!(r.server.wait_events[0].0, "CPU:running");
        assert_eq!(r.provenance, vec![("host.cpus".into(), "2".into())]);
        assert_eq!((r.failed, r.retries), (1.0, 2.0));
        let cpu = r.client_cpu.unwrap();
        assert_eq!((cpu.cpu_time, cpu.run_queue_wait), (0.5, 0.25));
    }

    #[test]
    fn bench_document_maps_scripts_commands_and_busiest_thread() {
        let v = json!({"tps": 5.0, "transactions": {"ok": 5},
            "latency_ms": {"p50": 1.0, "p99": 2.0, "max": 3.0},
            "client_cpu": {"busiest": 0.75, "threads": [
                {"user_s": 0.2, "sys_s": 0.05, "wait_s": 0.5, "wall_s": 1.0, "busy": 0.75}]},
            "scripts": [
              {"desc": "a", "latency_ms": {"p50": 1.0}, "commands": [{"text": "select 1", "latency_ms_mean": 0.5}]},
              {"desc": "b", "latency_ms": {"p50": 2.0}, "commands": []}],
            "options": {"clients": 2}});
        let r = run("x.json".into(), &v);
        // a schema 1 document: `busiest` added the wait to the CPU time; the threads tell them apart
        let cpu = r.client_cpu.unwrap();
        assert_eq!((cpu.cpu_time, cpu.run_queue_wait), (0.25, 0.5));
        assert_eq!(r.statements[0].text, "select 1");
        let names: Vec<_> = r.distributions.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["all transactions", "a", "b"]);
        assert_eq!(
            r.distributions[0].points,
            vec![(0.5, 1.0), (0.99, 2.0), (1.0, 3.0)]
        );
        assert!(r
            .provenance
            .contains(&("options.clients".into(), "2".into())));
    }

    #[test]
    fn a_partial_last_second_is_left_out_of_the_series() {
        let second = |t: u64, tps: u64| json!({"second": t, "tps": tps});
        let v = json!({"duration_s": 20.004,
            "series": (1..=21).map(|t| second(t, if t == 21 { 400 } else { 1700 })).collect::<Vec<_>>()});
        let r = run("run 1".into(), &v);
        assert_eq!(r.series.len(), 20);
        assert!(r.series.iter().all(|s| s.tps == 1700.0));
        // a last second that ends within the grace of the duration stays
        let v = json!({"duration_s": 2.97, "series": [second(1, 5), second(2, 5), second(3, 5)]});
        assert_eq!(run("run 2".into(), &v).series.len(), 3);
        // no duration: every point stays
        let v = json!({"series": [second(1, 5), second(2, 1)]});
        assert_eq!(run("run 3".into(), &v).series.len(), 2);
    }
}
