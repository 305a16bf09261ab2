//! TPC-C's five transactions on a real server (2 warehouses), driven statement by statement:
//! the rows each must change, the intended rollback leaving nothing behind, a mixed run
//! keeping every consistency condition, and a corrupted row failing the condition about it.

mod tpcc_common;

use pgrig_engine::workload::{ClientSeed, Step};
use pgrig_workloads::tpcc::check;
use pgrig_workloads::tpcc::delivery::Delivery;
use pgrig_workloads::tpcc::input::Draw;
use pgrig_workloads::tpcc::new_order::NewOrder;
use pgrig_workloads::tpcc::order_status::OrderStatus;
use pgrig_workloads::tpcc::payment::Payment;
use pgrig_workloads::tpcc::rand::{NurandC, Rng};
use pgrig_workloads::tpcc::stock_level::StockLevel;
use tpcc_common::Db;

fn draw(rng: &mut Rng, w: i64) -> Draw<'_> {
    Draw {
        rng,
        c: NurandC::run(NurandC::load(15_011_992), 7),
        warehouses: 2,
        w,
        home_d: None,
    }
}

#[test]
fn new_order_inserts_its_order_and_lines_and_updates_stock() {
    let db = Db::loaded(2);
    let mut d = db.driver();
    let mut rng = Rng::new(11);
    let mut no = NewOrder::default();
    loop {
        no.generate(&mut draw(&mut rng, 1));
        if !no.rollback {
            break;
        }
    }
    no.restart();
    let before_next = db.int("select sum(d_next_o_id) from district where d_w_id = 1");
    let before_stock = db.int("select sum(s_order_cnt) from stock");
    assert_eq!(
        d.run(|r, p| no.step(r, p).unwrap_or_else(Step::Abort)),
        Ok(Step::Done)
    );
    assert_eq!(
        db.int("select sum(d_next_o_id) from district where d_w_id = 1"),
        before_next + 1
    );
    let order = db.psql(
        "select o_id, o_ol_cnt, o_carrier_id is null from orders where o_w_id = 1 and o_id = 3001",
    );
    let fields: Vec<&str> = order.trim().split('|').collect();
    assert_eq!(fields[0], "3001", "{order}");
    assert_eq!(fields[2], "t");
    let ol_cnt: i64 = fields[1].parse().unwrap();
    assert!((5..=15).contains(&ol_cnt));
    assert_eq!(
        db.int("select count(*) from order_line where ol_w_id = 1 and ol_o_id = 3001"),
        ol_cnt
    );
    assert_eq!(
        db.int("select count(*) from new_order where no_w_id = 1 and no_o_id = 3001"),
        1
    );
    assert_eq!(
        db.int("select sum(s_order_cnt) from stock"),
        before_stock + ol_cnt
    );
    assert_eq!(
        db.int("select count(*) from order_line where ol_o_id = 3001 and (ol_amount <= 0 or ol_dist_info is null or ol_delivery_d is not null)"),
        0
    );
}

#[test]
fn an_unused_item_rolls_new_order_back_and_leaves_nothing() {
    let db = Db::loaded(2);
    let mut d = db.driver();
    let mut rng = Rng::new(5);
    let mut no = NewOrder::default();
    let mut drawn = 0;
    loop {
        no.generate(&mut draw(&mut rng, 2));
        drawn += 1;
        if no.rollback {
            break;
        }
    }
    assert!(drawn > 10, "rollback drawn after only {drawn} New-Orders");
    no.restart();
    let sums = "select (select sum(d_next_o_id) from district), (select count(*) from orders), \
                (select count(*) from order_line), (select sum(s_ytd) from stock)";
    let before = db.psql(sums);
    assert_eq!(
        d.run(|r, p| no.step(r, p).unwrap_or_else(Step::Abort)),
        Ok(Step::RolledBack)
    );
    assert_eq!(db.psql(sums), before);
    assert_eq!(
        d.executed.last(),
        Some(&pgrig_workloads::tpcc::sql::ROLLBACK)
    );
}

#[test]
fn payment_moves_the_amount_through_warehouse_district_customer_and_history() {
    let db = Db::loaded(2);
    let mut d = db.driver();
    let mut rng = Rng::new(3);
    let totals = "select (select sum(w_ytd) from warehouse) - (select sum(d_ytd) from district), \
                  (select sum(c_balance) + sum(c_ytd_payment) from customer), (select count(*) from history)";
    let before = db.psql(totals);
    let w_before: f64 = db
        .psql("select sum(w_ytd) from warehouse")
        .trim()
        .parse()
        .unwrap();
    let c_before: f64 = db
        .psql("select sum(c_balance) from customer")
        .trim()
        .parse()
        .unwrap();
    let mut p = Payment::default();
    for i in 0..40 {
        p.generate(&mut draw(&mut rng, 1 + i % 2));
        p.restart();
        assert_eq!(
            d.run(|r, q| p.step(r, q).unwrap_or_else(Step::Abort)),
            Ok(Step::Done)
        );
    }
    let after = db.psql(totals);
    let (b, a): (Vec<&str>, Vec<&str>) = (
        before.trim().split('|').collect(),
        after.trim().split('|').collect(),
    );
    assert_eq!(a[0], b[0], "W_YTD and D_YTD grew by the same amounts");
    assert_eq!(
        a[1], b[1],
        "balance went down by what year-to-date payments went up"
    );
    assert_eq!(
        a[2].parse::<i64>().unwrap(),
        b[2].parse::<i64>().unwrap() + 40
    );
    let w_after: f64 = db
        .psql("select sum(w_ytd) from warehouse")
        .trim()
        .parse()
        .unwrap();
    let c_after: f64 = db
        .psql("select sum(c_balance) from customer")
        .trim()
        .parse()
        .unwrap();
    assert!(w_after > w_before + 40.0);
    assert!((w_after - w_before - (c_before - c_after)).abs() < 0.005);
    assert_eq!(
        db.int("select count(*) from history where h_data like '%    %' and h_amount >= 1"),
        40
    );
    assert_eq!(
        db.int("select count(*) from customer where c_payment_cnt > 1"),
        db.int(
            "select count(distinct (h_c_w_id, h_c_d_id, h_c_id)) from history where h_amount <> 10"
        )
    );
}

