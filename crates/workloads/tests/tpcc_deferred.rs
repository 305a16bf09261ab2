//! TPC-C with `deferred_delivery=on` through the engine on a real server: the terminal's
//! Delivery only queues (no statement, its own latency), `delivery_deferred` runs the business
//! transaction (client-side SQL or the function) — orders get their carriers, NEW-ORDER rows
//! leave, every consistency condition holds — and the districts skipped are reported.

mod tpcc_common;

use pgrig_engine::config::Duration;
use pgrig_engine::document::RunDocument;
use pgrig_script::QueryMode;
use pgrig_workloads::tpcc::{check, metrics, Mode};
use tpcc_common::Db;

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
        // 20 deliveries of 10 districts each; a district is skipped when another client's
        // Delivery on the same warehouse took its oldest order first (read committed)
        let committed = 200 - doc.transactions.rollbacks as i64;
        let now_delivered = before + committed - db.int(undelivered);
        assert!(now_delivered > 150, "{now_delivered} orders delivered");
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
        let f = metrics::figures(&doc, Mode::NoWait, 2);
        let names: Vec<&str> = f.types.iter().map(|t| t.name).collect();
        assert_eq!(names.len(), 6, "{names:?}");
        assert_eq!(f.types[5].p90_limit_s, 80.0);
        // shares of the terminals' 460 transactions
        assert!((f.types[3].percent - 100.0 * 20.0 / 460.0).abs() < 1e-9);
        let lines = metrics::render(&f);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("delivery_deferred") && l.contains("pass (≤ 80 s)")),
            "{lines:?}"
        );
        match procedures {
            "off" => assert_eq!(f.skipped_districts, Some(200 - now_delivered as u64)),
            _ => assert_eq!(f.skipped_districts, None),
        }
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
    // one client: no concurrent Delivery takes a district's order first
    let doc = run(&db, &[("deferred_delivery", "on")], 1, QueryMode::Extended);
    assert_eq!(doc.aborted_clients, 0);
    let f = metrics::figures(&doc, Mode::NoWait, 1);
    let deferred = f.types.iter().find(|t| t.name == "delivery_deferred");
    assert_eq!(deferred.map(|t| t.count), Some(5));
    // a New-Order the run entered in district 1 may be delivered: every other delivery skips it
    let skipped = f.skipped_districts.expect("client-side SQL reports skips");
    let delivered_1 = db.int(
        "select count(*) from orders where o_w_id = 1 and o_d_id = 1 and o_id > 3000 and o_carrier_id is not null",
    );
    assert_eq!(skipped as i64, 5 - delivered_1);
    assert_eq!(
        db.int("select count(*) from orders where o_d_id <> 1 and o_carrier_id is not null")
            - 9 * 2100,
        5 * 9
    );
    assert!(metrics::render(&f)
        .iter()
        .any(|l| l == &format!("districts skipped by Delivery (no undelivered order): {skipped}")));
}
