//! Property harness for what `report` reads (issue 21, "Also": a fuzz target per parser, a
//! bounded run time): pgbench `-l` logs of any numbers and words, and run documents of any JSON
//! numbers, give a run or an error naming file and line — never a panic — and a series of at
//! most `bound::MAX_SERIES_POINTS` points; a document's page is built in bounded time.

use pgrig_report::input::{doc, pgbench_log};
use pgrig_report::{bound, build, model, Options};
use proptest::prelude::*;
use serde_json::json;

fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u32..5).prop_map(|v| v.to_string()),
        (1_600_000_000i64..1_900_000_000).prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| v.to_string()),
        prop::sample::select(vec![
            "inf", "-inf", "nan", "1e18", "1e308", "-1", "0", "skipped", "failed", "x", "1e999",
        ])
        .prop_map(str::to_owned),
    ]
}

fn log_text() -> impl Strategy<Value = String> {
    let line = prop::collection::vec(field(), 0..16).prop_map(|f| f.join(" "));
    prop::collection::vec(line, 0..12).prop_map(|l| l.join("\n"))
}

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("JSON numbers are finite", |v| v.is_finite()),
        prop::sample::select(vec![f64::MAX, -f64::MAX, 1e300, 0.0, -1.0, 5e-324]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn logs_give_a_bounded_run_or_an_error_with_file_and_line(text in log_text()) {
        match pgbench_log::parse("log", &[("f.log".into(), text)]) {
            Ok(run) => prop_assert!(run.series.len() <= bound::MAX_SERIES_POINTS),
            Err(e) => {
                let e = e.to_string();
                prop_assert!(e.starts_with("f.log:") || e.starts_with("f.log: the log is empty"), "{}", e);
            }
        }
    }
}

proptest! {
    // each case draws a page: fewer cases
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn documents_of_any_numbers_draw_a_page(v in prop::collection::vec(number(), 12)) {
        let d = json!({"tps": v[0], "duration_s": v[1],
            "transactions": {"ok": v[2], "failed": v[3]},
            "latency_ms": {"mean": v[4], "p50": v[5], "p99": v[6], "max": v[7]},
            "series": [{"second": v[8], "tps": v[9], "latency_ms_mean": v[10]},
                       {"second": v[11], "tps": v[0]}],
            "per_statement": [{"script": "a", "text": "select 1",
                               "executions": v[2], "latency_ms_mean": v[4]}]});
        let run = doc::run("d.json".into(), &d);
        let m = model::Model { loose: vec![run], ..model::Model::default() };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || { let _ = tx.send(build(&m, &Options::default()).map(|r| r.html.len())); });
        let got = rx.recv_timeout(std::time::Duration::from_secs(60));
        prop_assert!(got.is_ok(), "building the page took over 60 s: {:?}", v);
    }
}
