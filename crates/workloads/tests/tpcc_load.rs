//! TPC-C's initial population on a real server (1 warehouse): row counts, the value rules of
//! clause 4.3.3.1 (syllable last names, NURand skew, ~10 % "ORIGINAL" and bad credit, the
//! initial orders), the consistency conditions as loaded, and range partitions.

mod tpcc_common;

use tpcc_common::Db;

use pgrig_workloads::tpcc::check;
use pgrig_workloads::tpcc::rand::last_name;

#[test]
fn loaded_tables_have_the_specified_row_counts() {
    let db = Db::loaded(1);
    let counts = db.psql(
        "select (select count(*) from warehouse), (select count(*) from district), (select count(*) from customer), \
         (select count(*) from history), (select count(*) from orders), (select count(*) from new_order), \
         (select count(*) from item), (select count(*) from stock)",
    );
    assert_eq!(counts.trim(), "1|10|30000|30000|30000|9000|100000|100000");
    let lines = db.int("select count(*) from order_line");
    assert_eq!(lines, db.int("select sum(o_ol_cnt) from orders"));
    assert!((270_000..330_000).contains(&lines), "{lines} order lines");
    assert_eq!(
        db.psql("select min(o_ol_cnt), max(o_ol_cnt) from orders")
            .trim(),
        "5|15"
    );
    assert_eq!(
        db.psql("select distinct w_ytd, d_ytd, d_next_o_id from warehouse, district")
            .trim(),
        "300000.00|30000.00|3001"
    );
    assert_eq!(
        db.psql("select distinct c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_credit_lim, c_middle from customer").trim(),
        "-10.00|10.00|1|0|50000.00|OE"
    );
}

#[test]
fn the_first_thousand_customers_carry_the_syllable_names_in_order() {
    let db = Db::loaded(1);
    let out = db.psql("select c_id, c_last from customer where c_w_id = 1 and c_d_id = 7 and c_id <= 1000 order by c_id");
    let mut n = 0;
    for line in out.lines() {
        let (id, last) = line.split_once('|').unwrap();
        let id: i64 = id.parse().unwrap();
        let mut want = Vec::new();
        last_name(id - 1, &mut want);
        assert_eq!(last.as_bytes(), want, "customer {id}");
        n += 1;
    }
    assert_eq!(n, 1000);
}

#[test]
fn the_other_customers_names_are_nurand_skewed_syllables() {
    let db = Db::loaded(1);
    // every name is one of the 1000 syllable names
    let unknown = db.int(
        "select count(*) from customer where c_id > 1000 and c_last not in \
         (select c_last from customer where c_w_id = 1 and c_d_id = 1 and c_id <= 1000)",
    );
    assert_eq!(unknown, 0);
    // 20000 names over 1000 values: uniform would give 20 each; NURand(255) concentrates them
    let top = db.int(
        "select max(n) from (select count(*) n from customer where c_id > 1000 group by c_last) x",
    );
    let distinct = db.int("select count(distinct c_last) from customer where c_id > 1000");
    assert!(top >= 60, "most frequent last name only {top} times");
    assert!(distinct < 1000, "{distinct} distinct names: no skew");
}

#[test]
fn about_ten_percent_of_items_and_stock_are_original_and_customers_bad_credit() {
    let db = Db::loaded(1);
    for (what, sql) in [
        (
            "item",
            "select count(*) from item where i_data like '%ORIGINAL%'",
        ),
        (
            "stock",
            "select count(*) from stock where s_data like '%ORIGINAL%'",
        ),
    ] {
        let n = db.int(sql);
        assert!(
            (9_000..11_000).contains(&n),
            "{what}: {n} of 100000 ORIGINAL"
        );
    }
    let bc = db.int("select count(*) from customer where c_credit = 'BC'");
    assert!((2_600..3_400).contains(&bc), "{bc} of 30000 bad credit");
    assert_eq!(
        db.psql("select min(length(i_data)), max(length(i_data)) from item")
            .trim(),
        "26|50"
    );
    let c = db.psql("select min(length(c_data)) >= 300, max(length(c_data)) <= 500 from customer");
    assert_eq!(c.trim(), "t|t");
}

#[test]
fn initial_orders_are_a_permutation_of_customers_with_the_last_900_undelivered() {
    let db = Db::loaded(1);
    assert_eq!(
        db.int("select count(*) from (select o_d_id from orders group by o_d_id having count(distinct o_c_id) = 3000) x"),
        10
    );
    assert_eq!(
        db.int("select count(*) from orders where (o_carrier_id is null) <> (o_id >= 2101)"),
        0
    );
    assert_eq!(
        db.psql("select min(no_o_id), max(no_o_id) from new_order")
            .trim(),
        "2101|3000"
    );
    assert_eq!(
        db.int("select count(*) from order_line where (ol_delivery_d is null) <> (ol_o_id >= 2101) or (ol_amount = 0) <> (ol_o_id < 2101)"),
        0
    );
}

