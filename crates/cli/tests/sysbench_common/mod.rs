//! Shared by the `sysbench_*` tests: the real sysbench 1.0.20 (the oracle; missing, the test
//! fails) and pgrig through a link named `sysbench`, both pointed at a test database with
//! sysbench's `--pgsql-*` options, and the normalisation their outputs are compared under.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use pgrig_testkit::{run, CmdOutput, Server, ServerOptions, TestDb};

/// The installed sysbench; a missing oracle fails the test.
pub use pgrig_testkit::sysbench_oracle as oracle;

/// pgrig's binary through a link named `sysbench`.
pub fn link() -> &'static Path {
    static LINK: OnceLock<PathBuf> = OnceLock::new();
    LINK.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("pgrig-sysbench-link-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("link dir");
        let link = dir.join("sysbench");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pgrig"), &link).expect("sysbench link");
        link
    })
}

/// `PROGRAM --db-driver=pgsql --pgsql-host=... ARGS` against `db` (over the unix socket).
pub fn command(program: &Path, db: &TestDb, args: &[&str]) -> Command {
    db.sysbench_command(program, args)
}

/// The real sysbench's output.
pub fn sysbench(db: &TestDb, args: &[&str]) -> CmdOutput {
    run(command(&oracle(), db, args))
}

/// pgrig's output through the `sysbench` link.
pub fn pgrig(db: &TestDb, args: &[&str]) -> CmdOutput {
    run(command(link(), db, args))
}

/// A text with what may differ taken out: the banner's "using ..." (sysbench names LuaJIT,
/// pgrig itself), the Lua script locations in sysbench's messages, and every digit (`#`).
pub fn normalise(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = if line.starts_with("sysbench 1.0.20 (using ") {
            "sysbench 1.0.20 (using ...)".to_string()
        } else {
            strip_lua_location(line)
        };
        let digits: String = line
            .chars()
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .collect();
        out.push_str(&collapse_hashes(&digits));
        out.push('\n');
    }
    out
}

/// `/usr/share/sysbench/oltp_common.lua:197: ` taken out of a message.
fn strip_lua_location(line: &str) -> String {
    let Some(start) = line.find("/usr/share/sysbench/") else {
        return line.to_string();
    };
    let rest = &line[start..];
    let end = rest.find(".lua:").and_then(|i| {
        let after = &rest[i + 5..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        after[digits..]
            .starts_with(": ")
            .then_some(i + 5 + digits + 2)
    });
    match end {
        Some(e) => format!("{}{}", &line[..start], &rest[e..]),
        None => line.to_string(),
    }
}

/// Runs of `#` as one (numbers of any width compare equal) and runs of spaces as one (the
/// padding around numbers in sysbench's columns depends on their width).
fn collapse_hashes(s: &str) -> String {
    let mut out = String::new();
    let mut prev = '\0';
    for c in s.chars() {
        if (c == '#' || c == ' ') && prev == c {
            continue;
        }
        out.push(c);
        prev = c;
    }
    out
}

/// Runs `args` with sysbench and with pgrig on `db`: standard output and error (normalised)
/// and the exit status must be the same. Returns pgrig's output.
pub fn same(db: &TestDb, args: &[&str]) -> CmdOutput {
    let theirs = sysbench(db, args);
    let ours = pgrig(db, args);
    assert_eq!(
        normalise(&ours.stdout),
        normalise(&theirs.stdout),
        "stdout of {args:?}\n--- pgrig:\n{}--- sysbench:\n{}",
        ours.stdout,
        theirs.stdout
    );
    assert_eq!(
        normalise(&ours.stderr),
        normalise(&theirs.stderr),
        "stderr of {args:?}"
    );
    assert_eq!(ours.code, theirs.code, "exit status of {args:?}");
    ours
}

/// The distinct lines of a normalised output, sorted (threads interleave their lines, and
/// sysbench's logger folds a repeated line into "(last message repeated N times)").
pub fn line_set(s: &str) -> Vec<String> {
    let mut v: Vec<String> = normalise(s)
        .lines()
        .filter(|l| !l.starts_with("(last message repeated") && !l.trim().is_empty())
        .map(String::from)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The test binary's cluster with `pg_stat_statements` loaded (utility statements tracked), for
/// tests that check the figures against the server's own count of the statements it ran.
pub fn statements_cluster() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        pgrig_testkit::custom_cluster(
            ServerOptions::default()
                .setting("shared_preload_libraries", "pg_stat_statements")
                .setting("pg_stat_statements.track_utility", "on"),
        )
    })
}

/// Empties `db`'s own `pg_stat_statements` entries, not those of the other tests' databases
/// (the reset's own call is then its first entry).
pub fn reset_statements(db: &TestDb) {
    db.psql(
        "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database \
         WHERE datname = current_database()), 0)",
    );
}
