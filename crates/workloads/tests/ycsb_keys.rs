//! YCSB's key format: known key numbers give known keys (FNV-64 computed here independently,
//! byte by byte in 128-bit arithmetic, plus the key YCSB prints for record 0), zero padding,
//! ordered keys, and the insert key order: the load writes key numbers 0..recordcount and a
//! run's inserts continue from recordcount.

mod ycsb_common;

use pgrig_init::dataset::CopyFormat;
use ycsb_common::{build, Client};

/// FNV-1 64 over the 8 little-endian bytes of `n`, made non-negative as a signed value.
fn fnv(n: i64) -> i64 {
    let mut h: u128 = 0xcbf2_9ce4_8422_2325;
    for b in n.to_le_bytes() {
        h ^= u128::from(b);
        h = (h * 1_099_511_628_211) % (1u128 << 64);
    }
    let signed = h as u64 as i64;
    signed.wrapping_abs()
}

/// The key the loader writes for row `k` (text COPY's first column).
fn loaded_key(opts: &[&str], k: i64) -> String {
    let native = build("ycsb-c", opts);
    let mut buf = Vec::new();
    native.load.sources[0].push_row(&mut buf, k, CopyFormat::Text);
    let line = String::from_utf8(buf).unwrap();
    line.split('\t').next().unwrap().to_string()
}

#[test]
fn hashed_keys_are_user_and_the_fnv_hash_of_the_key_number() {
    assert_eq!(
        loaded_key(&[], 0),
        "user6284781860667377211",
        "the key YCSB loads first"
    );
    for k in [1, 2, 255, 256, 999, 123_456] {
        assert_eq!(
            loaded_key(&["recordcount=200000"], k),
            format!("user{}", fnv(k)),
            "record {k}"
        );
    }
}

#[test]
fn zero_padding_and_ordered_keys() {
    assert_eq!(loaded_key(&["insertorder=ordered"], 7), "user7");
    assert_eq!(
        loaded_key(&["insertorder=ordered", "zeropadding=6"], 42),
        "user000042"
    );
    assert_eq!(
        loaded_key(&["zeropadding=25"], 0),
        "user0000006284781860667377211",
        "hashed keys are padded too"
    );
}

#[test]
fn inserts_continue_after_the_loaded_records_in_key_order() {
    let native = build(
        "ycsb-d",
        &["recordcount=500", "readproportion=0", "insertproportion=1"],
    );
    let w = native.workload;
    let mut a = Client::new(w.clone(), 0, 2, 1);
    let mut b = Client::new(w, 1, 2, 1);
    let mut keys = Vec::new();
    for i in 0..10 {
        let op = if i % 2 == 0 {
            a.operation()
        } else {
            b.operation()
        };
        keys.push(op.key());
    }
    let want: Vec<String> = (500..510).map(|k| format!("user{}", fnv(k))).collect();
    assert_eq!(keys, want, "two clients share one insert sequence");
}
