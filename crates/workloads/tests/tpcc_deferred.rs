//! TPC-C with `deferred_delivery=on` through the engine on a real server: the terminal's
//! Delivery only queues (no statement, its own latency), `delivery_deferred` runs the business
//! transaction (client-side SQL or the function) — orders get their carriers, NEW-ORDER rows
//! leave, every consistency condition holds — and the districts skipped are reported; concurrent
//! Deliveries on one warehouse skip no district that has orders (`SKIP LOCKED`), in both
//! `procedures` modes; TPM counts the database transactions `pg_stat_database` counts.

mod tpcc_common;

use pgrig_engine::config::Duration;
use pgrig_engine::document::RunDocument;
use pgrig_script::QueryMode;
use pgrig_workloads::tpcc::{check, metrics, report, Config};
use tpcc_common::Db;

fn cfg(pairs: &[(&str, &str)]) -> Config {
    let mut o = pgrig_workloads::Options::new();
    for (k, v) in pairs {
        o.set(k, *v);
    }
    Config::from_options(&o).expect("valid options")
}

fn run(db: &Db, pairs: &[(&str, &str)], clients: u32, mode: QueryMode) -> RunDocument {
    // 5 decks of 23 cards and the 5 deferred Deliveries they queue
    tpcc_common::run(db, pairs, clients, Duration::Transactions(120), mode)
}

fn counts(doc: &RunDocument) -> Vec<(&str, u64)> {
    doc.scripts
        .iter()
        .map(|s| (s.desc.as_str(), s.transactions.ok))
        .collect()
}

#[test]
fn deferred_deliveries_deliver_outside_the_terminals_response_time() {
    let db = Db::loaded(2);
    let undelivered = "select count(*) from orders where o_carrier_id is null";
    let mut delivered = 0i64;
    for (procedures, mode) in [("off", QueryMode::Simple), ("on", QueryMode::Prepared)] {
        let before = db.int(undelivered);
        let before_new = db.int("select count(*) from new_order");
        let doc = run(
            &db,
            &[
                ("warehouses", "2"),
                ("deferred_delivery", "on"),
                ("procedures", procedures),
            ],
            4,
            mode,
        );
        assert_eq!(doc.aborted_clients, 0, "procedures={procedures}");
        assert_eq!(doc.transactions.failed, 0);
        assert_eq!(
            counts(&doc),
            [
                ("new_order", 200),
                ("payment", 200),
                ("order_status", 20),
                ("delivery", 20),
                ("stock_level", 20),
                ("delivery_deferred", 20)
            ],
            "procedures={procedures}"
        );
        // 20 deliveries of 10 districts each, none skipped: a concurrent Delivery on the same
        // warehouse takes the next oldest order, not the same one
        let committed = 200 - doc.transactions.rollbacks as i64;
        let now_delivered = before + committed - db.int(undelivered);
        assert_eq!(now_delivered, 200, "orders delivered");
        assert_eq!(
            db.int("select count(*) from new_order"),
            before_new + committed - now_delivered
        );
        delivered += now_delivered;
        for o in check::run(&db.wire(), false).unwrap() {
            assert!(o.passed(), "procedures={procedures}: {}", o.line());
        }
        // the queuing runs no statement; the business transaction runs Delivery's
        let script = |name: &str| doc.scripts.iter().find(|s| s.desc == name).unwrap();
        let (queue, exec) = (script("delivery"), script("delivery_deferred"));
        assert!(queue.commands.iter().all(|c| c.executions == 0));
        assert!(exec.commands.iter().any(|c| c.executions >= 20));
        assert!(
            queue.latency_ms.max < exec.latency_ms.min,
            "queuing {:?} vs execution {:?}",
            queue.latency_ms,
            exec.latency_ms
        );
        let f = metrics::figures(&doc, &cfg(&[("warehouses", "2")]));
        let names: Vec<&str> = f.types.iter().map(|t| t.name).collect();
        assert_eq!(names.len(), 6, "{names:?}");
        assert_eq!(f.types[5].p90_limit_s, 80.0);
        // shares of the terminals' 460 transactions
        assert!((f.types[3].percent - 100.0 * 20.0 / 460.0).abs() < 1e-9);
        let lines = report::render(&f);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("delivery_deferred") && l.contains("pass (≤ 80 s)")),
            "{lines:?}"
        );
        assert_eq!(f.skipped_districts, Some(0), "procedures={procedures}");
    }
    assert_eq!(
        db.int("select sum(c_delivery_cnt) from customer"),
        delivered,
        "each delivered order's customer counted it"
    );
}