#[test]
fn delivery_delivers_each_districts_oldest_new_order() {
    let db = Db::loaded(2);
    let mut d = db.driver();
    let mut rng = Rng::new(4);
    let mut dl = Delivery::default();
    dl.generate(&mut draw(&mut rng, 2));
    dl.restart();
    assert_eq!(
        d.run(|r, p| dl.step(r, p).unwrap_or_else(Step::Abort)),
        Ok(Step::Done)
    );
    assert_eq!(dl.skipped, 0);
    assert_eq!(
        db.psql("select count(*), min(min) from (select no_d_id, min(no_o_id) from new_order where no_w_id = 2 group by no_d_id) x").trim(),
        "10|2102"
    );
    assert_eq!(
        db.int("select count(*) from new_order where no_w_id = 1"),
        9000
    );
    assert_eq!(db.int("select count(*) from orders where o_w_id = 2 and o_id = 2101 and o_carrier_id is not null"), 10);
    assert_eq!(db.int("select count(*) from order_line where ol_w_id = 2 and ol_o_id = 2101 and ol_delivery_d is null"), 0);
    assert_eq!(
        db.int("select sum(c_delivery_cnt) from customer where c_w_id = 2"),
        10
    );
    for o in check::run(&db.wire(), false).unwrap() {
        assert!(o.passed(), "{}", o.line());
    }
}

#[test]
fn order_status_and_stock_level_read_and_change_nothing() {
    let db = Db::loaded(2);
    let mut d = db.driver();
    let mut rng = Rng::new(8);
    let snapshot = "select (select sum(d_next_o_id) from district), (select sum(c_balance) from customer), (select sum(s_quantity) from stock)";
    let before = db.psql(snapshot);
    let mut os = OrderStatus::default();
    let mut sl = StockLevel::default();
    for i in 0..10 {
        os.generate(&mut draw(&mut rng, 1 + i % 2));
        os.restart();
        assert_eq!(
            d.run(|r, p| os.step(r, p).unwrap_or_else(Step::Abort)),
            Ok(Step::Done)
        );
        sl.generate(&mut draw(&mut rng, 1 + i % 2));
        sl.restart();
        assert_eq!(
            d.run(|r, p| sl.step(r, p).unwrap_or_else(Step::Abort)),
            Ok(Step::Done)
        );
    }
    assert_eq!(db.psql(snapshot), before);
    use pgrig_workloads::tpcc::sql::{OS_LINES, SL_STOCK};
    assert_eq!(d.executed.iter().filter(|&&s| s == OS_LINES).count(), 10);
    assert_eq!(d.executed.iter().filter(|&&s| s == SL_STOCK).count(), 10);
}

#[test]
fn a_mixed_run_keeps_every_consistency_condition() {
    let db = Db::loaded(2);
    let native = tpcc_common::native(&[("warehouses", "2")]);
    let mut d = db.driver();
    let mut client = native.workload.client(ClientSeed {
        id: 0,
        clients: 1,
        seed: 99,
    });
    let mut outcomes = [0u32; 3];
    for _ in 0..230 {
        let tx = client.choose().unwrap();
        client.begin(tx, false);
        match d.run(|r, p| client.step(r, p)).unwrap() {
            Step::Done => outcomes[0] += 1,
            Step::RolledBack => outcomes[1] += 1,
            other => panic!("{other:?}"),
        }
        outcomes[2] += 1;
    }
    assert_eq!(outcomes[0] + outcomes[1], 230);
    for o in check::run(&db.wire(), false).unwrap() {
        assert!(o.passed(), "{}", o.line());
    }
    assert!(
        db.int("select count(*) from new_order") < 18_000 + 100,
        "deliveries ran"
    );
    assert!(
        db.int("select count(*) from orders") > 60_000 + 80,
        "new orders ran"
    );
}

#[test]
fn a_corrupted_row_fails_the_condition_that_names_it() {
    let db = Db::loaded(2);
    db.psql("update district set d_ytd = d_ytd + 1 where d_w_id = 2 and d_id = 3");
    db.psql("delete from order_line where ol_w_id = 1 and ol_d_id = 4 and ol_o_id = 17 and ol_number = 1");
    let out = check::run(&db.wire(), true).unwrap();
    let failed: Vec<(u8, Vec<String>)> = out
        .iter()
        .filter(|o| !o.passed())
        .map(|o| (o.condition.number, o.keys.clone()))
        .collect();
    assert_eq!(
        failed,
        vec![
            (1, vec!["w_id=2".to_string()]),
            (4, vec!["w_id=1 d_id=4".to_string()]),
            (6, vec!["w_id=1 d_id=4 o_id=17".to_string()]),
            (9, vec!["w_id=2 d_id=3".to_string()]),
        ]
    );
    assert!(out[0].line().contains("FAIL") && out[0].line().contains("w_id=2"));
}
