//! The request distributions' skew against YCSB's formulas, over many sans-IO operations
//! (`insertorder=ordered`, so a key gives back its key number):
//! - zipfian: each of the most requested keys gets the share the scrambled Zipfian predicts —
//!   Gray et al.'s Zipf approximation over 10^10 items with ζ = 26.469 (θ = 0.99), items
//!   hashed onto the key space with FNV-64 (computed here independently), keys beyond the
//!   records redrawn;
//! - latest: the newest record gets 1/ζ(n − 1) of the reads, and after inserts the reads move
//!   to the inserted keys, never past the newest;
//! - hotspot: `hotspotopnfraction` of the operations on the first `hotspotdatafraction` keys;
//! - uniform: every tenth of the keys about a tenth of the operations.

mod ycsb_common;

use std::collections::HashMap;

use ycsb_common::{build, Client};

fn fnv(n: i64) -> i64 {
    let mut h: u128 = 0xcbf2_9ce4_8422_2325;
    for b in n.to_le_bytes() {
        h ^= u128::from(b);
        h = (h * 1_099_511_628_211) % (1u128 << 64);
    }
    (h as u64 as i64).wrapping_abs()
}

/// Key numbers of `ops` operations of `name` with `opts` (ordered keys).
fn key_numbers(name: &str, opts: &[&str], ops: usize) -> Vec<i64> {
    let mut all = vec!["insertorder=ordered"];
    all.extend_from_slice(opts);
    let native = build(name, &all);
    let mut c = Client::new(native.workload, 0, 1, 2024);
    (0..ops).map(|_| c.operation().key_number()).collect()
}

fn counts(keys: &[i64]) -> HashMap<i64, usize> {
    let mut m = HashMap::new();
    for k in keys {
        *m.entry(*k).or_insert(0) += 1;
    }
    m
}

/// `observed` of `n` draws is within 5 standard deviations (plus `slack` of the expectation)
/// of probability `p`.
fn assert_close(what: &str, observed: usize, n: usize, p: f64, slack: f64) {
    let want = n as f64 * p;
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    let tol = 5.0 * sd + slack * want;
    assert!(
        (observed as f64 - want).abs() <= tol,
        "{what}: {observed} of {n}, expected {want:.0} ± {tol:.0}"
    );
}

const THETA: f64 = 0.99;
const ZETAN: f64 = 26.46902820178302;

/// The probability YCSB's Zipfian generator (Gray et al.'s method) gives item `k` of `items`:
/// items 0 and 1 exactly `1/ζ` and `0.5^θ/ζ`, then the steps of its continuous inverse,
/// `F(k) = ((((k + 1) / items)^(1-θ)) − 1 + η) / η`.
fn gray_share(k: i64, items: f64, zetan: f64) -> f64 {
    let zeta2 = 1.0 + 0.5f64.powf(THETA);
    let eta = (1.0 - (2.0 / items).powf(1.0 - THETA)) / (1.0 - zeta2 / zetan);
    let cdf = |k: i64| -> f64 {
        match k {
            0 => 1.0 / zetan,
            1 => zeta2 / zetan,
            _ => {
                let f = (((k + 1) as f64 / items).powf(1.0 - THETA) - 1.0 + eta) / eta;
                f.clamp(zeta2 / zetan, 1.0)
            }
        }
    };
    if k == 0 {
        cdf(0)
    } else {
        cdf(k) - cdf(k - 1)
    }
}

