//! TPC-C with `procedures=on` on a real server (2 warehouses): the server-side functions
//! change exactly what the client-side SQL changes for the same inputs (a differential run of
//! the whole mix on two copies of the dataset), Payment by last name picks the same middle
//! customer, the unused item ends in a ROLLBACK that leaves nothing behind, and a run through
//! the engine in every query mode (the functions created by the preflight) keeps every
//! consistency condition.

mod tpcc_common;

use pgrig_engine::config::Duration;
use pgrig_engine::document::RunDocument;
use pgrig_engine::workload::{ClientSeed, Step};
use pgrig_script::QueryMode;
use pgrig_workloads::tpcc::input::Draw;
use pgrig_workloads::tpcc::new_order::NewOrder;
use pgrig_workloads::tpcc::payment::Payment;
use pgrig_workloads::tpcc::rand::{NurandC, Rng};
use pgrig_workloads::tpcc::{check, procs, sql};
use tpcc_common::{native, Db};

/// A copy of the 2-warehouse dataset with the functions created.
fn with_functions() -> Db {
    let db = Db::loaded(2);
    for f in procs::create() {
        db.psql(&f);
    }
    db
}

fn draw(rng: &mut Rng, w: i64) -> Draw<'_> {
    Draw {
        rng,
        c: NurandC::run(NurandC::load(15_011_992), 7),
        warehouses: 2,
        w,
        home_d: None,
    }
}

/// What the transactions may change, without the timestamps they set: one md5 per table,
/// over the rows that differ from the initial population's values.
const FINGERPRINT: &str = "select concat_ws(' ', \
  (select md5(string_agg(t::text, ',' order by t::text)) from (select w_id, w_ytd from warehouse) t), \
  (select md5(string_agg(t::text, ',' order by t::text)) from (select d_w_id, d_id, d_ytd, d_next_o_id from district) t), \
  (select md5(string_agg(t::text, ',' order by t::text)) from customer t where c_payment_cnt <> 1 or c_delivery_cnt <> 0), \
  (select md5(string_agg(t::text, ',' order by t::text)) from (select h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount, h_data from history) t), \
  (select md5(string_agg(t::text, ',' order by t::text)) from (select o_id, o_d_id, o_w_id, o_c_id, o_carrier_id, o_ol_cnt, o_all_local from orders where o_id > 2100) t), \
  (select md5(string_agg(t::text, ',' order by t::text)) from new_order t), \
  (select md5(string_agg(t::text, ',' order by t::text)) from (select ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d is null, ol_quantity, ol_amount, ol_dist_info from order_line where ol_o_id > 2100) t), \
  (select md5(string_agg(t::text, ',' order by t::text)) from stock t where s_order_cnt <> 0 or s_ytd <> 0))";

/// Runs `n` transactions of one client (seed 99) on `db`, statement by statement; returns
/// how many ended committed and rolled back.
fn run_client(db: &Db, procedures: &str, n: usize) -> (u32, u32) {
    let w = native(&[("warehouses", "2"), ("procedures", procedures)]);
    let mut d = db.driver();
    let mut client = w.workload.client(ClientSeed {
        id: 0,
        clients: 1,
        seed: 99,
    });
    let (mut done, mut rolled_back) = (0, 0);
    for _ in 0..n {
        let tx = client.choose().unwrap();
        client.begin(tx, false);
        match d.run(|r, p| client.step(r, p)).unwrap() {
            Step::Done => done += 1,
            Step::RolledBack => rolled_back += 1,
            other => panic!("procedures={procedures}: {other:?}"),
        }
    }
    let expect_proc = procedures == "on";
    assert_eq!(
        d.executed.contains(&sql::PROC_PAYMENT),
        expect_proc,
        "procedures={procedures} runs the functions exactly when on"
    );
    (done, rolled_back)
}

#[test]
fn functions_change_exactly_what_client_side_sql_changes() {
    let client_side = Db::loaded(2);
    let server_side = with_functions();
    assert_eq!(client_side.psql(FINGERPRINT), server_side.psql(FINGERPRINT));
    // 20 decks: 200 New-Orders, 200 Payments, 20 of each other type, the same inputs
    let a = run_client(&client_side, "off", 460);
    let b = run_client(&server_side, "on", 460);
    assert_eq!(a, b);
    assert!(
        server_side.int("select count(*) from history") > 60_000 + 150,
        "payments ran"
    );
    assert!(
        server_side.int("select count(*) from new_order") < 18_000 + 200 - 20 * 10 + 10,
        "deliveries ran"
    );
    assert_eq!(
        client_side.psql(FINGERPRINT),
        server_side.psql(FINGERPRINT),
        "the same rows changed the same way"
    );
    for o in check::run(&server_side.wire(), false).unwrap() {
        assert!(o.passed(), "{}", o.line());
    }
}

