//! TPC-C's client programs without a server: the card-deck mix (clause 5.2.4.2), the keying and
//! think times of terminal mode (clause 5.2.5), none in no-wait mode, the run-time NURand
//! constant, and the option errors.

use pgrig_engine::workload::{ClientSeed, Params, Step, TxProgram};
use pgrig_workloads::tpcc::client::{KEYING_S, THINK_S};
use pgrig_workloads::tpcc::sql::{BEGIN, NO_WAREHOUSE, TX_NAMES};
use pgrig_workloads::Options;

fn client(pairs: &[(&str, &str)], id: u32, clients: u32) -> Box<dyn TxProgram> {
    let mut o = Options::new();
    for (k, v) in pairs {
        o.set(k, *v);
    }
    let n = pgrig_workloads::build("tpcc", &o).unwrap();
    n.workload.client(ClientSeed {
        id,
        clients,
        seed: 42,
    })
}

#[test]
fn every_deck_of_23_holds_the_minimum_mix() {
    let mut c = client(&[], 0, 1);
    for _deck in 0..100 {
        let mut n = [0; 5];
        for _ in 0..23 {
            n[c.choose().unwrap()] += 1;
        }
        assert_eq!(n, [10, 10, 1, 1, 1]);
    }
    // and the order within decks differs
    let a: Vec<usize> = (0..23).map(|_| c.choose().unwrap()).collect();
    let b: Vec<usize> = (0..23).map(|_| c.choose().unwrap()).collect();
    assert_ne!(a, b);
}

#[test]
fn the_catalogue_weights_give_the_same_mix() {
    let n = pgrig_workloads::build("tpcc", &Options::new()).unwrap();
    let cat = n.workload.catalogue();
    let w: Vec<(&str, u32)> = cat
        .transactions
        .iter()
        .map(|t| (t.name.as_str(), t.weight))
        .collect();
    assert_eq!(
        w,
        TX_NAMES
            .iter()
            .copied()
            .zip([10, 10, 1, 1, 1])
            .collect::<Vec<_>>()
    );
    for s in &cat.statements {
        assert!(s.sql.is_ascii() && !s.sql.contains("  "), "{}", s.name);
    }
}

#[test]
fn terminals_wait_keying_then_capped_exponential_think_times() {
    let mut c = client(&[("mode", "terminals"), ("warehouses", "3")], 7, 30);
    // first transaction: keying time only
    assert_eq!(c.delay_us(0), (KEYING_S[0] * 1e6) as u64);
    let mut think_sum = 0.0;
    let n = 4000;
    for _ in 0..n {
        // after a New-Order, before a Payment: New-Order's think time + Payment's keying time
        let d = c.delay_us(1) as f64 / 1e6 - KEYING_S[1];
        assert!((0.0..=10.0 * THINK_S[0] + 1e-6).contains(&d), "{d}");
        think_sum += d;
        c.delay_us(0); // a Payment's think time, then New-Order's keying
    }
    let mean = think_sum / n as f64;
    assert!(
        (THINK_S[0] * 0.9..THINK_S[0] * 1.1).contains(&mean),
        "mean think {mean}"
    );
}

#[test]
fn no_wait_clients_do_not_wait_and_use_every_warehouse() {
    let mut seen = std::collections::BTreeSet::new();
    for id in 0..3 {
        let mut c = client(&[("warehouses", "7")], id, 3);
        assert_eq!(c.delay_us(0), 0);
        for _ in 0..200 {
            c.begin(0, false);
            let mut p = Params::new();
            assert_eq!(c.step(None, &mut p), Step::Run(BEGIN));
            p.clear();
            assert_eq!(c.step(None, &mut p), Step::Run(NO_WAREHOUSE));
            let w: i64 = std::str::from_utf8(p.get(0).unwrap().0.unwrap())
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(
                (w - 1) % 3,
                i64::from(id),
                "client {id} left its share: {w}"
            );
            seen.insert(w);
        }
    }
    assert_eq!(seen.len(), 7);
}

#[test]
fn a_retry_replays_the_same_inputs() {
    let mut c = client(&[("warehouses", "4")], 1, 2);
    let mut first = Params::new();
    c.begin(0, false);
    c.step(None, &mut first);
    first.clear();
    c.step(None, &mut first);
    let mut again = Params::new();
    c.begin(0, true);
    c.step(None, &mut again);
    again.clear();
    c.step(None, &mut again);
    assert_eq!(first.get(0), again.get(0));
}