#[test]
fn all_twelve_consistency_conditions_hold_as_loaded() {
    let db = Db::loaded(1);
    let out = check::run(&db.wire(), true).unwrap();
    assert_eq!(out.len(), 12);
    for o in &out {
        assert!(o.passed(), "{}", o.line());
    }
}

#[test]
fn partitioned_tables_hold_their_warehouse_ranges() {
    let db = pgrig_testkit::fresh_db("tpcc_partitioned");
    let report = tpcc_common::load_into(&db, &[("warehouses", "2"), ("partitions", "2")], 2);
    assert!(report.rows > 1_000_000, "{report:?}");
    let out = db.psql(
        "select (select count(*) from stock_1), (select count(*) from stock_2), \
         (select min(c_w_id) from customer_2), (select count(*) from pg_inherits where inhparent = 'order_line'::regclass)",
    );
    assert_eq!(out.trim(), "100000|100000|2|2");
    // the transactions run on the partitioned tables and keep the conditions
    let native = tpcc_common::native(&[("warehouses", "2"), ("partitions", "2")]);
    let wire = pgrig_wire::Config::from_args(&tpcc_common::conn_args(db.conninfo()), "t").unwrap();
    let mut d = tpcc_common::Driver::new(&wire);
    let seed = pgrig_engine::workload::ClientSeed {
        id: 0,
        clients: 1,
        seed: 1,
    };
    let mut c = native.workload.client(seed);
    for _ in 0..46 {
        let tx = c.choose().unwrap();
        c.begin(tx, false);
        let end = d.run(|r, p| c.step(r, p)).unwrap();
        assert!(
            matches!(
                end,
                pgrig_engine::workload::Step::Done | pgrig_engine::workload::Step::RolledBack
            ),
            "{end:?}"
        );
    }
    for o in check::run(&wire, false).unwrap() {
        assert!(o.passed(), "{}", o.line());
    }
}

/// A run of `tpcc` (1 client, one deck) on `db`; the run's error text when it is refused.
fn run_with(db: &Db, tpcc: &std::sync::Arc<pgrig_workloads::tpcc::Tpcc>) -> Result<(), String> {
    use pgrig_engine::config::{BenchConfig, Duration};
    let cfg = BenchConfig {
        conn: tpcc_common::conn_args(db.conninfo()),
        clients: 1,
        duration: Duration::Transactions(23),
        native: Some(pgrig_engine::workload::NativeWorkload(tpcc.clone())),
        ..Default::default()
    };
    let sink = std::sync::Arc::new(tpcc_common::PrintSink);
    pgrig_engine::run_bench(cfg, sink, &pgrig_engine::StopHandle::default())
        .map(|r| assert_eq!(r.aborted_clients, 0))
        .map_err(|e| e.to_string())
}

#[test]
fn the_load_records_its_constants_and_a_run_takes_the_load_time_ones_from_it() {
    use pgrig_workloads::tpcc::rand::{valid_run_c_last, NurandC};
    use pgrig_workloads::tpcc::{Config, Tpcc, DEFAULT_LOAD_SEED};
    let db = Db::loaded(1);
    let row = |c: NurandC| format!("{}|{}|{}", c.c_last, c.c_id, c.ol_i_id);
    let stored = db.psql("select load_seed, c_last, c_id, ol_i_id from tpcc_dataset");
    assert_eq!(
        stored.trim(),
        format!(
            "{DEFAULT_LOAD_SEED}|{}",
            row(NurandC::load(DEFAULT_LOAD_SEED))
        )
    );
    let tpcc = |pairs: &[(&str, &str)]| {
        let mut o = pgrig_workloads::Options::new();
        for (k, v) in pairs {
            o.set(k, *v);
        }
        std::sync::Arc::new(Tpcc::new(Config::from_options(&o).unwrap()))
    };
    // a dataset loaded with --load-seed 7: a run without the option takes its constants
    let seven = NurandC::load(7);
    db.psql(&format!(
        "update tpcc_dataset set load_seed = 7, c_last = {}, c_id = {}, ol_i_id = {}",
        seven.c_last, seven.c_id, seven.ol_i_id
    ));
    let t = tpcc(&[]);
    run_with(&db, &t).expect("the run goes");
    assert_eq!(t.load_constants(), seven);
    assert_ne!(seven.c_last, NurandC::load(DEFAULT_LOAD_SEED).c_last);
    for seed in 0..100 {
        let run = NurandC::run(t.load_constants(), seed);
        assert!(valid_run_c_last(seven.c_last, run.c_last));
    }
    // ... and one given another seed is refused, naming the option
    let err = run_with(&db, &tpcc(&[("load_seed", "8")])).expect_err("refused");
    assert!(
        err.contains("invalid value \"8\" for option \"load_seed\": the dataset was loaded with --load-seed 7"),
        "{err}"
    );
    run_with(&db, &tpcc(&[("load_seed", "7")])).expect("the same seed goes");
    // a dataset from before the table: the option's constants
    db.psql("drop table tpcc_dataset");
    let t = tpcc(&[("load_seed", "8")]);
    run_with(&db, &t).expect("the run goes");
    assert_eq!(t.load_constants(), NurandC::load(8));
}
