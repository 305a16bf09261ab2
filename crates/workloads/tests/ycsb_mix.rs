//! The operation mix of each YCSB workload, over many sans-IO operations: every operation's
//! share within a few standard deviations of the workload file's proportion, the transaction
//! types named as YCSB names its measurements, and each operation running YCSB's statements
//! with the right parameters (field counts and lengths, scan lengths).

mod ycsb_common;

use std::collections::HashMap;

use ycsb_common::{build, Client};

const OPS: usize = 100_000;

fn mix(name: &str, opts: &[&str]) -> (HashMap<String, usize>, Client) {
    let native = build(name, opts);
    let mut c = Client::new(native.workload, 0, 1, 42);
    let mut counts = HashMap::new();
    for _ in 0..OPS {
        let op = c.operation();
        *counts.entry(c.tx_name(op.tx)).or_insert(0) += 1;
    }
    (counts, c)
}

fn assert_share(name: &str, counts: &HashMap<String, usize>, op: &str, p: f64) {
    let n = *counts.get(op).unwrap_or(&0) as f64;
    let sd = (OPS as f64 * p * (1.0 - p)).sqrt().max(1.0);
    let want = OPS as f64 * p;
    assert!(
        (n - want).abs() <= 5.0 * sd,
        "{name}: {op} ran {n} times of {OPS}, expected {want} ± {:.0}",
        5.0 * sd
    );
}

#[test]
fn each_workload_runs_its_files_operation_mix() {
    let table: [(&str, &[(&str, f64)]); 6] = [
        ("ycsb-a", &[("READ", 0.5), ("UPDATE", 0.5)]),
        ("ycsb-b", &[("READ", 0.95), ("UPDATE", 0.05)]),
        ("ycsb-c", &[("READ", 1.0)]),
        ("ycsb-d", &[("READ", 0.95), ("INSERT", 0.05)]),
        ("ycsb-e", &[("INSERT", 0.05), ("SCAN", 0.95)]),
        ("ycsb-f", &[("READ", 0.5), ("READ-MODIFY-WRITE", 0.5)]),
    ];
    for (name, shares) in table {
        let (counts, c) = mix(name, &[]);
        let types: Vec<String> = c
            .workload
            .catalogue()
            .transactions
            .iter()
            .map(|t| t.name.clone())
            .collect();
        let want: Vec<&str> = shares.iter().map(|s| s.0).collect();
        assert_eq!(types, want, "{name}: transaction types");
        for (op, p) in shares {
            assert_share(name, &counts, op, *p);
        }
    }
}

#[test]
fn proportions_given_as_options_override_the_workloads() {
    let opts = [
        "readproportion=0.1",
        "updateproportion=0.2",
        "insertproportion=0.3",
        "scanproportion=0.15",
        "readmodifywriteproportion=0.25",
    ];
    let (counts, _) = mix("ycsb-a", &opts);
    for (op, p) in [
        ("READ", 0.1),
        ("UPDATE", 0.2),
        ("INSERT", 0.3),
        ("SCAN", 0.15),
        ("READ-MODIFY-WRITE", 0.25),
    ] {
        assert_share("ycsb-a with options", &counts, op, p);
    }
}

#[test]
fn operations_send_ycsbs_statements_and_values() {
    let native = build(
        "ycsb-a",
        &[
            "readproportion=0.2",
            "updateproportion=0.2",
            "insertproportion=0.2",
            "scanproportion=0.2",
            "readmodifywriteproportion=0.2",
        ],
    );
    let cat = native.workload.catalogue().clone();
    let mut c = Client::new(native.workload, 0, 1, 7);
    let mut scan_lengths = Vec::new();
    for _ in 0..5_000 {
        let op = c.operation();
        let name = c.tx_name(op.tx);
        let sql: Vec<&str> = op
            .ran
            .iter()
            .map(|r| cat.statements[r.stmt as usize].sql.as_str())
            .collect();
        match name.as_str() {
            "READ" => assert_eq!(sql, ["SELECT * FROM usertable WHERE YCSB_KEY = $1"]),
            "UPDATE" => {
                // writeallfields=false: one random field, 100 characters
                assert!(
                    sql[0].starts_with("UPDATE usertable SET FIELD")
                        && sql[0].ends_with(" = $1 WHERE YCSB_KEY = $2"),
                    "{}",
                    sql[0]
                );
                assert_eq!(op.ran[0].params[0].as_ref().unwrap().len(), 100);
            }
            "INSERT" => {
                assert_eq!(op.ran[0].params.len(), 11);
                assert!(op.ran[0].params[1..]
                    .iter()
                    .all(|v| v.as_ref().unwrap().len() == 100));
            }
            "SCAN" => {
                assert_eq!(
                    sql,
                    ["SELECT * FROM usertable WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2"]
                );
                let len: i64 = std::str::from_utf8(op.ran[0].params[1].as_ref().unwrap())
                    .unwrap()
                    .parse()
                    .unwrap();
                scan_lengths.push(len);
            }
            "READ-MODIFY-WRITE" => {
                assert_eq!(op.ran.len(), 2, "a read, then an update");
                assert_eq!(sql[0], "SELECT * FROM usertable WHERE YCSB_KEY = $1");
                assert!(sql[1].starts_with("UPDATE usertable SET FIELD"));
                assert_eq!(op.ran[0].params[0], op.ran[1].params[1], "the same key");
            }
            other => panic!("unexpected operation {other}"),
        }
    }
    // CoreWorkload's maxscanlength default: uniform 1..=1000
    assert!(scan_lengths.iter().all(|l| (1..=1000).contains(l)));
    assert!(*scan_lengths.iter().max().unwrap() > 900 && *scan_lengths.iter().min().unwrap() < 100);
}

