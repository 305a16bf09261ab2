//! The SQL that `pgrig init` sends, read from a real server's statement log, against what
//! pgbench 15's `-i` sends for the same options. With `--load-jobs 1` (pgbench's way) the
//! statements must come in pgbench's order; with the default (parallel) loading they must be
//! pgbench's statements in any order. The only differences allowed are the documented ones,
//! normalised below: branches and tellers arrive by COPY instead of one INSERT per row (same
//! rows: `init_parity.rs`), pgrig's catalog probes and its session `maintenance_work_mem`,
//! binary COPY, server-side generation split into key ranges, and with unlogged partitions an
//! `analyze pgbench_branches` before the vacuums (`pgrig_init::load::FLUSH_ASYNC_COMMITS`). `--unlogged-tables` with
//! partitions follows pgbench 18 (the four tables logged, only the partitions unlogged) where
//! pgbench 15 makes all unlogged (PostgreSQL 18 refuses that): there the oracle runs without
//! `--unlogged-tables` and its partitions are made unlogged.

use std::sync::OnceLock;

use pgrig_testkit::{run, Server, ServerOptions, TestDb};

/// This binary's cluster: every statement of every session logged with its database and pid.
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

/// The statements logged for `db`, in log order, each as `(pid, text)` (continuation lines of
/// a multi-line statement joined with `\n`).
fn statements(db: &TestDb) -> Vec<(String, String)> {
    let log = std::fs::read_to_string(logging_cluster().log_path()).expect("server log");
    let prefix = format!("{}|", db.name);
    let mut out: Vec<(String, String)> = Vec::new();
    let mut in_ours = false;
    for line in log.lines() {
        if let Some(rest) = line.strip_prefix(&prefix) {
            in_ours = false;
            let Some((pid, msg)) = rest.split_once('|') else {
                continue;
            };
            if let Some(sql) = msg.strip_prefix("LOG:  statement: ") {
                out.push((pid.to_string(), sql.to_string()));
                in_ours = true;
            }
        } else if in_ours && line.starts_with('\t') {
            let last = out.last_mut().expect("a statement");
            last.1.push('\n');
            last.1.push_str(&line[1..]);
        } else {
            in_ours = false;
        }
    }
    out
}

/// pgbench's statements with pgrig's documented differences taken out of both sides.
fn normalise(stmts: &[(String, String)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, s) in stmts {
        // pgbench 15: one INSERT per branch and teller row; pgrig: one COPY per table.
        let small_load = ["pgbench_branches", "pgbench_tellers"]
            .into_iter()
            .find(|t| {
                (s.starts_with(&format!("insert into {t}(")) && s.contains(" values"))
                    || *s == format!("copy {t} from stdin")
            });
        if let Some(table) = small_load {
            let line = format!("load {table}");
            if out.last() != Some(&line) {
                out.push(line);
            }
            continue;
        }
        let probe = s.starts_with("select relkind from pg_catalog.pg_class")
            || s.starts_with("select string_agg(pg_catalog.format_type")
            || s.starts_with(
                "select setting from pg_catalog.pg_settings where name = 'maintenance_work_mem'",
            )
            || s.starts_with("set maintenance_work_mem")
            || s.contains("from pg_catalog.pg_inherits");
        if probe {
            continue;
        }
        out.push(
            s.replace(", format binary)", ")")
                .replace(" with (format binary)", ""),
        );
    }
    out
}

/// What parallel loading does differently, folded away: accounts are copied over several
/// connections (per partition, or key ranges of the parent), and partitions are vacuumed and
/// given their keys in parallel before the parent's `vacuum analyze` and key (which then find
/// them done). All accounts COPYs become one line.
fn parallel_form(stmts: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut copied = false;
    for s in stmts {
        if s.starts_with("copy pgbench_accounts ") || s.starts_with("copy \"pgbench_accounts_") {
            if !copied {
                out.push("copy pgbench_accounts".to_string());
                copied = true;
            }
            continue;
        }
        if s.starts_with("vacuum \"pgbench_accounts_")
            || s == "analyze pgbench_branches"
            || (s.starts_with("alter table \"pgbench_accounts_")
                && s.ends_with("add primary key (aid)"))
        {
            continue;
        }
        out.push(s);
    }
    out
}

fn pgbench_init(db: &TestDb, args: &[&str]) -> Vec<(String, String)> {
    let mut c = db.pgbench();
    c.arg("-i").args(args);
    let out = run(c);
    assert!(out.success(), "pgbench -i {args:?}: {}", out.stderr);
    statements(db)
}

fn pgrig_init(db: &TestDb, args: &[&str]) -> Vec<(String, String)> {
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.arg("init").args(args);
    let out = run(c);
    assert!(out.success(), "pgrig init {args:?}: {}", out.stderr);
    statements(db)
}

fn fresh(hint: &str) -> TestDb {
    pgrig_testkit::fresh_db_on(logging_cluster(), hint)
}

