//! Seeded random values, hashes and permutations checked against pgbench 15.18 run with
//! `--random-seed=5432 -t 1`, each script's `\set` lines evaluated in order by client 0.

mod eval_common;
use eval_common::*;
use pgrig_script::ast::Func::*;

#[test]
fn tap_vectors_for_seed_5432() {
    // pgbench's TAP test: the four random functions, in this order, in one script.
    let mut env = Env::new(5432);
    let script = [
        f2(Random, i(10), i(19)),
        f3(RandomExponential, i(100), i(199), d(10.0)),
        f3(RandomGaussian, i(1000), i(1999), d(10.0)),
        f3(RandomZipfian, i(1), i(9), d(1.3)),
    ];
    let got: Vec<String> = script.iter().map(|e| env.show(e)).collect();
    assert_eq!(got, ["int 17", "int 104", "int 1498", "int 3"]);
}

#[test]
fn long_random_sequence_matches_pgbench() {
    let mut env = Env::new(5432);
    let ds = env.var("default_seed");
    let script = vec![
        f2(Random, i(10), i(19)),
        f3(RandomExponential, i(100), i(199), d(10.0)),
        f3(RandomGaussian, i(1000), i(1999), d(10.0)),
        f3(RandomZipfian, i(1), i(9), d(1.3)),
        f2(Random, i(1), i(1000000)),
        f2(Random, i(1), i(1000000)),
        f2(Random, i(-4611686018427387904), i(4611686018427387902)),
        f2(Random, i(0), i(1)),
        f2(Random, i(5), i(5)),
        f3(RandomExponential, i(1), i(1000), d(2.5)),
        f3(RandomExponential, i(1), i(1000), d(0.001)),
        f3(RandomExponential, i(-100), i(100), i(50)),
        f3(RandomGaussian, i(1), i(1000), d(2.0)),
        f3(RandomGaussian, i(1), i(1000), d(2.0)),
        f3(RandomGaussian, i(-5), i(5), i(100)),
        f3(RandomZipfian, i(1), i(1000), d(1.001)),
        f3(RandomZipfian, i(1), i(1000000), d(2.5)),
        f3(RandomZipfian, i(1), i(1000000), i(1000)),
        f3(RandomZipfian, i(1), i(10), d(1.5)),
        f3(RandomZipfian, i(7), i(7), d(1.5)),
        f2(Random, i(1), mul(i(100000), i(10))),
        f2(Random, d(1.4), d(2.6)),
        f3(Permute, i(0), i(10), i(5432)),
        f3(Permute, i(3), i(10), ds.clone()),
        f3(Permute, neg(i(1)), i(100), i(42)),
        f3(Permute, i(12345), i(1000000), neg(i(7))),
        f3(Permute, i(1), i(2), i(0)),
        f3(Permute, i(2), i(3), i(1)),
        f2(HashMurmur2, i(10), ds.clone()),
        f2(HashFnv1a, i(10), ds.clone()),
        f2(HashMurmur2, neg(i(1)), i(0)),
        f2(HashFnv1a, i(i64::MIN), i(9223372036854775807)),
        f2(Random, i(1), i(10)),
    ];
    let expected = "int 17;int 104;int 1498;int 3;int 723013;int 897498;int -1338268157808527263;\
        int 1;int 5;int 270;int 3;int -98;int 884;int 903;int 0;int 142;int 1;int 1;int 7;int 7;\
        int 337493;int 1;int 6;int 4;int 19;int 763700;int 1;int 1;int 4313776982099445391;\
        int 1738298496642736203;int 4219408603045787357;int -5170764845666576998;int 1";
    let got: Vec<String> = script.iter().map(|e| env.show(e)).collect();
    assert_eq!(got.join(";"), expected);
}

#[test]
fn default_and_random_seed_variables() {
    let mut env = Env::new(5432);
    let ds = env.var("default_seed");
    let rs = env.var("random_seed");
    assert_eq!(env.show(&ds), "int 7590783070443337668");
    assert_eq!(env.show(&rs), "int 5432");
}

#[test]
fn hash_vectors_with_seed_5432() {
    let mut env = Env::new(5432);
    assert_eq!(
        env.show(&f2(HashMurmur2, i(10), i(5432))),
        "int -5817877081768721676"
    );
    assert_eq!(
        env.show(&f2(HashFnv1a, i(10), i(5432))),
        "int -7793829335365542153"
    );
    let ds = env.var("default_seed");
    // hash(1) with the default seed of --random-seed=5432
    assert_eq!(
        env.show(&f2(HashMurmur2, i(1), ds)),
        "int 475785293302047801"
    );
}

#[test]
fn permute_portability_vectors() {
    // size = 9223372036854775807 - 10; permute(size - k, size, 5432) for k = 1..7, and k = size.
    let size = 9223372036854775807i64 - 10;
    let expected: [i64; 7] = [
        520382784483822430,
        1143715004660802862,
        447293596416496998,
        916527772266572956,
        2763809008686028849,
        8648551549198294572,
        4542876852200565125,
    ];
    let mut env = Env::new(5432);
    for (k, want) in (1..=7).zip(expected) {
        let e = f3(Permute, i(size - k), i(size), i(5432));
        assert_eq!(env.show(&e), format!("int {want}"), "k = {k}");
    }
    assert_eq!(
        env.show(&f3(Permute, i(0), i(size), i(5432))),
        "int 4188477231619507829"
    );
}

#[test]
fn permute_is_a_bijection_for_small_sizes() {
    for size in 1..=70i64 {
        let mut seen = vec![false; size as usize];
        for v in 0..size {
            let p = pgrig_script::random::permute(v, size, 99);
            assert!((0..size).contains(&p));
            assert!(!seen[p as usize], "size {size}: {p} twice");
            seen[p as usize] = true;
        }
    }
}

#[test]
fn script_choice_matches_pgbench() {
    // pgbench -t 20 --random-seed=5432 -f a@3 -f b@5 -f c@1 (one client, one thread)
    let st = pgrig_script::seeding::seed_states(5432, 1, 1);
    let mut rng = st.threads[0].choose;
    let weights = [3, 5, 1];
    let got: Vec<usize> = (0..20)
        .map(|_| pgrig_script::random::choose_script(&mut rng, &weights, 9))
        .collect();
    assert_eq!(
        got,
        [1, 0, 2, 1, 0, 0, 1, 1, 2, 1, 2, 2, 0, 0, 0, 1, 0, 0, 0, 1]
    );
}

#[test]
fn single_script_draws_nothing() {
    let mut rng = pgrig_script::Prng::seed(1);
    let before = rng;
    assert_eq!(pgrig_script::random::choose_script(&mut rng, &[7], 7), 0);
    assert_eq!(rng, before);
}

#[test]
fn each_client_has_its_own_stream() {
    // pgbench -t 2 -c 3 -j 2 --random-seed=77, `random(1, 1000000)` twice per client
    let st = pgrig_script::seeding::seed_states(77, 3, 2);
    let expected = [[906572, 448490], [677493, 137391], [269120, 44726]];
    for (c, want) in expected.iter().enumerate() {
        let mut rng = st.clients[c];
        let mut got = [0i64; 2];
        for g in &mut got {
            *g = pgrig_script::random::uniform(&mut rng, 1, 1000000);
        }
        let mut got_sorted = got;
        got_sorted.sort();
        let mut want_sorted = *want;
        want_sorted.sort();
        assert_eq!(got_sorted, want_sorted, "client {c}");
    }
}
