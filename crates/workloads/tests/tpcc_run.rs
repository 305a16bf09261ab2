//! TPC-C through the engine (`pgrig_engine::run_bench` with `BenchConfig.native`) on a real
//! server: a no-wait run in each query mode under read committed with retries keeps every
//! consistency condition and the mix, and its figures (NOPM, TPM, limits) come out of the run
//! document; terminal mode paces each terminal by its keying and think times.

mod tpcc_common;

use std::sync::Arc;

use pgrig_engine::config::{BenchConfig, Duration};
use pgrig_engine::workload::NativeWorkload;
use pgrig_engine::{run_bench, StopHandle};
use pgrig_script::QueryMode;
use pgrig_workloads::tpcc::{check, metrics, Mode};
use tpcc_common::{conn_args, native, run, Db};

#[test]
fn a_no_wait_run_in_every_query_mode_keeps_the_conditions_and_the_mix() {
    let db = Db::loaded(2);
    let mut doc_rollbacks = 0;
    for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
        let doc = run(
            &db,
            &[("warehouses", "2")],
            4,
            Duration::Transactions(115),
            mode,
        );
        assert_eq!(doc.aborted_clients, 0, "{mode:?}");
        assert_eq!(doc.transactions.failed, 0, "{mode:?}");
        assert_eq!(doc.transactions.ok, 460, "{mode:?}");
        doc_rollbacks += doc.transactions.rollbacks;
        // 115 = 5 decks of 23 per client: the exact minimum mix
        let counts: Vec<(&str, u64)> = doc
            .scripts
            .iter()
            .map(|s| (s.desc.as_str(), s.transactions.ok))
            .collect();
        assert_eq!(
            counts,
            [
                ("new_order", 200),
                ("payment", 200),
                ("order_status", 20),
                ("delivery", 20),
                ("stock_level", 20)
            ],
            "{mode:?}"
        );
        for o in check::run(&db.wire(), false).unwrap() {
            assert!(o.passed(), "{mode:?}: {}", o.line());
        }
        let f = metrics::figures(&doc, Mode::NoWait, 2);
        assert!(f.new_orders_per_min > 0.0 && f.tpm > f.new_orders_per_min);
        assert!(f.efficiency.is_none());
        assert_eq!(f.types.len(), 5);
        assert!((f.types[0].percent - 100.0 * 200.0 / 460.0).abs() < 1e-9);
        assert!(f.types.iter().all(|t| t.p90_pass), "{f:?}");
        let mut o = pgrig_workloads::Options::new();
        o.set("warehouses", "2");
        let lines = metrics::lines_for(&doc, &o).unwrap();
        assert!(lines[0].starts_with("NOPM"), "{lines:?}");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("stock_level") && l.contains("pass (≤ 20 s)")),
            "{lines:?}"
        );
    }
    // three runs of 200 New-Orders each: the orders are there, less those rolled back
    let rollbacks = 600 - (db.int("select sum(d_next_o_id) from district") - 20 * 3001);
    assert_eq!(
        db.int("select count(*) from orders") - 60_000,
        600 - rollbacks
    );
    assert!(rollbacks < 30, "{rollbacks} rollbacks of 600 New-Orders");
    assert_eq!(
        doc_rollbacks as i64, rollbacks,
        "the document counts the rollbacks"
    );
}

#[test]
fn terminals_are_paced_by_keying_and_think_times() {
    let db = Db::loaded(1);
    // keying and think times scaled down 1000×: a terminal's mean cycle is about 20.7 ms
    let doc = run(
        &db,
        &[("mode", "terminals"), ("think_scale", "0.001")],
        10,
        Duration::Seconds(3),
        QueryMode::Prepared,
    );
    assert_eq!(doc.aborted_clients, 0);
    let ceiling = 10.0 / 0.0207;
    assert!(
        doc.tps > 0.2 * ceiling && doc.tps < 1.3 * ceiling,
        "tps {} vs ceiling {ceiling}",
        doc.tps
    );
    let f = metrics::figures(&doc, Mode::Terminals, 1);
    assert!(f.efficiency.is_some());
    let lines = metrics::render(&f);
    assert!(lines[0].starts_with("tpmC-like"), "{lines:?}");
    for o in check::run(&db.wire(), false).unwrap() {
        assert!(o.passed(), "{}", o.line());
    }
}

