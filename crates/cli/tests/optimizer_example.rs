//! `examples/studies/optimizer_job.toml` runs end to end with the binary: the JOB-like dataset of
//! `examples/optimizer/` made from its schema and generator files, every query of the queries
//! directory executed under EXPLAIN ANALYZE at every point (2 statistics targets × nested loops
//! on/off), each plan node stored with its q-error; a point's `default_statistics_target` takes
//! effect (its ANALYZE gives other estimates than the other target's), `enable_nestloop = off`
//! leaves no nested loop in any plan and changes plans, and the report opens in the browser with
//! the q-error chart.

use crate::browser;

use std::path::{Path, PathBuf};
use std::process::Command;

use pgrig_results::plans::fingerprint;
use pgrig_results::view::{PlanNodeView, RunView};
use pgrig_testkit::run;
use serde_json::Value;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/studies")
}

/// Every query's stored plan nodes (first execution), in query order.
fn plans(run: &RunView) -> Vec<Vec<PlanNodeView>> {
    run.queries
        .iter()
        .map(|q| {
            let e = q.executions().remove(0);
            assert_eq!(e.ok, Some(true), "{:?}", q.name);
            e.nodes().expect("plan nodes")
        })
        .collect()
}

fn point_is(run: &RunView, key: &str, value: &str) -> bool {
    run.point.get(key).map(|v| match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }) == Some(value.to_string())
}

#[test]
fn optimizer_example_stores_q_errors_and_plans_at_every_point() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.current_dir(examples())
        .args(["study", "optimizer_job.toml", "--store"])
        .arg(&store)
        .arg("--report")
        .arg(dir.path().join("r.html"));
    for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"] {
        c.env_remove(v);
    }
    let out = run(c);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let mut e = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    e.args(["results", "export", "--format", "json", "--store"])
        .arg(&store);
    let out = run(e);
    let docs: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    let runs: Vec<RunView> = docs.iter().map(RunView::of).collect();
    assert_eq!(runs.len(), 4);
    let queries = std::fs::read_dir(examples().join("../optimizer/queries"))
        .unwrap()
        .count();
    let find = |target: &str, nestloop: &str| {
        runs.iter()
            .find(|r| {
                point_is(r, "settings.default_statistics_target", target)
                    && point_is(r, "settings.enable_nestloop", nestloop)
            })
            .unwrap_or_else(|| panic!("point {target}/{nestloop}"))
    };
    let all: Vec<Vec<Vec<PlanNodeView>>> = runs.iter().map(plans).collect();
    for p in &all {
        assert_eq!(p.len(), queries, "every query of the directory");
        for nodes in p {
            assert!(nodes.iter().all(|n| n.q_error.is_some_and(|q| q >= 1.0)));
        }
    }
    let has_nl = |nodes: &Vec<PlanNodeView>| {
        nodes
            .iter()
            .any(|n| n.node_type.as_deref() == Some("Nested Loop"))
    };
    let (on, off) = (plans(find("1000", "on")), plans(find("1000", "off")));
    assert!(off.iter().all(|n| !has_nl(n)), "no nested loop when off");
    assert!(on.iter().any(has_nl), "nested loops when on");
    let changed = on
        .iter()
        .zip(&off)
        .filter(|(a, b)| fingerprint(a) != fingerprint(b))
        .count();
    assert!(changed >= 1, "enable_nestloop changes plans");
    // the points' statistics targets are in force: ANALYZE at 10 and at 1000 estimate apart
    let rows = |p: &Vec<Vec<PlanNodeView>>| -> Vec<Option<f64>> {
        p.iter().flatten().map(|n| n.plan_rows).collect()
    };
    assert_ne!(rows(&plans(find("10", "on"))), rows(&on));
    // the page opens in the browser with the q-error chart and the first query's plan tree
    // (screenshot kept in target/report-screenshots/)
    let png = browser::artefact_dir().join("example-optimizer_job.toml.png");
    browser::check_report(
        &dir.path().join("r.html"),
        &[
            "optimizer-job-q-error",
            "optimizer-job-q-error-joins",
            "optimizer-job-plan-tree-optimizer-queries-01-anime-jp-series-sql",
        ],
        &png,
    );
}
