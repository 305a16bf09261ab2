//! Text for people about query runs: the line per finished run, and the table per point and
//! query with the derived figures — speedup (the median client time of the point with
//! `parallel_workers = 0` and otherwise the same values, over this point's) and efficiency
//! (speedup over the ideal: the degree plus the leader, which takes part in the scan unless
//! `parallel_leader_participation` is off, at most the machine's cores when the run documents
//! name them — the one definition the table and the report's charts share) — and the flags (io-bound, failures, timeouts,
//! fewer workers than asked, high spread). Pure functions over stored result documents.

use std::fmt::Write;

use serde_json::Value;

use crate::summary::{point_label, spread};

/// One line per finished query run.
pub fn run_line(r: &Value) -> String {
    let queries: Vec<String> = list(&r["query"]["queries"])
        .iter()
        .map(|q| {
            let s = &q["summary"];
            let mut t = format!(
                "{}: {} execution(s), median {:.1} ms",
                q["name"].as_str().unwrap_or("?"),
                s["executions"],
                s["client_ms"]["median"].as_f64().unwrap_or(0.0)
            );
            if let Some(ms) = s["server_ms"].as_f64() {
                let n = |k: &str| s[k].as_f64().unwrap_or(0.0);
                let _ = write!(
                    t,
                    " (server {ms:.1} ms, workers {}/{}, shared read {} hit {})",
                    n("workers_launched"),
                    n("workers_planned"),
                    n("shared_read"),
                    n("shared_hit")
                );
            }
            if s["failed"].as_u64().unwrap_or(0) > 0 {
                let _ = write!(t, ", {} failed", s["failed"]);
            }
            t
        })
        .collect();
    format!(
        "{} rep {} round {}: {}",
        point_label(&r["point"]),
        r["repetition"],
        r["round"],
        queries.join("; ")
    )
}

fn list(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// The executions of a stored query whose server figures count (measured ones under EXPLAIN,
/// else the plan execution).
fn explained(q: &Value) -> Vec<&Value> {
    let each: Vec<&Value> = list(&q["executions"])
        .iter()
        .map(|e| &e["server"])
        .filter(|s| s.is_object())
        .collect();
    match each.is_empty() {
        true => [&q["plan_execution"]["server"]]
            .into_iter()
            .filter(|s| s.is_object())
            .collect(),
        false => each,
    }
}

/// One row of the table: a point's query over its runs.
#[derive(Default)]
struct Row<'a> {
    target: String,
    label: String,
    /// The point's values without `parallel_workers` (what the baseline shares).
    rest: String,
    rest_label: String,
    query: String,
    degree: Option<u64>,
    leader: bool,
    /// the fewest CPUs any of the row's runs had (`provenance.host.cpus`), when known
    cores: Option<u64>,
    runs: usize,
    queries: Vec<&'a Value>,
}

impl Row<'_> {
    fn executions(&self) -> impl Iterator<Item = &Value> {
        self.queries.iter().flat_map(|q| list(&q["executions"]))
    }

    fn client_ms(&self) -> Vec<f64> {
        self.executions()
            .filter(|e| e["ok"] == true)
            .filter_map(|e| e["client_ms"].as_f64())
            .collect()
    }

    fn server(&self, path: &[&str]) -> Option<f64> {
        let xs: Vec<f64> = self
            .queries
            .iter()
            .flat_map(|q| explained(q))
            .filter_map(|s| path.iter().fold(s, |v, k| &v[*k]).as_f64())
            .collect();
        (!xs.is_empty()).then(|| spread(&xs).0)
    }
}

fn rows(docs: &[Value]) -> Vec<Row<'_>> {
    let mut rows: Vec<Row> = Vec::new();
    for d in docs.iter().filter(|d| d["workload"] == "query") {
        let mut rest = d["point"].clone();
        if let Some(o) = rest.as_object_mut() {
            o.remove("parallel_workers");
        }
        let leader = d["settings"]["parallel_leader_participation"] != "off";
        for q in list(&d["query"]["queries"]) {
            let label = point_label(&d["point"]);
            let query = q["name"].as_str().unwrap_or("?").to_string();
            let target = d["target"].as_str().unwrap_or("").to_string();
            let i = match rows
                .iter()
                .position(|r| r.target == target && r.label == label && r.query == query)
            {
                Some(i) => i,
                None => {
                    rows.push(Row {
                        target,
                        label,
                        rest: rest.to_string(),
                        rest_label: point_label(&rest),
                        query,
                        degree: d["query"]["parallel_workers"].as_u64(),
                        leader,
                        ..Row::default()
                    });
                    rows.len() - 1
                }
            };
            let cpus = d["provenance"]["host"]["cpus"].as_u64().filter(|&c| c > 0);
            rows[i].cores = match (rows[i].cores, cpus) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            rows[i].runs += 1;
            rows[i].queries.push(q);
        }
    }
    rows
}