#[test]
fn a_run_given_another_warehouse_count_than_loaded_stops_before_it_starts() {
    let db = Db::loaded(1);
    let n = native(&[("warehouses", "3")]);
    let cfg = BenchConfig {
        conn: conn_args(db.conninfo()),
        clients: 1,
        duration: Duration::Transactions(5),
        native: Some(NativeWorkload(n.workload)),
        ..Default::default()
    };
    let e = run_bench(
        cfg,
        Arc::new(tpcc_common::PrintSink),
        &StopHandle::default(),
    )
    .expect_err("the preflight stops the run");
    let text = e.to_string();
    assert!(
        text.contains("the database has 1 warehouses but the run was given warehouses=3"),
        "{text}"
    );
    assert_eq!(db.int("select count(*) from orders"), 30_000);
}

#[test]
fn figures_count_committed_new_orders_and_mark_the_response_time_limits() {
    let db = Db::loaded(1);
    let mut doc = run(&db, &[], 1, Duration::Transactions(23), QueryMode::Prepared);
    // the run's own document, with figures set to known values
    doc.duration_s = 120.0;
    doc.transactions.ok = 2000;
    doc.transactions.rollbacks = 10;
    for (s, (ok, p90)) in doc.scripts.iter_mut().zip([
        (1000, 100.0),
        (900, 5001.0),
        (40, 3.0),
        (30, 40.0),
        (30, 19_000.0),
    ]) {
        s.transactions.ok = ok;
        s.latency_ms.p90 = p90;
    }
    let f = metrics::figures(&doc, Mode::Terminals, 40);
    assert_eq!(f.new_orders_per_min, 495.0);
    assert_eq!(f.tpm, 1000.0);
    assert_eq!(f.types[0].percent, 50.0);
    let pass: Vec<bool> = f.types.iter().map(|t| t.p90_pass).collect();
    assert_eq!(pass, [true, false, true, true, true]);
    assert!((f.efficiency.unwrap() - 495.0 / (12.86 * 40.0)).abs() < 1e-12);
    let lines = metrics::render(&f);
    assert!(
        lines[0].starts_with("tpmC-like") && lines[0].ends_with("495.0"),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("payment") && l.contains("FAIL (≤ 5 s)")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("rollbacks (unused item): 10")),
        "{lines:?}"
    );
    assert!(metrics::figures(&doc, Mode::NoWait, 40)
        .efficiency
        .is_none());
    // the steady window: a slow first 10 s (ramp-up), then 1200 transactions per second
    doc.series = (1..=120)
        .map(|second| pgrig_engine::document::Second {
            second,
            tps: if second <= 10 { 200 } else { 1200 },
            failed: 0,
            retries: 0,
            latency_ms_mean: 1.0,
        })
        .collect();
    let f = metrics::figures_steady(&doc, Mode::NoWait, 40, 10);
    let steady = f.steady.clone().expect("a steady window");
    assert_eq!((steady.from, steady.to), (11, 120));
    assert_eq!(steady.tpm, 1200.0 * 60.0);
    // committed New-Orders are 990 of 2000 transactions
    assert!((steady.new_orders_per_min - 1200.0 * 60.0 * 990.0 / 2000.0).abs() < 1e-6);
    let mut options = pgrig_workloads::Options::new();
    options.set("rampup", "10").set("warehouses", "40");
    doc.workload = Some("tpcc".into());
    let lines = metrics::lines_for(&doc, &options).unwrap();
    assert!(
        lines[0].contains("over seconds 11-120 (after a 10 s ramp-up)"),
        "{lines:?}"
    );
    doc.workload = Some("ycsb-a".into());
    assert!(metrics::lines_for(&doc, &pgrig_workloads::Options::new()).is_none());
}
