//! The statements a short `run` sends through the `sysbench` link, read from the server's
//! statement log, against the real sysbench 1.0.20's for the same options: the same texts with
//! the same counts per event (tables chosen at random are written `sbtestN`), in both
//! `--db-ps-mode`s.

use crate::sysbench_common;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use pgrig_testkit::{fresh_db_on, run, Server, ServerOptions, TestDb};
use sysbench_common::{command, link, oracle};

/// This binary's cluster: every statement logged with its database.
fn logging_cluster() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        pgrig_testkit::custom_cluster(
            ServerOptions::default()
                .setting("log_statement", "all")
                .setting("log_line_prefix", "%d|%p|")
                .setting("autovacuum", "off"),
        )
    })
}

/// The statements logged for `db` (`execute NAME: SQL` or `statement: SQL`), tables numbered
/// `sbtestN`, counted.
fn statements(db: &TestDb) -> BTreeMap<String, u64> {
    let log = std::fs::read_to_string(logging_cluster().log_path()).expect("server log");
    let prefix = format!("{}|", db.name);
    let mut out = BTreeMap::new();
    for line in log.lines() {
        let Some(rest) = line.strip_prefix(&prefix) else {
            continue;
        };
        let Some((_, msg)) = rest.split_once('|') else {
            continue;
        };
        let sql = if let Some(s) = msg.strip_prefix("LOG:  statement: ") {
            s
        } else if let Some(s) = msg.strip_prefix("LOG:  execute ") {
            s.split_once(": ").map_or(s, |(_, sql)| sql)
        } else {
            continue;
        };
        *out.entry(numbered(sql)).or_insert(0) += 1;
    }
    out
}

/// `sbtest12` → `sbtestN`; the values the simple protocol inlines (numbers, quoted
/// strings) → `?`.
fn numbered(sql: &str) -> String {
    let mut out = String::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            for q in chars.by_ref() {
                if q == '\'' {
                    break;
                }
            }
            out.push('?');
            continue;
        }
        if c.is_ascii_digit() {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            out.push(if out.ends_with("sbtest") { 'N' } else { '?' });
            continue;
        }
        out.push(c);
    }
    out
}

fn compare(mode: &str) {
    let server = logging_cluster();
    let theirs = fresh_db_on(server, &format!("sb_stmts_theirs_{mode}"));
    let ours = fresh_db_on(server, &format!("sb_stmts_ours_{mode}"));
    let ps = format!("--db-ps-mode={mode}");
    for (db, program) in [(&theirs, oracle()), (&ours, link().to_path_buf())] {
        let prep = run(command(
            &oracle(),
            db,
            &[
                "oltp_read_write",
                "--tables=2",
                "--table-size=500",
                "prepare",
            ],
        ));
        assert!(prep.success(), "{}", prep.stdout);
        let args = [
            &ps,
            "oltp_read_write",
            "--tables=2",
            "--table-size=500",
            "--events=20",
            "--time=0",
            "--rand-type=uniform",
            "run",
        ];
        let out = run(command(&program, db, &args));
        assert!(out.success(), "{program:?}: {}{}", out.stdout, out.stderr);
    }
    let (t, o) = (statements(&theirs), statements(&ours));
    let run_only = |m: &BTreeMap<String, u64>| -> BTreeMap<String, u64> {
        m.iter()
            .filter(|(k, _)| {
                !k.starts_with("CREATE") && !k.starts_with("INSERT INTO sbtestN(k, c, pad) VALUES")
            })
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    };
    assert_eq!(t.get("BEGIN"), Some(&20), "sysbench's log: {t:?}");
    assert_eq!(run_only(&o), run_only(&t), "--db-ps-mode={mode}");
}

#[test]
fn prepared_statements_are_sysbenchs() {
    compare("auto");
}

#[test]
fn simple_protocol_statements_are_sysbenchs() {
    compare("disable");
}