#[test]
fn bad_options_name_the_option() {
    let mut o = Options::new();
    o.set("warehouse", "3");
    let e = pgrig_workloads::build("tpcc", &o).unwrap_err();
    assert!(
        e.message.contains("did you mean \"warehouses\""),
        "{}",
        e.message
    );
    let mut o = Options::new();
    o.set("mode", "fast");
    let e = pgrig_workloads::build("tpcc", &o).unwrap_err();
    assert!(
        e.message.contains("\"mode\"") && e.message.contains("terminals"),
        "{}",
        e.message
    );
    let mut o = Options::new();
    o.set("warehouses", "0");
    assert!(pgrig_workloads::build("tpcc", &o)
        .unwrap_err()
        .message
        .contains("\"warehouses\""));
}

/// The warehouse and district a client's transaction of type `tx` uses (the first two
/// parameters of its first statement after BEGIN).
fn first_params(c: &mut Box<dyn TxProgram>, tx: usize) -> (i64, i64) {
    c.begin(tx, false);
    let mut p = Params::new();
    c.step(None, &mut p);
    p.clear();
    c.step(None, &mut p);
    let int = |i: usize| -> i64 {
        std::str::from_utf8(p.get(i).unwrap().0.unwrap())
            .unwrap()
            .parse()
            .unwrap()
    };
    (int(0), if p.len() > 1 { int(1) } else { 0 })
}

#[test]
fn a_terminal_keeps_its_warehouse_and_its_stock_level_district() {
    use pgrig_workloads::tpcc::sql::{NEW_ORDER, STOCK_LEVEL};
    // terminal 23 of 40 on 4 warehouses: warehouse 3, district 4
    let mut c = client(&[("mode", "terminals"), ("warehouses", "4")], 23, 40);
    for _ in 0..50 {
        assert_eq!(first_params(&mut c, STOCK_LEVEL), (3, 4));
        assert_eq!(first_params(&mut c, NEW_ORDER).0, 3);
    }
    // in no-wait mode Stock-Level's district is drawn
    let mut c = client(&[("warehouses", "4")], 23, 40);
    let districts: std::collections::BTreeSet<i64> = (0..200)
        .map(|_| first_params(&mut c, STOCK_LEVEL).1)
        .collect();
    assert_eq!(districts.len(), 10);
}

#[test]
fn a_deferred_delivery_queues_then_runs_next_without_a_wait_of_its_own() {
    use pgrig_workloads::tpcc::sql::{DELIVERY, DELIVERY_DEFERRED, DL_NEW_ORDER};
    let mut c = client(&[("mode", "terminals"), ("deferred_delivery", "on")], 0, 10);
    let mut p = Params::new();
    let mut seen = 0;
    for _ in 0..23 * 4 {
        let tx = c.choose().unwrap();
        assert_ne!(tx, DELIVERY_DEFERRED, "never drawn from the deck");
        c.delay_us(tx);
        c.begin(tx, false);
        if tx != DELIVERY {
            continue;
        }
        // the terminal's Delivery queues: no statement
        p.clear();
        assert_eq!(c.step(None, &mut p), Step::Done);
        // the next transaction is the queued one: no keying or think time
        assert_eq!(c.choose(), Some(DELIVERY_DEFERRED));
        assert_eq!(c.delay_us(DELIVERY_DEFERRED), 0);
        c.begin(DELIVERY_DEFERRED, false);
        p.clear();
        assert_eq!(c.step(None, &mut p), Step::Run(BEGIN));
        p.clear();
        assert_eq!(c.step(None, &mut p), Step::Run(DL_NEW_ORDER));
        assert_eq!(p.get(0).unwrap().0, Some(&b"1"[..]), "the queued warehouse");
        // every district empty: skipped, then COMMIT
        let rows = pgrig_engine::workload::Rows::default();
        let empty = pgrig_engine::workload::Reply {
            count: 0,
            rows: &rows,
        };
        let mut steps = 0;
        loop {
            p.clear();
            match c.step(Some(&empty), &mut p) {
                Step::Run(_) => steps += 1,
                Step::Done => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(steps, 10, "nine more districts and COMMIT");
        seen += 1;
        // then the deck again, after the Delivery's think time (capped at 10 × 5 s)
        let next = c.choose().unwrap();
        assert_ne!(next, DELIVERY_DEFERRED);
        let think = c.delay_us(next) as f64 / 1e6 - KEYING_S[next];
        assert!(
            (0.0..=10.0 * THINK_S[DELIVERY] + 1e-6).contains(&think),
            "{think}"
        );
        break;
    }
    assert_eq!(seen, 1);
}
