//! TPC-C through the engine (`pgrig_engine::run_bench` with `BenchConfig.native`) on a real
//! server: a no-wait run in each query mode under read committed with retries keeps every
//! consistency condition and the mix, and its figures (NOPM, TPM, limits) come out of the run
//! document; terminal mode paces each terminal by its keying and think times; the steady
//! window's New-Orders are the orders entered in it (`o_entry_d`); the efficiency's ceiling is
//! what a terminal's own delays give.

mod tpcc_common;

use std::sync::Arc;

use pgrig_engine::config::{BenchConfig, Duration};
use pgrig_engine::workload::NativeWorkload;
use pgrig_engine::{run_bench, StopHandle};
use pgrig_script::QueryMode;
use pgrig_workloads::tpcc::{check, metrics, report, Config};
use tpcc_common::{conn_args, native, run, Db};

/// TPC-C's settings from `pairs`.
fn cfg(pairs: &[(&str, &str)]) -> Config {
    let mut o = pgrig_workloads::Options::new();
    for (k, v) in pairs {
        o.set(k, *v);
    }
    Config::from_options(&o).expect("valid options")
}

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
        let f = metrics::figures(&doc, &cfg(&[("warehouses", "2")]));
        assert!(f.new_orders_per_min > 0.0 && f.tpm > f.new_orders_per_min);
        assert!(f.efficiency.is_none());
        assert_eq!(f.types.len(), 5);
        assert!((f.types[0].percent - 100.0 * 200.0 / 460.0).abs() < 1e-9);
        assert!(f.types.iter().all(|t| t.p90_pass == Some(true)), "{f:?}");
        let mut o = pgrig_workloads::Options::new();
        o.set("warehouses", "2");
        let lines = report::lines_for(&doc, &o).unwrap();
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
    let f = metrics::figures(
        &doc,
        &cfg(&[("mode", "terminals"), ("think_scale", "0.001")]),
    );
    // not the specification's times: no efficiency against its ceiling
    assert!(f.efficiency.is_none());
    let lines = report::render(&f);
    assert!(lines[0].starts_with("tpmC-like"), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("efficiency: not comparable (think_scale=0.001 ≠ 1")),
        "{lines:?}"
    );
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
    doc.options.clients = 400;
    doc.transactions.ok = 2000;
    doc.transactions.rollbacks = 10;
    doc.transactions.retries = 7;
    doc.transactions.failed = 3;
    for (s, (ok, p90)) in
        doc.scripts
            .iter_mut()
            .zip([(1000, 100.0), (970, 5001.0), (30, 3.0), (0, 0.0), (0, 0.0)])
    {
        s.transactions.ok = ok;
        s.latency_ms.p90 = p90;
    }
    doc.type_series.clear();
    let terminals = cfg(&[("mode", "terminals"), ("warehouses", "40")]);
    let f = metrics::figures(&doc, &terminals);
    assert_eq!(f.new_orders_per_min, 495.0);
    // database transactions: 2000 completed and 10 attempts rolled back, over 2 minutes
    assert_eq!(f.tpm, 1005.0);
    assert_eq!(f.types[0].percent, 50.0);
    let pass: Vec<Option<bool>> = f.types.iter().map(|t| t.p90_pass).collect();
    assert_eq!(pass, [Some(true), Some(false), Some(true), None, None]);
    let ceiling = 12.605_042 * 0.99;
    assert!((f.efficiency.unwrap() - 495.0 / (ceiling * 40.0)).abs() < 1e-6);
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    let lines = report::render(&f);
    assert!(
        lines[0].starts_with("tpmC-like") && lines[0].ends_with("495.0"),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with(
            "efficiency: 99.2 % of the card deck's ceiling of 12.48 committed New-Orders/min per warehouse"
        )),
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
            .any(|l| l.starts_with("delivery ") && l.ends_with("n/a, none ran (≤ 5 s)")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("rollbacks (unused item): 10")),
        "{lines:?}"
    );
    assert!(metrics::figures(&doc, &cfg(&[("warehouses", "40")]))
        .efficiency
        .is_none());
    // terminal mode with 300 clients on 40 warehouses: 10 warehouses have no terminal
    doc.options.clients = 300;
    let f = metrics::figures(&doc, &terminals);
    assert_eq!(
        f.warnings,
        ["terminal mode with 300 clients on 40 warehouses: 10 of 40 warehouses get no terminal; the specification runs 10 terminals per warehouse (use -c 400)"]
    );
    assert!(report::render(&f)
        .last()
        .unwrap()
        .starts_with("warning: terminal mode with 300 clients"));
    // the steady window without a per-type series: the run's New-Order share
    doc.series = (1..=120)
        .map(|second| pgrig_engine::document::Second {
            second,
            tps: if second <= 10 { 200 } else { 1200 },
            failed: 0,
            retries: 0,
            latency_ms_mean: 1.0,
            ..Default::default()
        })
        .collect();
    let f = metrics::figures_steady(&doc, &cfg(&[("warehouses", "40")]), 10);
    let steady = f.steady.clone().expect("a steady window");
    assert_eq!((steady.from, steady.to), (11, 120));
    assert_eq!(steady.tpm, 1200.0 * 60.0);
    assert!(steady.estimated);
    assert!((steady.new_orders_per_min - 1200.0 * 60.0 * 990.0 / 2000.0).abs() < 1e-6);
    let mut options = pgrig_workloads::Options::new();
    options.set("rampup", "10").set("warehouses", "40");
    doc.workload = Some("tpcc".into());
    let lines = report::lines_for(&doc, &options).unwrap();
    assert!(
        lines[0].contains("over seconds 11-120 (after a 10 s ramp-up; estimated"),
        "{lines:?}"
    );
    doc.workload = Some("ycsb-a".into());
    assert!(report::lines_for(&doc, &pgrig_workloads::Options::new()).is_none());
}

