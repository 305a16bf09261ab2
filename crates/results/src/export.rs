//! `pgrig results export --format csv`: one flat row per stored run — ids, the point's values
//! (a column per matrix key), a steps study's `step_index` (the step's 0-based position, so
//! sorting by it keeps the study's order), the fixed figures, the client's CPU figures and relation sizes
//! (`TABLE.heap|indexes|total`). Cells are the stored values as written (JSON numbers as
//! stored), quoted where CSV needs it.

use serde_json::Value;

const FIXED: &[(&str, &[&str])] = &[
    ("repetition", &["repetition"]),
    ("round", &["round"]),
    ("tps", &["tps"]),
    ("ok", &["transactions", "ok"]),
    ("failed", &["transactions", "failed"]),
    ("skipped", &["transactions", "skipped"]),
    ("retried", &["transactions", "retried"]),
    ("retries", &["transactions", "retries"]),
    ("latency_mean_ms", &["latency_ms", "mean"]),
    ("latency_p50_ms", &["latency_ms", "p50"]),
    ("latency_p90_ms", &["latency_ms", "p90"]),
    ("latency_p99_ms", &["latency_ms", "p99"]),
    ("latency_max_ms", &["latency_ms", "max"]),
    ("aborted_clients", &["aborted_clients"]),
];

/// The client's CPU time and run-queue wait (shares of the run), recomputed from the stored
/// threads for records written before the two names; empty when the record has neither.
fn client_cpu_cells(d: &Value) -> [String; 2] {
    match crate::client_cpu::of(d) {
        Some(c) => [c.cpu_time.to_string(), c.run_queue_wait.to_string()],
        None => [String::new(), String::new()],
    }
}

fn cell(v: &Value) -> String {
    let s = match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        o => o.to_string(),
    };
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// One row per run: ids, the point's values (a column per matrix key), the fixed figures, and
/// relation sizes (`TABLE.heap|indexes|total`).
pub fn csv(docs: &[Value]) -> String {
    let mut point_keys: Vec<String> = Vec::new();
    let mut tables: Vec<String> = Vec::new();
    for d in docs {
        for k in d["point"].as_object().into_iter().flat_map(|m| m.keys()) {
            if !point_keys.contains(k) {
                point_keys.push(k.clone());
            }
        }
        for k in d["relation_sizes"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.keys())
        {
            if !tables.contains(k) {
                tables.push(k.clone());
            }
        }
    }
    let steps = docs.iter().any(|d| d["step_index"].is_u64());
    let mut header: Vec<String> = vec!["run_id".into(), "study".into(), "target".into()];
    header.extend(point_keys.iter().cloned());
    if steps {
        header.push("step_index".into());
    }
    header.extend(FIXED.iter().map(|(n, _)| n.to_string()));
    header.extend(["client_cpu_time".into(), "client_run_queue_wait".into()]);
    for t in &tables {
        for part in ["heap", "indexes", "total"] {
            header.push(format!("{t}.{part}"));
        }
    }
    let mut out = header
        .iter()
        .map(|h| cell(&Value::String(h.clone())))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for d in docs {
        let mut row = vec![cell(&d["run_id"]), cell(&d["study"]), cell(&d["target"])];
        row.extend(point_keys.iter().map(|k| cell(&d["point"][k])));
        if steps {
            row.push(cell(&d["step_index"]));
        }
        for (_, path) in FIXED {
            let mut v = d;
            for p in *path {
                v = &v[*p];
            }
            row.push(cell(v));
        }
        row.extend(client_cpu_cells(d));
        for t in &tables {
            for part in ["heap", "indexes", "total"] {
                row.push(cell(&d["relation_sizes"][t][part]));
            }
        }
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_steps_study_exports_each_runs_step_index_beside_its_step() {
        let doc = |step: &str, i: u64| {
            json!({"run_id": i + 1, "study": "s", "target": "local",
                "point": {"step": step}, "step": step, "step_index": i})
        };
        let out = csv(&[doc("z-first", 0), doc("a-second", 1)]);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("run_id,study,target,step,step_index,repetition"));
        assert!(lines[1].starts_with("1,s,local,z-first,0,"), "{out}");
        assert!(lines[2].starts_with("2,s,local,a-second,1,"), "{out}");
        // no steps: no column
        let plain = csv(&[json!({"run_id": 1, "point": {"clients": 1}})]);
        assert!(!plain.contains("step_index"), "{plain}");
    }
}
