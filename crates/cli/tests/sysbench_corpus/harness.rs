//! The public-script corpus's mechanics: finding a corpus script where it lives on this machine
//! (never a copy in this repository: sysbench's test-suite copy under `shared/reference`, or a
//! repository fetched into the mirror directory, read at its pinned commit), running each of a
//! case's commands under sysbench 1.0.20 and pgrig (through the `sysbench` link) on two fresh
//! databases, and listing every divergence in what the corpus compares.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::sysbench_common::{link, normalise, oracle};
use pgrig_testkit::{fresh_db, run, CmdOutput, TestDb};

/// Where a corpus script lives on this machine.
pub enum Origin {
    /// A folder of the steering side's `shared/reference` (sysbench 1.0.20's test-suite copy).
    Shared(&'static str),
    /// A public repository fetched into the mirror directory (`PGRIG_SYSBENCH_CORPUS_MIRRORS`, else
    /// `/work/.mirror`, holding `owner+name/repo`), read at `commit`.
    Mirror {
        repo: &'static str,
        commit: &'static str,
    },
}

/// What of a run's query classes is compared today.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Classes {
    /// read, write and other: they do not depend on the random sequence.
    All,
    /// Only their total: the split depends on random keys (a DELETE finding no row is "other"),
    /// so read/write/other are compared only once pgrig's `--rand-seed` sequences are
    /// sysbench's ([`SAME_RAND_AS_SYSBENCH`]).
    TotalUntilSameRand,
    /// Nothing: the transaction mix itself is random (read/write/other compared only with
    /// [`SAME_RAND_AS_SYSBENCH`]).
    NoneUntilSameRand,
}

/// Whether the tables a case leaves are compared by row count or by name only (row counts that
/// depend on random data are compared only with [`SAME_RAND_AS_SYSBENCH`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Tables {
    Counts,
    NamesUntilSameRand,
}

/// pgrig's `--rand-seed` sequences equal sysbench 1.0.20's (issue 35, part 3): every comparison
/// that depends on the random sequence is on. Off until that lands; `PGRIG_CORPUS_SAME_RAND=1`
/// turns it on for a run.
pub const SAME_RAND_AS_SYSBENCH: bool = false;

fn same_rand() -> bool {
    SAME_RAND_AS_SYSBENCH || std::env::var("PGRIG_CORPUS_SAME_RAND").is_ok_and(|v| v == "1")
}

/// One corpus script and the command lines it is run with.
pub struct Case {
    pub name: &'static str,
    pub origin: Origin,
    /// The folder (inside the origin) the tools run in; it is materialised whole.
    pub dir: &'static str,
    /// The script and its options; `{dir}` stands for the folder's absolute path.
    pub args: &'static [&'static str],
    /// The commands, in order (`run` gets `--threads=1 --events=N --time=0 --rand-seed=1`).
    pub commands: &'static [&'static str],
    pub events: u32,
    pub classes: Classes,
    pub tables: Tables,
    /// Lines of a command's output compared as a sorted set (e.g. "PASSED").
    pub line_markers: &'static [&'static str],
    /// `run` prints sysbench's own report (its events and classes are compared); false where
    /// the script's `report_cumulative` hook replaces it (its `line_markers` are compared).
    pub standard_report: bool,
}

/// The first `lines` lines of what a run printed (stderr first), for a divergence message.
fn head(o: &CmdOutput, lines: usize) -> String {
    let text = format!("{}{}", o.stderr, o.stdout);
    let mut out: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    // the first FATAL line is the one that tells
    if let Some(i) = out.iter().position(|l| l.contains("FATAL")) {
        out.drain(..i);
    }
    out.truncate(lines);
    out.join(" | ")
}

fn mirror_root() -> PathBuf {
    std::env::var_os("PGRIG_SYSBENCH_CORPUS_MIRRORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/work/.mirror".into())
}

fn shared_root() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    [
        std::env::var("PGRIG_SHARED").ok().map(PathBuf::from),
        Some(root.join("shared")),
        Some("/work/shared".into()),
    ]
    .into_iter()
    .flatten()
    .find(|s| s.join("reference").is_dir())
}

/// The mirror's git directory for `repo` holding `commit`, if this machine has it.
fn mirror_git(repo: &str, commit: &str) -> Option<PathBuf> {
    let git = mirror_root().join(repo.replace('/', "+")).join("repo");
    let ok = Command::new("git")
        .arg("--git-dir")
        .arg(&git)
        .args(["cat-file", "-e", &format!("{commit}^{{commit}}")])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(git)
}

/// Why a case's source is not on this machine, or `None` when it is.
pub fn missing(origin: &Origin) -> Option<String> {
    match origin {
        Origin::Shared(dir) => match shared_root() {
            Some(s) if s.join(dir).is_dir() => None,
            _ => Some(format!(
                "shared/{dir} (the steering side's reference copy; set PGRIG_SHARED)"
            )),
        },
        Origin::Mirror { repo, commit } => mirror_git(repo, commit).is_none().then(|| {
            format!(
                "{repo} at {commit} under {} (fetch github:{repo}, or set \
                 PGRIG_SYSBENCH_CORPUS_MIRRORS)",
                mirror_root().display()
            )
        }),
    }
}