/// The New-Orders whose `o_entry_d` falls inside seconds `from..=to` of a run that started at
/// `start` (Unix seconds).
fn orders_entered(db: &Db, start: f64, from: u64, to: u64) -> i64 {
    db.int(&format!(
        "select count(*) from orders where o_id > 3000 and extract(epoch from o_entry_d::timestamptz) \
         between {} and {}",
        start + (from - 1) as f64,
        start + to as f64
    ))
}

#[test]
fn terminal_nopm_counts_the_new_orders_committed_inside_the_steady_window() {
    let db = Db::loaded(1);
    // times scaled 5×: New-Order keys for 3.6 s, the others for 0.4-0.6 s, so the ramp-up
    // runs no New-Order and the mix is not even over time (the 60 s run with 18 s of
    // keying, shortened; 40 terminals on one warehouse for enough orders)
    let pairs = [
        ("mode", "terminals"),
        ("think_scale", "0.2"),
        ("rampup", "3"),
    ];
    let doc = run(&db, &pairs, 40, Duration::Seconds(12), QueryMode::Prepared);
    assert_eq!(doc.aborted_clients, 0);
    let f = metrics::figures_steady(&doc, &cfg(&pairs), 3);
    let s = f.steady.clone().expect("a steady window");
    assert!(!s.estimated);
    let minutes = (s.to - s.from + 1) as f64 / 60.0;
    let start = doc.started_at_unix_s.expect("the run's start");
    let entered = orders_entered(&db, start, s.from, s.to);
    let counted = s.new_orders_per_min * minutes;
    // the whole run's share applied to the window's transactions (the old estimate)
    let window_tx: u64 = doc.series[(s.from - 1) as usize..s.to as usize]
        .iter()
        .map(|x| x.tps)
        .sum();
    let share_estimate = window_tx as f64 * f.new_orders_per_min / f.tpm;
    eprintln!(
        "window {}-{}: o_entry_d {entered}, counted {counted}, share estimate {share_estimate:.1}",
        s.from, s.to
    );
    // an order entered near an edge may commit on the other side of it
    assert!(
        (counted - entered as f64).abs() <= 2.0,
        "counted {counted} vs {entered} orders entered in the window"
    );
    assert!(
        entered as f64 - share_estimate > 5.0,
        "the run's share undercounts the window: {share_estimate} vs {entered}"
    );
}

#[test]
fn the_deck_ceiling_is_what_the_terminals_own_delays_give() {
    use pgrig_engine::workload::{ClientSeed, Workload};
    let tpcc = pgrig_workloads::tpcc::Tpcc::new(cfg(&[("mode", "terminals")]));
    // one terminal's programme for 2,300,000 transactions: the mean time per New-Order
    let mut p = tpcc.client(ClientSeed {
        id: 0,
        clients: 10,
        seed: 9,
    });
    let (mut us, mut new_orders) = (0u64, 0u64);
    for _ in 0..2_300_000 {
        let tx = p.choose().unwrap();
        us += p.delay_us(tx);
        new_orders += u64::from(tx == 0);
    }
    let per_warehouse = 10.0 * new_orders as f64 / (us as f64 / 60e6);
    let ceiling = metrics::ceiling_per_warehouse();
    assert!(
        (per_warehouse / ceiling - 1.0).abs() < 0.002,
        "simulated {per_warehouse} vs ceiling {ceiling}"
    );
    assert!((per_warehouse / 12.86 - 1.0).abs() > 0.015);
    assert!((metrics::committed_ceiling_per_warehouse() - ceiling * 0.99).abs() < 1e-12);
}