#[test]
fn districts_without_undelivered_orders_are_reported_skipped() {
    let db = Db::loaded(1);
    // district 1 has nothing left to deliver
    db.psql(
        "update orders set o_carrier_id = 1 where o_w_id = 1 and o_d_id = 1 and o_carrier_id is null; \
         update order_line set ol_delivery_d = localtimestamp where ol_w_id = 1 and ol_d_id = 1 and ol_delivery_d is null; \
         delete from new_order where no_w_id = 1 and no_d_id = 1",
    );
    // two clients: concurrent Deliveries skip only the empty district
    let doc = run(&db, &[("deferred_delivery", "on")], 2, QueryMode::Extended);
    assert_eq!(doc.aborted_clients, 0);
    let f = metrics::figures(&doc, &cfg(&[]));
    let deferred = f.types.iter().find(|t| t.name == "delivery_deferred");
    assert_eq!(deferred.map(|t| t.count), Some(10));
    // a New-Order the run entered in district 1 may be delivered: every other delivery skips it
    let skipped = f
        .skipped_districts
        .expect("the skipped districts are counted");
    let delivered_1 = db.int(
        "select count(*) from orders where o_w_id = 1 and o_d_id = 1 and o_id > 3000 and o_carrier_id is not null",
    );
    assert_eq!(skipped as i64, 10 - delivered_1);
    assert_eq!(
        db.int("select count(*) from orders where o_d_id <> 1 and o_carrier_id is not null")
            - 9 * 2100,
        10 * 9
    );
    assert!(report::render(&f)
        .iter()
        .any(|l| l == &format!("districts skipped by Delivery (no undelivered order): {skipped}")));
}

#[test]
fn concurrent_deliveries_on_one_warehouse_skip_no_district_with_orders() {
    let db = Db::loaded(1);
    let undelivered = "select count(*) from orders where o_carrier_id is null";
    for (procedures, deferred) in [("off", "off"), ("on", "off"), ("off", "on")] {
        let before = db.int(undelivered);
        let new_orders = db.int("select count(*) from new_order");
        // 8 clients on one warehouse, 10 decks each: 80 Deliveries of 10 districts that all
        // have hundreds of undelivered orders
        let pairs = [("procedures", procedures), ("deferred_delivery", deferred)];
        let n = 230 + if deferred == "on" { 10 } else { 0 };
        let doc = tpcc_common::run(
            &db,
            &pairs,
            8,
            Duration::Transactions(n),
            QueryMode::Prepared,
        );
        assert_eq!(doc.aborted_clients, 0);
        let f = metrics::figures(&doc, &cfg(&pairs));
        let committed = 800 - doc.transactions.rollbacks as i64;
        let delivered = before + committed - db.int(undelivered);
        let label = format!("procedures={procedures} deferred={deferred}");
        assert_eq!(
            delivered, 800,
            "{label}: every district delivered one order"
        );
        assert_eq!(
            new_orders + committed - db.int("select count(*) from new_order"),
            800,
            "{label}"
        );
        assert_eq!(f.skipped_districts, Some(0), "{label}");
        for o in check::run(&db.wire(), false).unwrap() {
            assert!(o.passed(), "{label}: {}", o.line());
        }
    }
}

#[test]
fn tpm_counts_the_database_transactions_pg_stat_database_counts() {
    let db = Db::loaded(2);
    for (procedures, deferred) in [("off", "on"), ("on", "on"), ("off", "off")] {
        let pairs = [
            ("warehouses", "2"),
            ("procedures", procedures),
            ("deferred_delivery", deferred),
        ];
        let before = db.server_xacts();
        let n = 115 + if deferred == "on" { 5 } else { 0 };
        let doc = tpcc_common::run(
            &db,
            &pairs,
            4,
            Duration::Transactions(n),
            QueryMode::Prepared,
        );
        let server = db.server_xacts() - before;
        let f = metrics::figures(&doc, &cfg(&pairs));
        let counted = metrics::database_transactions(&doc) as i64;
        assert!((f.tpm * f.minutes - counted as f64).abs() < 1e-6);
        let label = format!("procedures={procedures} deferred={deferred}");
        eprintln!(
            "{label}: pg_stat_database {server}, counted {counted}, completed {}",
            doc.transactions.ok
        );
        // besides: the setup connection's statements (the preflight, the dataset's constants,
        // the six functions' CREATE OR REPLACE with procedures) and each client's preparing —
        // 7 (+ 6) measured; counting each deferred Delivery twice would be 20 more
        let functions = if procedures == "on" { 6 } else { 0 };
        let setup = server - counted - functions;
        assert!(
            (0..=8).contains(&setup),
            "{label}: pg_stat_database {server} vs {counted} counted"
        );
    }
}
