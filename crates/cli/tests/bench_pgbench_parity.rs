//! Run-time behaviours where `pgbench` (pgrig through a link of that name) must do exactly what
//! pgbench 15 does: same exit status, same report lines, same stderr. Each test runs the
//! installed pgbench 15 as the oracle on the same database.

mod common;

use common::*;
use pgrig_testkit::fresh_db;

fn scripts(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

#[test]
fn script_ending_inside_a_transaction_block_counts_the_transaction_then_aborts() {
    let db = fresh_db("open_tx_end");
    let dir = scripts(&[("open.sql", "BEGIN;\nSELECT 1;\n")]);
    let (ours, _) = assert_same_run(&db, dir.path(), &["-n", "-t", "10", "-f", "open.sql"]);
    assert_eq!(ours.code, Some(2));
    assert_eq!(
        line_value(&ours.stdout, "number of transactions actually processed: "),
        Some("1/10")
    );
}

#[test]
fn gset_and_aset_inside_a_pipeline_abort_the_client() {
    let db = fresh_db("gset_pipeline");
    let dir = scripts(&[
        (
            "g.sql",
            "\\startpipeline\nSELECT 1 AS a \\gset\n\\endpipeline\n",
        ),
        (
            "a.sql",
            "\\startpipeline\nSELECT 1 AS a \\aset\n\\endpipeline\n",
        ),
    ]);
    for f in ["g.sql", "a.sql"] {
        let (ours, _) = assert_same_run(
            &db,
            dir.path(),
            &["-n", "-t", "2", "-M", "extended", "-f", f],
        );
        assert_eq!(ours.code, Some(2));
        assert!(
            ours.stderr.contains("is not allowed in pipeline mode"),
            "{}",
            ours.stderr
        );
    }
}

#[test]
fn assigning_an_invalid_variable_name_aborts_the_client() {
    let db = fresh_db("invalid_var_name");
    let cases = [
        "\\set . 1\n",
        "\\set 1a 1\n",
        "\\setshell . echo 1\n",
        "SELECT 1 AS a \\gset .\n",
        "SELECT 1 AS \"x y\" \\gset\n",
        "SELECT 1 AS a \\aset 1\n",
        "SELECT 1 AS a \\; SELECT 2 AS \"b c\" \\aset\n",
    ];
    for text in cases {
        let dir = scripts(&[("v.sql", text)]);
        let (ours, _) = assert_same_run(&db, dir.path(), &["-n", "-t", "2", "-f", "v.sql"]);
        assert_eq!(ours.code, Some(2), "{text}");
        assert!(
            ours.stderr.contains("invalid variable name"),
            "{text}: {}",
            ours.stderr
        );
    }
}

#[test]
fn run_without_a_successful_transaction_reports_failures_as_nan() {
    let db = fresh_db("nan_report");
    let dir = scripts(&[("zero.sql", "SELECT 1/0;\n")]);
    for extra in [&[][..], &["--failures-detailed", "--max-tries", "2"][..]] {
        let mut args = vec!["-n", "-t", "3", "-f", "zero.sql"];
        args.extend_from_slice(extra);
        let (ours, theirs) = assert_same_run(&db, dir.path(), &args);
        assert!(
            ours.stdout
                .contains("number of failed transactions: 0 (NaN%)"),
            "{}",
            ours.stdout
        );
        // the report stops there, as pgbench's does
        assert_eq!(ours.stdout.lines().last(), theirs.stdout.lines().last());
    }
}
