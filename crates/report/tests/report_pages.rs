//! Reports as people open them: built from fixture models, pgbench logs and a --json document,
//! written to disk and loaded in headless Chromium with networking off (see `browser`); every
//! standalone SVG is well-formed and renders to a non-blank PNG. Screenshots are kept in
//! `target/report-screenshots/`.

mod browser;
mod fixtures;

use std::path::Path;

use pgrig_report::{build, input, write_html, write_svgs, Options};

fn page(name: &str, model: &pgrig_report::model::Model, charts: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let r = build(model, &Options::default()).unwrap();
    let html = dir.path().join(format!("{name}.html"));
    write_html(&r, &html).unwrap();
    let svg = dir.path().join("svg");
    assert_eq!(write_svgs(&r, &svg).unwrap().len(), r.svgs.len());
    let art = browser::artefact_dir();
    browser::check_report(&html, charts, &art.join(format!("{name}.png")));
    assert_eq!(
        browser::check_svgs(&svg, &art.join(format!("{name}-svg"))),
        r.svgs.len()
    );
    r.html
}

#[test]
fn matrix_and_rounds_studies_open_in_a_browser_with_every_chart() {
    let m = fixtures::model(
        vec![fixtures::matrix_study(), fixtures::rounds_study()],
        vec![],
    );
    let html = page(
        "fixture-studies",
        &m,
        &[
            "isolation-tps-by-clients",
            "isolation-tps-by-isolation",
            "isolation-tps-over-time",
            "isolation-latency-percentiles",
            "isolation-wait-events",
            "custom-type-tps-per-round",
            "custom-type-relation-sizes",
            "custom-type-statements-per-round",
        ],
    );
    // two studies of different workloads are never one chart
    assert!(!html.contains("studies-tps-per-point"));
    assert!(html.contains("<details><summary>Study file</summary>"));
    assert!(html.contains("contention"), "flags are named on the page");
    assert!(html.len() < 1_000_000);
    interact(&html);
}

#[test]
fn every_axis_label_is_whole_apart_from_the_others_and_unlike_them() {
    let m = fixtures::model(
        vec![fixtures::five_key_study(), fixtures::matrix_study()],
        vec![],
    );
    let dir = tempfile::tempdir().unwrap();
    let r = build(&m, &Options::default()).unwrap();
    let html = dir.path().join("axis-labels.html");
    write_html(&r, &html).unwrap();
    let charts = browser::axis_labels(&html);
    let mut categorical = 0;
    for (id, labels, overlapping) in &charts {
        assert!(
            overlapping.is_empty(),
            "{id}: labels overlap: {overlapping:?}"
        );
        for (i, l) in labels.iter().enumerate() {
            assert!(!l.contains('…'), "{id}: label {l:?} is cut");
            assert!(!labels[..i].contains(l), "{id}: two labels read {l:?}");
        }
        categorical += labels.iter().any(|l| l.parse::<f64>().is_err()) as usize;
    }
    assert!(charts.len() > 5, "{charts:?}");
    assert!(
        categorical > 0,
        "no chart with named categories: {charts:?}"
    );
    // the ranking of the five-key study's 32 points numbers them, with the key in its SVG
    let (_, labels, _) = (charts.iter())
        .find(|c| c.0 == "five-tps-ranking")
        .expect("the ranking chart");
    assert_eq!(labels.first().map(String::as_str), Some("1"), "{labels:?}");
    let fig = (r.html.split("id=\"five-tps-ranking\"").nth(1))
        .and_then(|t| t.split("</figure>").next())
        .expect("the ranking figure");
    let svg = fig.split("</svg>").next().unwrap_or("");
    for i in [1, 16, 32] {
        assert!(
            svg.contains(&format!(">{i}  ")) || svg.contains(&format!(">\n{i}  ")),
            "no key line {i} in the SVG: {}",
            &svg[svg.len().saturating_sub(1200)..]
        );
    }
}

#[test]
fn query_study_shows_speedup_efficiency_and_plans_in_a_browser() {
    let m = fixtures::model(vec![fixtures::query_study()], vec![]);
    let html = page(
        "fixture-query-study",
        &m,
        &[
            "parallel-speedup",
            "parallel-efficiency",
            "parallel-plan-nodes",
            "parallel-plan-tree",
        ],
    );
    assert!(html.contains("ideal (degree + leader)"));
    assert!(html.contains("· · · Parallel Seq Scan on public.pgbench_accounts"));
}

/// Hover, series toggle and zoom work in the browser (see `browser::check_interaction`).
fn interact(html: &str) {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.html");
    std::fs::write(&page, html).unwrap();
    browser::check_interaction(&page);
}