fn cell(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.decimals$}"))
}

/// The table per point and query of a study's query runs ("" when there are none).
pub fn table(docs: &[Value]) -> String {
    let rows = rows(docs);
    if rows.is_empty() {
        return String::new();
    }
    let lw = rows.iter().map(|r| r.label.len()).max().unwrap_or(5).max(5);
    let qw = rows.iter().map(|r| r.query.len()).max().unwrap_or(5).max(5);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<lw$}  {:<qw$}  runs  execs  failed  client ms  server ms  speedup  effic.  workers   shared hit  shared read  temp blks  jit ms  flags",
        "point", "query"
    );
    for r in &rows {
        let median = r.median_ms();
        let speedup = r.speedup(&rows);
        let ideal = r.ideal();
        let workers = match (
            r.server(&["workers_launched"]),
            r.server(&["workers_planned"]),
        ) {
            (Some(l), Some(p)) => format!("{l}/{p}"),
            _ => "-".into(),
        };
        let temp = r
            .server(&["temp", "read"])
            .zip(r.server(&["temp", "written"]))
            .map(|(a, b)| a + b);
        let line = format!(
            "{:<lw$}  {:<qw$}  {:>4}  {:>5}  {:>6}  {:>9}  {:>9}  {:>7}  {:>6}  {:>7}  {:>11}  {:>11}  {:>9}  {:>6}  {}",
            r.label,
            r.query,
            r.runs,
            r.executions().count(),
            r.failed(),
            cell(median, 1),
            cell(r.server(&["execution_ms"]), 1),
            cell(speedup, 2),
            cell(speedup.zip(ideal).map(|(s, i)| s / i), 2),
            workers,
            cell(r.server(&["shared", "hit"]), 0),
            cell(r.server(&["shared", "read"]), 0),
            cell(temp, 0),
            cell(r.server(&["jit", "total_ms"]), 1),
            r.flags().join(",")
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

/// The derived figures of one point's query: what the table's client ms, speedup and
/// efficiency columns show (for charts: the report draws these, it does not derive them).
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub target: String,
    /// the point's values, and those without `parallel_workers`
    pub point: String,
    pub rest: String,
    pub query: String,
    pub degree: Option<u64>,
    pub median_ms: Option<f64>,
    pub speedup: Option<f64>,
    /// the speedup a perfect scaling would give: the processes scanning (degree + the
    /// leader), at most the machine's cores
    pub ideal: Option<f64>,
    pub efficiency: Option<f64>,
}

/// The figures per point and query of a study's query runs, in the table's order.
pub fn figures(docs: &[Value]) -> Vec<Figures> {
    let rows = rows(docs);
    rows.iter()
        .map(|r| {
            let speedup = r.speedup(&rows);
            let ideal = r.ideal();
            Figures {
                target: r.target.clone(),
                point: r.label.clone(),
                rest: r.rest_label.clone(),
                query: r.query.clone(),
                degree: r.degree,
                median_ms: r.median_ms(),
                speedup,
                ideal,
                efficiency: speedup.zip(ideal).map(|(s, i)| s / i),
            }
        })
        .collect()
}

impl Row<'_> {
    /// Speedup at perfect scaling: the degree plus the leader when it takes part, capped at
    /// the machine's cores (more processes than cores cannot scan faster).
    fn ideal(&self) -> Option<f64> {
        self.degree.map(|d| {
            let procs = (d + u64::from(self.leader)).max(1);
            self.cores.map_or(procs, |c| procs.min(c)) as f64
        })
    }

    fn median_ms(&self) -> Option<f64> {
        let client = self.client_ms();
        (!client.is_empty()).then(|| spread(&client).0)
    }

    /// The degree-0 row's median client time over this row's.
    fn speedup(&self, rows: &[Row]) -> Option<f64> {
        let base = rows.iter().find(|b| {
            b.degree == Some(0)
                && b.rest == self.rest
                && b.query == self.query
                && b.target == self.target
        })?;
        match (base.median_ms(), self.median_ms()) {
            (Some(b), Some(m)) if m > 0.0 => Some(b / m),
            _ => None,
        }
    }

    fn failed(&self) -> usize {
        self.executions().filter(|e| e["ok"] != true).count()
    }

    fn flags(&self) -> Vec<&'static str> {
        let hit = self.server(&["shared", "hit"]).unwrap_or(0.0);
        let read = self.server(&["shared", "read"]).unwrap_or(0.0);
        let launched = self.server(&["workers_launched"]);
        let checks = [
            ("io-bound", read > hit),
            ("failures", self.failed() > 0),
            (
                "timeouts",
                self.executions().any(|e| e["error"]["timed_out"] == true),
            ),
            (
                "fewer-workers",
                matches!((self.degree, launched), (Some(d), Some(l)) if l < d as f64),
            ),
            ("high-spread", spread(&self.client_ms()).3 > 10.0),
        ];
        checks.iter().filter(|c| c.1).map(|c| c.0).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(degree: u64, ms: f64, launched: u64, read: u64) -> Value {
        let server = json!({"execution_ms": ms - 1.0, "workers_planned": degree,
            "workers_launched": launched, "shared": {"hit": 10, "read": read},
            "temp": {"read": 0, "written": 0}, "jit": null});
        json!({"workload": "query", "target": "local", "point": {"parallel_workers": degree},
            "repetition": 1, "round": 1, "settings": {},
            "query": {"parallel_workers": degree, "queries": [{"name": "query",
                "executions": [{"ok": true, "client_ms": ms, "server": server}],
                "summary": {"executions": 1, "failed": 0, "client_ms": {"median": ms},
                    "server_ms": ms - 1.0, "workers_launched": launched,
                    "workers_planned": degree, "shared_read": read, "shared_hit": 10}}]}})
    }

    #[test]
    fn speedup_and_efficiency_against_degree_zero() {
        let t = table(&[
            doc(0, 100.0, 0, 0),
            doc(1, 50.0, 1, 0),
            doc(4, 40.0, 2, 500),
        ]);
        let expected = "\
point               query  runs  execs  failed  client ms  server ms  speedup  effic.  workers   shared hit  shared read  temp blks  jit ms  flags
parallel_workers=0  query     1      1       0      100.0       99.0     1.00    1.00      0/0           10            0          0       -
parallel_workers=1  query     1      1       0       50.0       49.0     2.00    1.00      1/1           10            0          0       -
parallel_workers=4  query     1      1       0       40.0       39.0     2.50    0.50      2/4           10          500          0       -  io-bound,fewer-workers
";
        // 100/40 = 2.5 at degree 4: efficiency 2.5/(4 + the leader)
        assert_eq!(t, expected);
        assert!(run_line(&doc(1, 50.0, 1, 0)).contains("workers 1/1"));
        assert_eq!(table(&[json!({"tps": 1.0})]), "");
        let f = figures(&[doc(0, 100.0, 0, 0), doc(4, 40.0, 2, 500)]);
        assert_eq!((f[1].speedup, f[1].ideal), (Some(2.5), Some(5.0)));
        assert_eq!(
            (f[1].efficiency, f[1].rest.as_str()),
            (Some(0.5), "(single point)")
        );
    }

    #[test]
    fn the_ideal_is_capped_at_the_machines_cores_in_table_and_figures() {
        let on = |d: u64, ms: f64| {
            let mut v = doc(d, ms, d, 0);
            v["provenance"] = json!({"host": {"cpus": 2}});
            v
        };
        let docs = [on(0, 100.0), on(1, 55.0), on(4, 70.0)];
        let f = figures(&docs);
        // degree 1: 2 processes = the 2 cores; degree 4: 5 processes, capped at 2
        assert_eq!((f[1].ideal, f[2].ideal), (Some(2.0), Some(2.0)));
        let eff = f[2].efficiency.unwrap_or(0.0);
        assert!((eff - 100.0 / 70.0 / 2.0).abs() < 1e-9, "{eff}");
        let t = table(&docs);
        let row = t.lines().find(|l| l.starts_with("parallel_workers=4"));
        assert!(row.is_some_and(|l| l.contains("1.43    0.71")), "{t}");
    }
}