#[test]
fn workload_e_scans_up_to_100_records_and_options_change_fields() {
    let native = build(
        "ycsb-e",
        &[
            "fieldcount=3",
            "fieldlength=7",
            "writeallfields=true",
            "readallfields=false",
        ],
    );
    let cat = native.workload.catalogue().clone();
    let mut c = Client::new(native.workload, 0, 1, 9);
    for _ in 0..3_000 {
        let op = c.operation();
        let r = &op.ran[0];
        let sql = &cat.statements[r.stmt as usize].sql;
        if c.tx_name(op.tx) == "SCAN" {
            let len: i64 = std::str::from_utf8(r.params[1].as_ref().unwrap())
                .unwrap()
                .parse()
                .unwrap();
            assert!(
                (1..=100).contains(&len),
                "workloade: maxscanlength=100, got {len}"
            );
            assert!(
                sql.starts_with("SELECT FIELD") && !sql.starts_with("SELECT *"),
                "readallfields=false: {sql}"
            );
        } else {
            assert_eq!(r.params.len(), 4, "key + 3 fields");
            assert!(r.params[1..].iter().all(|v| v.as_ref().unwrap().len() == 7));
        }
    }
}

#[test]
fn bad_options_are_errors_naming_the_option() {
    let cases: [(&str, &str, &str); 7] = [
        ("requestdistribution", "zipf", "\"requestdistribution\""),
        ("readproportion", "-1", "\"readproportion\""),
        ("recordcount", "0", "\"recordcount\""),
        ("table", "user table", "\"table\""),
        ("zipfianconstant", "1.5", "\"zipfianconstant\""),
        ("insertorder", "random", "\"insertorder\""),
        ("recordcont", "5", "did you mean \"recordcount\""),
    ];
    for (k, v, want) in cases {
        let mut o = pgrig_workloads::Options::new();
        o.set(k, v);
        let e = pgrig_workloads::build("ycsb-a", &o).unwrap_err();
        assert!(e.message.contains(want), "{k}={v}: {}", e.message);
    }
    let mut o = pgrig_workloads::Options::new();
    o.set("readproportion", "0").set("updateproportion", "0");
    let e = pgrig_workloads::build("ycsb-a", &o).unwrap_err();
    assert!(
        e.message.contains("every operation proportion"),
        "{}",
        e.message
    );
    let e = pgrig_workloads::build("ycsb_a", &pgrig_workloads::Options::new()).unwrap_err();
    assert!(
        e.message.contains("ycsb-a"),
        "the error lists the names: {}",
        e.message
    );
}

#[test]
fn single_field_reads_and_writes_pick_their_fields_independently() {
    let native = build("ycsb-f", &["readallfields=false"]);
    let cat = native.workload.catalogue().clone();
    let mut c = Client::new(native.workload, 0, 1, 13);
    let (mut rmw, mut differ) = (0, 0);
    let mut read_fields = std::collections::HashSet::new();
    for _ in 0..2_000 {
        let op = c.operation();
        let sql: Vec<&str> = op
            .ran
            .iter()
            .map(|r| cat.statements[r.stmt as usize].sql.as_str())
            .collect();
        let field = |s: &str| s.split("FIELD").nth(1).unwrap()[..1].to_string();
        assert!(sql[0].starts_with("SELECT FIELD"), "{}", sql[0]);
        read_fields.insert(field(sql[0]));
        if c.tx_name(op.tx) == "READ-MODIFY-WRITE" {
            rmw += 1;
            assert!(
                sql[1].starts_with("UPDATE usertable SET FIELD"),
                "{}",
                sql[1]
            );
            differ += usize::from(field(sql[0]) != field(sql[1]));
        }
    }
    assert_eq!(read_fields.len(), 10, "every field gets read");
    assert!(
        differ > rmw / 2,
        "YCSB draws the read and the written field separately: {differ} of {rmw}"
    );
}