#[test]
fn one_run_shows_time_percentiles_and_statements() {
    let m = fixtures::model(vec![], vec![fixtures::single_run()]);
    let html = page(
        "fixture-run",
        &m,
        &[
            "run-tps-over-time",
            "run-latency-over-time",
            "run-latency-percentiles",
            "run-statements",
            "run-server-over-time",
        ],
    );
    assert!(
        html.contains("steady window"),
        "steady TPS beside the whole run's"
    );
    interact(&html);
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn pgbench_logs_of_two_threads_become_one_run_with_pictures() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = String::new();
    let mut b = String::new();
    for i in 0..3000u64 {
        let sec = 1_700_000_000 + i / 300;
        let us = (i % 300) * 3000;
        let lat = 800 + (i * 7919) % 2000 + if i % 97 == 0 { 20_000 } else { 0 };
        let line = format!("{} {} {lat} {} {sec} {us}\n", i % 4, i / 4 + 1, i % 2);
        if i % 2 == 0 {
            a.push_str(&line)
        } else {
            b.push_str(&line)
        }
    }
    let f1 = write(dir.path(), "pgbench_log.4242", &a);
    let f2 = write(dir.path(), "pgbench_log.4242.1", &b);
    let m = input::load("unused.db", &[f1, f2]).unwrap();
    assert_eq!(m.loose.len(), 1, "thread files are one run");
    let r = &m.loose[0];
    assert_eq!(r.ok, 3000.0);
    assert_eq!(r.series.len(), 10);
    assert_eq!(r.distributions.len(), 3, "all, script 0, script 1");
    page(
        "pgbench-log",
        &m,
        &[
            "run-tps-over-time",
            "run-latency-over-time",
            "run-latency-percentiles",
        ],
    );
}

#[test]
fn aggregated_log_and_bench_json_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let agg: String = (0..30)
        .map(|i| {
            format!(
                "{} {} {} 0 500 {} 0 0 0 0 0 0 0 0 0\n",
                1_700_000_000 + i,
                1000 + i * 10,
                (1000 + i * 10) * 900,
                4000 + i * 10
            )
        })
        .collect();
    let f1 = write(dir.path(), "agg.log", &agg);
    let doc = serde_json::json!({
        "tps": 1200.0, "duration_s": 30.0, "transactions": {"ok": 36000, "failed": 0, "retries": 0},
        "latency_ms": {"mean": 0.8, "p50": 0.7, "p90": 1.1, "p95": 1.4, "p99": 2.5, "p99_9": 6.0, "max": 20.0},
        "client_cpu": {"busiest": 0.4},
        "series": (1..=30).map(|s| serde_json::json!({"second": s, "tps": 1200, "latency_ms_mean": 0.8, "failed": 0, "retries": 0})).collect::<Vec<_>>(),
        "scripts": [{"desc": "<builtin: TPC-B (sort of)>", "latency_ms": {"p50": 0.7}, "commands": [{"text": "SELECT 1;", "executions": 36000, "latency_ms_mean": 0.1}]}],
        "options": {"clients": 4}
    });
    let f2 = write(dir.path(), "bench.json", &doc.to_string());
    let m = input::load("unused.db", &[f1, f2]).unwrap();
    assert_eq!(m.loose.len(), 2);
    page(
        "logs-and-json",
        &m,
        &[
            "runs-tps-per-run",
            "runs-tps-over-time",
            "runs-latency-over-time",
            "runs-latency-percentiles",
        ],
    );
}

#[test]
fn profiled_points_embed_their_server_flame_graphs() {
    let mut s = fixtures::matrix_study();
    for (i, r) in s.runs.iter_mut().enumerate() {
        let folded = format!(
            "postgres;exec_simple_query;ExecScan {}\npostgres;XLogInsert {}\n",
            50 + i,
            10 + 3 * i
        );
        r.profiles = vec![("server".into(), folded)];
    }
    let m = fixtures::model(vec![s], vec![]);
    let html = page("fixture-flames", &m, &["isolation-tps-by-clients"]);
    let figures = html.matches("<figure class=\"flame\"").count();
    assert_eq!(figures, 6, "one flame graph per point (6 points)");
    let start = html.find("data:image/svg+xml;base64,").unwrap() + 26;
    let end = start + html[start..].find('"').unwrap();
    let svg = decode64(&html[start..end]);
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&svg, opts)
        .expect("the embedded flame graph is SVG");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    assert!(svg.contains("ExecScan") && svg.contains("XLogInsert"));
}

/// The test's own base64 decoder (the page's encoder is under test).
fn decode64(s: &str) -> String {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let mut out = Vec::new();
    for chunk in s.as_bytes().chunks(4) {
        let pad = chunk.iter().filter(|&&c| c == b'=').count();
        let n = chunk
            .iter()
            .map(|&c| if c == b'=' { 0 } else { u32::from(val(c)) })
            .fold(0u32, |a, v| (a << 6) | v);
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    String::from_utf8(out).unwrap()
}