/// True when pgrig follows pgbench 18 rather than pgbench 15 for `args`: `--unlogged-tables` with
/// partitions makes only the partitions unlogged (pgbench 15 also the four tables).
fn pgbench18_persistence(args: &[&str]) -> bool {
    args.contains(&"--unlogged-tables") && args.iter().any(|a| a.starts_with("--partitions"))
}

/// pgbench's statements for `args` (normalised); for [`pgbench18_persistence`] run without
/// `--unlogged-tables`, with the partitions made unlogged.
fn oracle_statements(args: &[&str]) -> Vec<String> {
    if !pgbench18_persistence(args) {
        return normalise(&pgbench_init(&fresh("stmt_pgbench"), args));
    }
    let logged: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| *a != "--unlogged-tables")
        .collect();
    normalise(&pgbench_init(&fresh("stmt_pgbench"), &logged))
        .into_iter()
        .map(|s| match s.strip_prefix("create table ") {
            Some(rest) if rest.starts_with("pgbench_accounts_") => {
                format!("create unlogged table {rest}")
            }
            _ => s,
        })
        .collect()
}

/// Compares pgbench's statements with pgrig's, in order for `--load-jobs 1`, as a multiset for
/// the default; returns pgrig's default-mode statements for further checks.
fn compare(args: &[&str]) -> Vec<(String, String)> {
    let want = oracle_statements(args);
    assert!(
        want.len() > 5,
        "the log has pgbench's statements: {want:#?}"
    );

    let exact = pgrig_init(
        &fresh("stmt_exact"),
        &[&["--load-jobs", "1"][..], args].concat(),
    );
    assert_eq!(
        normalise(&exact),
        want,
        "--load-jobs 1 sends pgbench's statements in pgbench's order ({args:?})"
    );

    let fast = pgrig_init(
        &fresh("stmt_fast"),
        &[&["--load-jobs", "3"][..], args].concat(),
    );
    let mut got = parallel_form(normalise(&fast));
    let mut want_sorted = parallel_form(want.clone());
    got.sort();
    want_sorted.sort();
    assert_eq!(
        got, want_sorted,
        "parallel loading sends the same statements ({args:?})"
    );
    fast
}

fn sessions(stmts: &[(String, String)], what: &str) -> usize {
    let mut pids: Vec<&str> = stmts
        .iter()
        .filter(|(_, s)| s.contains(what))
        .map(|(p, _)| p.as_str())
        .collect();
    pids.sort();
    pids.dedup();
    pids.len()
}

#[test]
fn default_steps_send_pgbench_statements() {
    let fast = compare(&["-s", "2"]);
    assert!(
        fast.iter()
            .any(|(_, s)| s == "copy pgbench_accounts from stdin with (freeze on, format binary)"),
        "an ordinary table is one frozen binary COPY"
    );
    assert_eq!(
        sessions(&fast, "add primary key"),
        3,
        "the three keys are built on three connections at once"
    );
}

#[test]
fn partitions_foreign_keys_and_fillfactor_send_pgbench_statements() {
    let fast = compare(&[
        "-s",
        "3",
        "--partitions=3",
        "--partition-method=hash",
        "--foreign-keys",
        "-F",
        "90",
    ]);
    assert!(
        sessions(&fast, "copy pgbench_accounts from stdin") >= 2,
        "hash partitions are loaded over several connections (key ranges of the parent): {fast:#?}"
    );
}

#[test]
fn unlogged_range_partitions_send_pgbench_statements() {
    let fast = compare(&[
        "-s",
        "2",
        "--partitions=2",
        "--unlogged-tables",
        "-I",
        "dtgvp",
    ]);
    // each range partition is one COPY (a job of its own, never split into key ranges); which
    // connection takes which job is the scheduler's (on a loaded host one may take both)
    let mut copies: Vec<&str> = fast
        .iter()
        .filter(|(_, s)| s.starts_with("copy \"pgbench_accounts_"))
        .map(|(_, s)| s.as_str())
        .collect();
    copies.sort();
    assert_eq!(
        copies,
        [
            "copy \"pgbench_accounts_1\" from stdin with (format binary)",
            "copy \"pgbench_accounts_2\" from stdin with (format binary)"
        ],
        "range partitions are loaded one COPY each: {fast:#?}"
    );
}

#[test]
fn server_side_generation_sends_pgbench_statements_with_load_jobs_1() {
    let args = ["-s", "2", "-I", "dtGvpf"];
    let want = pgbench_init(&fresh("stmt_g_pgbench"), &args);
    let exact = pgrig_init(
        &fresh("stmt_g_exact"),
        &[&["--load-jobs", "1"][..], &args].concat(),
    );
    assert_eq!(normalise(&exact), normalise(&want));
    // In parallel, the accounts insert is split into key ranges over several connections.
    let fast = pgrig_init(
        &fresh("stmt_g_fast"),
        &[&["--load-jobs", "2"][..], &args].concat(),
    );
    assert!(
        sessions(&fast, "insert into pgbench_accounts") == 2,
        "{fast:#?}"
    );
}
