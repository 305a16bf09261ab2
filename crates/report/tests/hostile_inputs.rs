//! Hostile inputs found by fuzzing (issue 21, item 5): each gives a bounded report or an error
//! naming the file and line, within seconds, never a hang, an abort or a panic.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use pgrig_report::{from_inputs, Options, Report, ReportError};

/// `pgrig report FILES` as the library runs it, failing the test if it takes over 60 s.
fn report(files: &[PathBuf]) -> Result<Report, ReportError> {
    let args: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(from_inputs(
            "/nonexistent/store.db",
            &args,
            &Options::default(),
        ));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("report did not finish within 60 s")
}

fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_document_of_f64_max_figures_is_drawn_not_hung() {
    let dir = tempfile::tempdir().unwrap();
    let doc = file(
        dir.path(),
        "big.json",
        r#"{"tps": 1.797e308, "transactions": {"ok": 1.797e308},
            "latency_ms": {"p50": 1.797e308, "max": 1.797e308},
            "series": [{"second": 1.797e308, "tps": 1.797e308, "latency_ms_mean": 1.797e308}],
            "per_statement": [{"script": "a", "text": "select 1",
                               "executions": 1.797e308, "latency_ms_mean": 1.797e308}]}"#,
    );
    let r = report(&[doc]).unwrap();
    assert!(r.html.len() < 10 << 20);
}

#[test]
fn an_eleven_day_gap_gives_a_page_of_bounded_size() {
    let dir = tempfile::tempdir().unwrap();
    let log = file(
        dir.path(),
        "gap.log",
        "0 1 1000 0 1700000000 100000\n0 2 1000 0 1700950400 100000\n",
    );
    let r = report(&[log]).unwrap();
    assert!(r.html.len() < 20 << 20, "{} bytes", r.html.len());
}

#[test]
fn infinite_epochs_are_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = file(
        dir.path(),
        "inf.log",
        "0 1 1000 0 1700000000 100000\n0 2 1000 0 inf 0\n",
    );
    let e = report(std::slice::from_ref(&log)).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{}:2: time_epoch \"inf\" is not a finite number",
            log.display()
        )
    );
}

#[test]
fn a_fifo_in_place_of_a_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("run.json");
    let ok = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(ok.success());
    // what `load` opens when a name passed as a file turned into a FIFO after it was checked
    let e = pgrig_report::input::files::load(&fifo)
        .err()
        .unwrap()
        .to_string();
    assert_eq!(
        e,
        format!("could not read \"{}\": not a regular file", fifo.display())
    );
}

#[test]
fn a_point_far_outside_the_axis_is_drawn_at_its_edge_not_a_panic() {
    // found by tests/input_proptest.rs: plotters' pixel arithmetic overflowed
    let dir = tempfile::tempdir().unwrap();
    let doc = file(
        dir.path(),
        "neg.json",
        r#"{"tps": 0, "transactions": {"ok": 0},
            "latency_ms": {"p50": -1.7976931348623157e308, "p99": 0, "max": 0}}"#,
    );
    let _ = report(&[doc]);
}