#[test]
fn payment_by_last_name_pays_the_same_middle_customer_both_ways() {
    let client_side = Db::loaded(2);
    let server_side = with_functions();
    // the helper's pick is the client's: position n/2 rounded up among those sorted by C_FIRST
    let name = server_side.psql(
        "select c_last from customer where c_w_id = 1 and c_d_id = 3 group by c_last \
         order by count(*) desc, c_last limit 1",
    );
    let name = name.trim();
    let n = server_side.int(&format!(
        "select count(*) from customer where c_w_id = 1 and c_d_id = 3 and c_last = '{name}'"
    ));
    assert!(n >= 3, "{n} customers named {name}");
    let pick = format!(
        "select c_id from (select c_id, row_number() over (order by c_first) k, count(*) over () n \
         from customer where c_w_id = 1 and c_d_id = 3 and c_last = '{name}') x where k = (n + 1) / 2"
    );
    assert_eq!(
        server_side.int(&format!("select tpcc_customer_by_name(1, 3, '{name}')")),
        server_side.int(&pick)
    );
    let (mut a, mut b) = (client_side.driver(), server_side.driver());
    let (mut ra, mut rb) = (Rng::new(21), Rng::new(21));
    let (mut pa, mut pb) = (Payment::default(), Payment::default());
    let mut payers = Vec::new();
    for i in 0..30 {
        pa.generate(&mut draw(&mut ra, 1 + i % 2));
        pb.generate(&mut draw(&mut rb, 1 + i % 2));
        pa.restart();
        pb.restart();
        assert_eq!(
            a.run(|r, p| pa.step(r, p).unwrap_or_else(Step::Abort)),
            Ok(Step::Done)
        );
        assert_eq!(
            b.run(|r, p| pb.step_proc(r, p).unwrap_or_else(Step::Abort)),
            Ok(Step::Done)
        );
        assert_eq!(pa.customer_id(), pb.customer_id(), "payment {i}");
        payers.push(pb.customer_id());
    }
    assert!(a.executed.contains(&sql::PAY_BY_NAME), "some by last name");
    assert_eq!(b.executed, vec![sql::PROC_PAYMENT; 30]);
    let by_name = "select string_agg(h_c_id || ':' || h_data, ',' order by h_c_id, h_data) from history where h_amount <> 10";
    assert_eq!(client_side.psql(by_name), server_side.psql(by_name));
}

#[test]
fn an_unused_item_rolls_the_function_back_and_leaves_nothing() {
    let db = with_functions();
    let mut d = db.driver();
    let mut rng = Rng::new(5);
    let mut no = NewOrder::default();
    loop {
        no.generate(&mut draw(&mut rng, 2));
        if no.rollback {
            break;
        }
    }
    no.restart();
    let sums = "select (select sum(d_next_o_id) from district), (select count(*) from orders), \
                (select count(*) from new_order), (select count(*) from order_line), (select sum(s_ytd) from stock)";
    let before = db.psql(sums);
    assert_eq!(
        d.run(|r, p| no.step_proc(r, p).unwrap_or_else(Step::Abort)),
        Ok(Step::RolledBack)
    );
    assert_eq!(
        d.executed,
        vec![sql::BEGIN, sql::PROC_NEW_ORDER, sql::ROLLBACK]
    );
    assert_eq!(db.psql(sums), before);
    // and a New-Order without the unused item commits its order
    loop {
        no.generate(&mut draw(&mut rng, 2));
        if !no.rollback {
            break;
        }
    }
    no.restart();
    assert_eq!(
        d.run(|r, p| no.step_proc(r, p).unwrap_or_else(Step::Abort)),
        Ok(Step::Done)
    );
    assert_eq!(d.executed.last(), Some(&sql::COMMIT));
    assert_eq!(db.int("select count(*) from orders") - 60_000, 1);
}

fn run(db: &Db, pairs: &[(&str, &str)], clients: u32, mode: QueryMode) -> RunDocument {
    // 5 decks of 23 cards per client
    tpcc_common::run(db, pairs, clients, Duration::Transactions(115), mode)
}

#[test]
fn a_run_with_procedures_in_every_query_mode_keeps_the_conditions_and_the_mix() {
    // no functions yet: the run's preflight creates them
    let db = Db::loaded(2);
    let mut rollbacks = 0;
    for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
        let doc = run(&db, &[("warehouses", "2"), ("procedures", "on")], 4, mode);
        assert_eq!(doc.aborted_clients, 0, "{mode:?}");
        assert_eq!(doc.transactions.failed, 0, "{mode:?}");
        assert_eq!(doc.transactions.ok, 460, "{mode:?}");
        rollbacks += doc.transactions.rollbacks;
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
    }
    let entered = db.int("select sum(d_next_o_id) from district") - 20 * 3001;
    assert_eq!(
        db.int("select count(*) from orders") - 60_000,
        entered,
        "every order entered is there"
    );
    assert_eq!(
        600 - entered,
        rollbacks as i64,
        "the document counts the rollbacks"
    );
    assert_eq!(
        db.int("select count(*) from pg_proc where proname like 'tpcc\\_%'"),
        6
    );
}