#[test]
fn zipfian_top_keys_get_the_scrambled_zipf_share() {
    let n = 300_000;
    let records = 1000i64;
    // ycsb-c inserts nothing: the key space is records + 0 expected inserts + 1 (YCSB's max is
    // inclusive), and a draw of key 1000 (not loaded) is drawn again.
    let slots = records + 1;
    let items = 1e10 + 1.0;
    let mut predicted = vec![0.0f64; slots as usize];
    let exact_items = 2_000_000i64;
    let mut covered = 0.0;
    for i in 0..exact_items {
        let p = gray_share(i, items, ZETAN);
        predicted[(fnv(i) % slots) as usize] += p;
        covered += p;
    }
    for p in predicted.iter_mut() {
        *p += (1.0 - covered) / slots as f64;
    }
    let kept = 1.0 - predicted[records as usize];
    let keys = key_numbers("ycsb-c", &["recordcount=1000"], n);
    assert!(keys.iter().all(|k| (0..records).contains(k)));
    let got = counts(&keys);
    let mut ranked: Vec<usize> = (0..records as usize).collect();
    ranked.sort_by(|a, b| predicted[*b].total_cmp(&predicted[*a]));
    for &k in &ranked[..10] {
        let p = predicted[k] / kept;
        let observed = *got.get(&(k as i64)).unwrap_or(&0);
        assert_close(&format!("key {k}"), observed, n, p, 0.0);
    }
    // the hottest key is record fnv(0) % 1001, with at least 1/ζ of the requests, close to
    // what Zipf's law itself gives item 0 (ζ's share)
    let top = (fnv(0) % slots) as usize;
    assert_eq!(ranked[0], top);
    assert!(got[&(top as i64)] as f64 / n as f64 > 1.0 / ZETAN);
}

fn zeta(n: i64) -> f64 {
    (1..=n).map(|i| 1.0 / (i as f64).powf(THETA)).sum()
}

#[test]
fn latest_favours_the_newest_records() {
    let n = 200_000;
    // no inserts: the newest record is 999; YCSB's Zipfian there spans 999 items
    let keys = key_numbers(
        "ycsb-d",
        &["recordcount=1000", "insertproportion=0", "readproportion=1"],
        n,
    );
    let got = counts(&keys);
    let z = zeta(999);
    assert_close("newest record", got[&999], n, 1.0 / z, 0.0);
    assert_close("second newest", got[&998], n, 0.5f64.powf(THETA) / z, 0.0);
    let newest10: usize = (990..1000).map(|k| got.get(&k).copied().unwrap_or(0)).sum();
    let p10: f64 = (1..=10).map(|i| 1.0 / (i as f64).powf(THETA)).sum::<f64>() / z;
    assert_close("ten newest", newest10, n, p10, 0.05);
}

#[test]
fn latest_follows_the_inserts_and_never_reads_past_them() {
    let native = build("ycsb-d", &["recordcount=1000", "insertorder=ordered"]);
    let mut c = Client::new(native.workload, 0, 1, 5);
    let mut newest = 999;
    let (mut late_reads, mut late_new) = (0, 0);
    for i in 0..100_000 {
        let op = c.operation();
        let k = op.key_number();
        if c.tx_name(op.tx) == "INSERT" {
            assert_eq!(k, newest + 1, "inserts in key order");
            newest = k;
        } else {
            assert!(
                k <= newest,
                "read of key {k} beyond the newest insert {newest}"
            );
            if i >= 90_000 {
                late_reads += 1;
                late_new += usize::from(k >= 1000);
            }
        }
    }
    assert!(newest > 5000, "about 5% inserts: newest {newest}");
    let share = late_new as f64 / late_reads as f64;
    assert!(share > 0.8, "late reads on inserted keys: {share}");
}

#[test]
fn hotspot_sends_the_operation_fraction_to_the_data_fraction() {
    let n = 100_000;
    for (data, opn) in [(0.2, 0.8), (0.1, 0.95)] {
        let keys = key_numbers(
            "ycsb-c",
            &[
                "recordcount=1000",
                "requestdistribution=hotspot",
                &format!("hotspotdatafraction={data}"),
                &format!("hotspotopnfraction={opn}"),
            ],
            n,
        );
        let hot = keys.iter().filter(|k| **k < (1000.0 * data) as i64).count();
        assert_close(&format!("hot set {data}/{opn}"), hot, n, opn, 0.0);
        assert!(keys.iter().all(|k| (0..1000).contains(k)));
    }
}

#[test]
fn uniform_spreads_requests_evenly() {
    let n = 100_000;
    let keys = key_numbers("ycsb", &["recordcount=1000"], n);
    for tenth in 0..10 {
        let c = keys.iter().filter(|k| **k / 100 == tenth).count();
        assert_close(&format!("keys {}..", tenth * 100), c, n, 0.1, 0.0);
    }
}