/// The folder the tools run in, with the scripts unchanged: the shared copy itself, or the
/// mirror's files of `dir` at the pinned commit written under `scratch`.
fn materialise(case: &Case, scratch: &Path) -> PathBuf {
    match &case.origin {
        Origin::Shared(dir) => shared_root()
            .expect("the shared reference copy")
            .join(dir)
            .join(case.dir),
        Origin::Mirror { repo, commit } => {
            let git = mirror_git(repo, commit).expect("the fetched repository");
            let git_out = |args: &[&str]| {
                let o = Command::new("git")
                    .arg("--git-dir")
                    .arg(&git)
                    .args(args)
                    .output()
                    .expect("git");
                assert!(o.status.success(), "git {args:?} in {}", git.display());
                o.stdout
            };
            let tree = format!("{commit}:{}", case.dir);
            let names = git_out(&["ls-tree", "-r", "--name-only", &tree]);
            for name in String::from_utf8_lossy(&names).lines() {
                let path = scratch.join(name);
                std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
                let spec = if case.dir.is_empty() {
                    format!("{commit}:{name}")
                } else {
                    format!("{commit}:{}/{name}", case.dir)
                };
                let blob = git_out(&["show", &spec]);
                std::fs::write(&path, blob).expect("write a corpus file");
            }
            scratch.to_path_buf()
        }
    }
}

/// `PROGRAM --db-driver=pgsql --pgsql-…=… ARGS` in `dir` on `db`, at most 10 minutes.
fn tool(program: &Path, db: &TestDb, dir: &Path, args: &[String]) -> CmdOutput {
    let server = db.server();
    let mut cmd = db.command("timeout");
    cmd.args(["--kill-after=10", "600"])
        .arg(program)
        .arg("--db-driver=pgsql")
        .arg(format!("--pgsql-host={}", server.socket_dir().display()))
        .arg(format!("--pgsql-port={}", server.port()))
        .arg(format!("--pgsql-user={}", server.user()))
        .arg(format!("--pgsql-db={}", db.name))
        .args(args)
        .current_dir(dir);
    run(cmd)
}

/// The number after `label` in a sysbench report, if the report has the line.
pub fn figure(report: &str, label: &str) -> Option<u64> {
    let line = report.lines().find(|l| l.trim_start().starts_with(label))?;
    let rest = line.trim_start()[label.len()..].trim_start();
    rest.split_whitespace().next()?.parse().ok()
}

/// The public tables and their row counts.
fn tables(db: &TestDb) -> Vec<(String, u64)> {
    let sql = "SELECT string_agg(table_name || ':' || (xpath('/row/c/text()', \
               query_to_xml(format('SELECT count(*) AS c FROM %I', table_name), false, true, \
               '')))[1]::text, ',' ORDER BY table_name) FROM information_schema.tables WHERE \
               table_schema = 'public'";
    db.psql(sql)
        .trim()
        .split(',')
        .filter_map(|t| {
            let (name, n) = t.rsplit_once(':')?;
            Some((name.to_string(), n.parse().ok()?))
        })
        .collect()
}