/// `doc` reshaped as a terminal run of `seconds` on one warehouse whose committed New-Orders
/// complete in the given seconds (1 = the first), `n` in each.
fn new_orders_in(doc: &mut pgrig_engine::document::RunDocument, seconds: u64, at: &[(u64, u64)]) {
    doc.duration_s = seconds as f64;
    doc.options.clients = 10;
    doc.series = (1..=seconds)
        .map(|second| pgrig_engine::document::Second {
            second,
            ..Default::default()
        })
        .collect();
    let mut ok = vec![0; seconds as usize];
    for &(second, n) in at {
        ok[(second - 1) as usize] = n;
        doc.series[(second - 1) as usize].tps = n;
    }
    doc.type_series = vec![pgrig_engine::document::TypeSeries {
        desc: "new_order".into(),
        rollbacks: vec![0; ok.len()],
        ok,
    }];
}

#[test]
fn an_efficiency_above_the_ceiling_says_why_and_a_short_ramp_up_is_warned() {
    let db = Db::loaded(1);
    let mut doc = run(&db, &[], 1, Duration::Transactions(1), QueryMode::Prepared);
    let terminals = |rampup: &str| {
        cfg(&[
            ("mode", "terminals"),
            ("warehouses", "1"),
            ("rampup", rampup),
        ])
    };
    // by default a terminal run leaves out its first cycle (18 s keying + 12 s think) when it
    // goes on after it, else a tenth of it
    let default = cfg(&[("mode", "terminals")]);
    assert_eq!(metrics::first_cycle_s(&default), Some(30.0));
    assert_eq!(metrics::rampup_s(&default, 40.0), 30);
    assert_eq!(metrics::rampup_s(&default, 400.0), 40);
    assert_eq!(metrics::rampup_s(&default, 20.0), 2);
    assert_eq!(metrics::rampup_s(&cfg(&[]), 40.0), 4);
    assert_eq!(metrics::first_cycle_s(&cfg(&[])), None);

    // the run: 40 s, a 10 s ramp-up, every terminal's New-Order in second 19
    new_orders_in(&mut doc, 40, &[(19, 10)]);
    let f = metrics::figures_steady(&doc, &terminals("10"), 10);
    assert!(f.efficiency.unwrap() > 1.0, "{f:?}");
    let lines = report::render(&f);
    let said = |what: &str| lines.iter().any(|l| l.contains(what));
    assert!(
        said("warning: the steady window starts at second 11, inside the terminals' first cycle (30 s: a New-Order's 18 s keying and 12 s mean think time)")
            && said("use -o rampup=30 or more"),
        "{lines:?}"
    );
    assert!(
        said("above the ceiling (160.3 %) because the window starts inside the terminals' first cycle (see the warning): it holds 10 committed New-Orders where the ceiling allows 6.2"),
        "{lines:?}"
    );

    // after the first cycle: 3 New-Orders in 10 s where 2.1 are the most on average is chance
    new_orders_in(&mut doc, 40, &[(19, 10), (35, 3)]);
    let f = metrics::figures_steady(&doc, &terminals("30"), 30);
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    let note = f.efficiency_note.clone().expect("a note");
    assert!(
        note.starts_with("above the ceiling (144.2 %) by chance: 3 committed New-Orders in the window where the ceiling allows 2.1 on average"),
        "{note}"
    );
    // 20 where 2.1 are allowed is not
    new_orders_in(&mut doc, 40, &[(35, 20)]);
    let f = metrics::figures_steady(&doc, &terminals("30"), 30);
    let note = f.efficiency_note.clone().expect("a note");
    assert!(note.contains("by more than chance explains"), "{note}");
    // at or below the ceiling: no note
    new_orders_in(&mut doc, 40, &[(35, 2)]);
    let f = metrics::figures_steady(&doc, &terminals("30"), 30);
    assert!(f.efficiency.unwrap() <= 1.0);
    assert_eq!(f.efficiency_note, None);
}
