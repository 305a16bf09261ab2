//! Snapshot tests of the four formats, from constructed run documents (no store): a
//! significant change in tps, no difference in p99 (`~`), a flagged side, and a comparison with
//! too few runs to decide. `UPDATE_SNAPSHOTS=1 cargo test -p pgrig-compare --test formats`
//! rewrites the files in `tests/snapshots/` (review the diff before committing).

use std::path::PathBuf;

use serde_json::{json, Value};

use pgrig_compare::render::{render, Format};
use pgrig_compare::select::Side;
use pgrig_compare::{compare_sides, metric, Comparison};

/// A stored run document with the keys compare reads.
fn doc(id: i64, clients: u64, tps: f64, p99: f64, client_cpu: f64) -> Value {
    json!({
        "run_id": id, "study": "insert", "target": "local", "round": 1,
        "point": {"settings.synchronous_commit": if clients == 1 { "on" } else { "off" }},
        "tps": tps, "client_cpu_time": client_cpu, "client_run_queue_wait": 0.01,
        "aborted_clients": 0,
        "latency_ms": {"mean": 1000.0 / tps, "p50": 0.9 * 1000.0 / tps, "p99": p99, "max": 9.5},
        "transactions": {"ok": (tps * 2.0) as u64, "failed": 0, "retries": 0},
        "server_stats": {"wal": {"wal_bytes": 226.0 * (tps * 2.0).floor()}},
        "provenance": {"scripts": [{"file": "insert.sql", "text": "INSERT ...", "weight": 1}]},
    })
}

fn side(which: &str, text: &str, docs: &[Value]) -> Side {
    Side::from_docs(which, text, docs)
}

fn compare(a: &Side, b: &Side, metrics: &[&str]) -> Comparison {
    let ms: Vec<_> = metrics.iter().map(|m| metric::find(m).unwrap()).collect();
    compare_sides(a, b, &ms, true, false).unwrap()
}

fn significant_and_not() -> Comparison {
    let a = side(
        "A",
        "insert[settings.synchronous_commit=on]",
        &[
            doc(1, 1, 1010.5, 2.10, 0.31),
            doc(3, 1, 998.2, 2.31, 0.30),
            doc(5, 1, 1003.9, 2.05, 0.30),
            doc(7, 1, 1021.0, 2.24, 0.32),
            doc(9, 1, 995.4, 2.18, 0.29),
        ],
    );
    let b = side(
        "B",
        "insert[settings.synchronous_commit=off]",
        &[
            doc(2, 2, 1602.3, 2.20, 0.55),
            doc(4, 2, 1580.1, 2.12, 0.93),
            doc(6, 2, 1611.8, 2.29, 0.56),
            doc(8, 2, 1595.0, 2.08, 0.54),
            doc(10, 2, 1620.7, 2.15, 0.57),
        ],
    );
    compare(
        &a,
        &b,
        &[
            "tps",
            "p99",
            "latency_avg",
            "client_cpu_time",
            "wal_bytes_per_tx",
        ],
    )
}

fn too_few() -> Comparison {
    let a = side(
        "A",
        "1,3",
        &[doc(1, 1, 1010.5, 2.1, 0.3), doc(3, 1, 998.2, 2.3, 0.3)],
    );
    let b = side(
        "B",
        "2,4",
        &[doc(2, 2, 1602.3, 2.2, 0.5), doc(4, 2, 1380.1, 2.1, 0.5)],
    );
    compare(&a, &b, &["tps", "p99"])
}

fn check(name: &str, got: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    pgrig_testkit::snapshot::check(&dir, name, got);
}

#[test]
fn text_table_snapshot() {
    check(
        "significant.txt",
        &render(&significant_and_not(), Format::Text),
    );
    check("too_few.txt", &render(&too_few(), Format::Text));
}

#[test]
fn markdown_snapshot() {
    check(
        "significant.md",
        &render(&significant_and_not(), Format::Markdown),
    );
}

#[test]
fn json_snapshot() {
    let text = render(&significant_and_not(), Format::Json);
    check("significant.json", &text);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["rows"][0]["verdict"], "significant");
    assert_eq!(v["rows"][1]["verdict"], "not_significant");
    check("too_few.json", &render(&too_few(), Format::Json));
}

#[test]
fn html_fragment_snapshot() {
    let html = render(&significant_and_not(), Format::Html);
    check("significant.html", &html);
    for tag in [
        "div", "table", "thead", "tbody", "tr", "ul", "li", "caption",
    ] {
        assert_eq!(
            html.matches(&format!("<{tag}")).count(),
            html.matches(&format!("</{tag}>")).count(),
            "<{tag}> balanced"
        );
    }
}

/// The fragment as a real browser parses it: headless Chromium loads it inside a minimal page
/// from disk and serialises its DOM. Markup the HTML parser had to repair (a misplaced tag, an
/// unescaped `<`) would come back different; text nodes come back with `"` unescaped.
#[test]
fn html_fragment_survives_a_real_browser_parse_unchanged() {
    let html = render(&significant_and_not(), Format::Html);
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.html");
    std::fs::write(
        &page,
        format!("<!doctype html><meta charset=\"utf-8\"><title>compare</title><body>{html}</body>"),
    )
    .unwrap();
    let out = std::process::Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("headless chromium (Debian package `chromium`) is the oracle of this test");
    let dom = String::from_utf8_lossy(&out.stdout);
    let want = html.replace("&quot;", "\"");
    assert!(
        dom.contains(want.trim()),
        "the browser rebuilt the fragment:\n{dom}"
    );
}

#[test]
fn the_verdicts_are_the_expected_ones() {
    let c = significant_and_not();
    let verdicts: Vec<_> = c.rows.iter().map(|r| (r.metric.name, r.verdict)).collect();
    use pgrig_compare::Verdict::*;
    assert_eq!(
        verdicts,
        [
            ("tps", Significant),
            ("p99", NotSignificant),
            ("latency_avg", Significant),
            ("client_cpu_time", Significant),
            ("wal_bytes_per_tx", NotSignificant),
        ]
    );
    // 5 + 5 runs fully separated: exact p = 2 / C(10, 5) = 0.00794
    assert!((c.rows[0].p_value - 2.0 / 252.0).abs() < 1e-12);
    assert_eq!(c.b.flags[0].flag, "client-saturated");
    assert_eq!(c.b.flags[0].runs, [4]);
    let few = too_few();
    assert!(few.rows.iter().all(|r| r.verdict == TooFewRuns));
    assert_eq!(few.rows[0].runs_needed, Some(4));
}
