//! Custom scripts under `pgrig bench`: the same seed gives the same values and sends the same SQL
//! as the installed pgbench; `\gset`, `\if`, pipelines, `-D`, and the legacy `\setrandom`.

use crate::common;

use common::*;
use pgrig_testkit::{fresh_db, TestDb};

fn write_script(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("pgrig-test-scripts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn debug_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.starts_with("debug("))
        .map(str::to_owned)
        .collect()
}

#[test]
fn seeded_random_values_match_pgbench() {
    let db = fresh_db("seeded_values");
    let f = write_script(
        "seeded.sql",
        "\\set a debug(random(1, 1000))\n\\set b debug(random_gaussian(1, 100, 2.5))\n\\set c debug(random_exponential(1, 100, 3.0))\n\\set d debug(random_zipfian(1, 100, 1.5))\n\\set e debug(hash(:a) + permute(:b, 100))\n\\set f debug(:default_seed + :random_seed * 0)\nSELECT :a, :b;\n",
    );
    let args = ["-n", "-t", "5", "-c", "1", "--random-seed=5432", "-f", &f];
    let ours = pgrig_bench(&db, &args);
    assert_eq!(ours.code, Some(0), "{}", ours.stderr);
    let theirs = pgbench(&db, &args);
    assert_eq!(debug_lines(&ours.stderr), debug_lines(&theirs.stderr));
    assert_eq!(debug_lines(&ours.stderr).len(), 30);
}

/// Both tools insert what they computed; the table contents must be identical.
fn same_rows_as_pgbench(db: &TestDb, script: &str, extra: &[&str]) {
    db.psql("create table if not exists out (client int, tx int, v text)");
    let f = write_script(&format!("rows_{}.sql", db.name), script);
    let mut args = vec![
        "-n",
        "-t",
        "4",
        "-c",
        "3",
        "-j",
        "1",
        "--random-seed=99",
        "-f",
        &f,
    ];
    args.extend_from_slice(extra);
    let ours = pgrig_bench(db, &args);
    assert_eq!(ours.code, Some(0), "{}", ours.stderr);
    let q = "select client, v from out order by client, v";
    let mine = db.psql(q);
    db.psql("truncate out");
    let theirs = pgbench(db, &args);
    assert_eq!(theirs.code, Some(0), "{}", theirs.stderr);
    assert_eq!(mine, db.psql(q), "extra args {extra:?}");
    assert_eq!(mine.lines().count(), 12);
}

#[test]
fn simple_mode_substitution_sends_same_values_as_pgbench() {
    let db = fresh_db("subst_simple");
    same_rows_as_pgbench(
        &db,
        "\\set x random(1, 1000000) * 3\n\\set y :x / 7.0\ninsert into out values (:client_id, 0, ':x|' || :y::text || '|:undefined_var');\n",
        &["-M", "simple"],
    );
}

#[test]
fn prepared_mode_parameters_send_same_values_as_pgbench() {
    let db = fresh_db("subst_prepared");
    same_rows_as_pgbench(
        &db,
        "\\set x random(-1000, 1000)\n\\set y double(:x) / 3\ninsert into out values (:client_id, 0, :x::text || '|' || :y::text || '|' || coalesce(:nosuch::text, 'null'));\n",
        &["-M", "prepared"],
    );
}

#[test]
fn defines_and_gset_reach_later_commands() {
    let db = fresh_db("gset");
    db.psql("create table out (client int, tx int, v text)");
    let f = write_script(
        "gset.sql",
        "select 40 + 2 as answer, 'x' as word \\gset g_\n\\if :g_answer = 42\ninsert into out values (:client_id, 1, ':g_word' || ':label');\n\\else\ninsert into out values (:client_id, 2, 'wrong');\n\\endif\n",
    );
    let out = pgrig_bench(
        &db,
        &["-n", "-t", "2", "-c", "2", "-D", "label=ok", "-f", &f],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(db.psql("select v, count(*) from out group by v"), "xok|4");
}

#[test]
fn legacy_setrandom_scripts_run() {
    let db = fresh_db("setrandom");
    db.psql("create table out (client int, tx int, v text)");
    let f = write_script(
        "setrandom.sql",
        "\\setrandom a 1 10\n\\setrandom b 1 100 gaussian 5\n\\setrandom c 1 100 exponential 2\ninsert into out values (:client_id, :a, :b || ',' || :c);\n",
    );
    let out = pgrig_bench(&db, &["-n", "-t", "10", "-f", &f]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        db.psql("select count(*) from out where tx between 1 and 10"),
        "10"
    );
}

#[test]
fn pipelined_script_runs_in_extended_mode() {
    let db = fresh_db("pipeline");
    pgbench_init(&db, 1);
    let f = write_script(
        "pipe.sql",
        "\\set aid random(1, 100000)\n\\startpipeline\nselect abalance from pgbench_accounts where aid = :aid;\nupdate pgbench_accounts set abalance = abalance + 1 where aid = :aid;\n\\endpipeline\n",
    );
    let out = pgrig_bench(&db, &["-n", "-t", "10", "-M", "extended", "-f", &f]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(db.psql("select sum(abalance) from pgbench_accounts"), "10");
}

#[test]
fn hostile_scripts_exit_1_with_pgbench_errors_not_a_crash() {
    // issue 21: an error past column 65,535 panicked (exit 101); a 14,000-term `\set`
    // overflowed the stack
    let db = fresh_db("hostile_scripts");
    let wide = write_script("wide.sql", &format!("\\set x {}(\n", " ".repeat(70_000)));
    let out = pgrig_bench(&db, &["-n", "-t", "1", "-f", &wide]);
    assert_eq!(
        out.code,
        Some(1),
        "{}",
        &out.stderr[..out.stderr.len().min(300)]
    );
    assert!(out.stderr.contains("wide.sql:1: syntax error"));
    assert!(out.stderr.contains("^ error found here"));
    assert!(!out.stderr.contains("panicked"));
    let long = write_script(
        "long.sql",
        &format!("select 1;\n\\set x {}\n", vec!["1"; 14_000].join(" + ")),
    );
    let out = pgrig_bench(&db, &["-n", "-t", "1", "-f", &long]);
    assert_eq!(
        out.code,
        Some(1),
        "{}",
        &out.stderr[..out.stderr.len().min(300)]
    );
    assert!(
        out.stderr.contains(
            "long.sql:2: expression is too complex (more than 1000 operators and function calls)"
        ),
        "{}",
        &out.stderr[..out.stderr.len().min(300)]
    );
}