/// What of the tables is compared after `command`: names and row counts after prepare and
/// custom commands; after a run whose classes are fixed, names and the total row count (which
/// table a random key hits depends on the random sequence); else names only. Everything with
/// [`SAME_RAND_AS_SYSBENCH`].
fn table_view(case: &Case, command: &str, t: &[(String, u64)]) -> String {
    let names = t
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let per_table = || {
        t.iter()
            .map(|(n, c)| format!("{n}:{c}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    if same_rand() || (case.tables == Tables::Counts && command != "run") {
        per_table()
    } else if case.tables == Tables::Counts && case.classes == Classes::All {
        format!("{names}; {} rows", t.iter().map(|(_, c)| c).sum::<u64>())
    } else {
        names
    }
}

/// The divergences of one command's outputs (pgrig's `ours`, sysbench's `theirs`).
fn compare(case: &Case, command: &str, ours: &CmdOutput, theirs: &CmdOutput) -> Vec<String> {
    let mut out = Vec::new();
    let at = |what: &str, a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| {
        format!(
            "{command}: {what}: pgrig {a:?}, sysbench {b:?}\n    pgrig:    {}\n    sysbench: {}",
            head(ours, 4),
            head(theirs, 4)
        )
    };
    if ours.code != theirs.code {
        out.push(at("exit status", &ours.code, &theirs.code));
        return out;
    }
    if command == "help" {
        for (what, a, b) in [
            ("stdout", &ours.stdout, &theirs.stdout),
            ("stderr", &ours.stderr, &theirs.stderr),
        ] {
            let (a, b) = (normalise(a), normalise(b));
            if let Some((x, y)) = first_difference(&a, &b) {
                out.push(at(&format!("help {what}, first differing line"), &x, &y));
            }
        }
    }
    if command == "run" && theirs.code == Some(0) && case.standard_report {
        let mut labels = vec!["total number of events:", "transactions:"];
        let all = case.classes == Classes::All || same_rand();
        if all {
            labels.extend(["read:", "write:", "other:"]);
        }
        if all || case.classes == Classes::TotalUntilSameRand {
            labels.push("total:");
        }
        for label in labels {
            let (a, b) = (figure(&ours.stdout, label), figure(&theirs.stdout, label));
            if a != b || a.is_none() {
                out.push(at(label, &a, &b));
            }
        }
    }
    let marked = |o: &CmdOutput| {
        let mut v: Vec<String> = o
            .stdout
            .lines()
            .filter(|l| case.line_markers.iter().any(|m| l.contains(m)))
            .map(String::from)
            .collect();
        v.sort();
        v
    };
    if !case.line_markers.is_empty() && marked(ours) != marked(theirs) {
        out.push(at("marked lines", &marked(ours), &marked(theirs)));
    }
    out
}

/// The first line where `a` and `b` differ (a missing line is empty).
fn first_difference(a: &str, b: &str) -> Option<(String, String)> {
    let (mut la, mut lb) = (a.lines(), b.lines());
    loop {
        match (la.next(), lb.next()) {
            (None, None) => return None,
            (x, y) if x == y => continue,
            (x, y) => return Some((x.unwrap_or("").into(), y.unwrap_or("").into())),
        }
    }
}

/// Runs `case`'s commands under both tools and panics listing every divergence.
pub fn check(case: &Case) {
    let found = divergences(case, case.commands);
    assert!(
        found.is_empty(),
        "{}: pgrig diverges from sysbench 1.0.20 ({} divergences, first first):\n{}",
        case.name,
        found.len(),
        found.join("\n")
    );
}

/// Runs `SCRIPT help` of every case under both tools: the same output (normalised) and exit
/// status; panics listing the divergences of every case.
pub fn check_help(cases: &[&Case]) {
    let found: Vec<String> = cases
        .iter()
        .flat_map(|c| {
            divergences(c, &["help"])
                .into_iter()
                .map(move |d| format!("{}: {d}", c.name))
        })
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The divergences of `commands` of `case`, run in order under both tools on two fresh
/// databases (none when the case's source is not on this machine: [`pgrig_testkit::skip`] says
/// so, or fails the test in CI).
fn divergences(case: &Case, commands: &[&str]) -> Vec<String> {
    if let Some(why) = missing(&case.origin) {
        pgrig_testkit::skip(&format!("{}: not on this machine: {why}", case.name));
        return Vec::new();
    }
    let scratch = std::env::temp_dir().join(format!(
        "pgrig-corpus-{}-{}-{}",
        std::process::id(),
        case.name,
        commands.join("-")
    ));
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let dir = materialise(case, &scratch);
    let (db_ours, db_theirs) = (
        fresh_db(&format!("c_{}_p", case.name)),
        fresh_db(&format!("c_{}_s", case.name)),
    );
    let mut found = Vec::new();
    for command in commands {
        let args = arguments(case, &dir, command);
        let (ours, theirs) = std::thread::scope(|s| {
            let ours = s.spawn(|| tool(link(), &db_ours, &dir, &args));
            let theirs = tool(&oracle(), &db_theirs, &dir, &args);
            (ours.join().expect("pgrig's side"), theirs)
        });
        let here = compare(case, command, &ours, &theirs);
        println!(
            "{} {command}: exit pgrig {:?} sysbench {:?}{}",
            case.name,
            ours.code,
            theirs.code,
            if here.is_empty() { "" } else { " DIVERGES" }
        );
        found.extend(here);
        if *command != "cleanup" && *command != "help" {
            let (a, b) = (
                table_view(case, command, &tables(&db_ours)),
                table_view(case, command, &tables(&db_theirs)),
            );
            if a != b {
                found.push(format!(
                    "after {command}: tables: pgrig [{a}], sysbench [{b}]"
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    found
}

/// The command line of `command`: the case's options (`{dir}` replaced), `run`'s fixed
/// single-thread event count and seed, then the command.
fn arguments(case: &Case, dir: &Path, command: &str) -> Vec<String> {
    let dir = dir.display().to_string();
    let mut args: Vec<String> = case.args.iter().map(|a| a.replace("{dir}", &dir)).collect();
    if command == "run" {
        args.extend([
            "--threads=1".to_string(),
            format!("--events={}", case.events),
            "--time=0".into(),
            "--rand-seed=1".into(),
        ]);
    }
    args.push(command.to_string());
    args
}
