//! Results stores: a store is created 0600 whatever the umask; `pgrig results` reads a store the
//! user may only read and never writes (an empty file stays empty and is reported as no store);
//! two `pgrig study` processes running one study into one store (SQLite or PostgreSQL) do not
//! both run it: the second is refused, naming the first, and every run is stored once.

use std::io::BufRead;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use pgrig_testkit::{run, CmdOutput, TestDb};
use serde_json::Value;

fn pgrig_cmd(db: &TestDb, dir: &Path, args: &[&str]) -> Command {
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    c
}

fn pgrig(db: &TestDb, dir: &Path, args: &[&str]) -> CmdOutput {
    run(pgrig_cmd(db, dir, args))
}

fn write_study(db: &TestDb, dir: &Path, name: &str, workload: &str) {
    std::fs::write(
        dir.join("s.toml"),
        format!(
            "name = \"{name}\"\n[target]\nurl = \"{}\"\n[dataset]\nscale = 1\n[workload]\n{workload}\n\
             [matrix]\nclients = [1, 2]\n[collect]\nwait_events = false\n",
            db.url()
        ),
    )
    .unwrap();
}

/// The command failed with status 1 and said `text`.
fn assert_fails_with(out: &CmdOutput, text: &str) {
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains(text), "{}", out.stderr);
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn results_read_a_store_the_user_may_only_read_and_never_write() {
    let db = pgrig_testkit::fresh_db("store_ro");
    let dir = tempfile::tempdir().unwrap();
    write_study(&db, dir.path(), "ro", "transactions = 5");
    // created private even with a permissive umask
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!(
            "umask 000; exec {} study s.toml",
            env!("CARGO_BIN_EXE_pgrig")
        ))
        .current_dir(dir.path())
        .envs(db.env());
    let out = run(c);
    assert!(out.success(), "{}\n{}", out.stdout, out.stderr);
    let store = dir.path().join("pgrig.db");
    assert_eq!(mode(&store), 0o600, "store");
    assert_eq!(mode(&dir.path().join("pgrig.db.lock")), 0o600, "lock file");

    // now shared read-only: readable by everyone, writable by nobody but root
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = (std::fs::read(&store).unwrap(), files(dir.path()));
    let as_reader = |args: &[&str]| {
        let mut c = pgrig_cmd(&db, dir.path(), args);
        if std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0 {
            // root may write anything: read as an account that may not
            c.uid(65534).gid(65534);
        }
        run(c)
    };
    let list = as_reader(&["results", "list"]);
    assert!(list.success(), "{}", list.stderr);
    assert_eq!(list.stdout.lines().count(), 3, "{}", list.stdout);
    let export = as_reader(&["results", "export", "--format", "csv"]);
    assert!(export.success(), "{}", export.stderr);
    let show = as_reader(&["results", "show", "1"]);
    assert!(show.success(), "{}", show.stderr);
    // a study needs to write: refused with why, before anything runs
    let study = as_reader(&["study", "s.toml"]);
    assert_fails_with(
        &study,
        "a study writes its store, and this one cannot be written",
    );
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!((std::fs::read(&store).unwrap(), files(dir.path())), before);
}

#[test]
fn results_on_an_empty_file_say_it_is_no_store_and_leave_it_empty() {
    let db = pgrig_testkit::fresh_db("store_empty");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.db"), b"").unwrap();
    for args in [
        &["results", "list", "--store", "empty.db"][..],
        &["results", "show", "1", "--store", "empty.db"],
        &["results", "export", "--store", "empty.db"],
    ] {
        let out = pgrig(&db, dir.path(), args);
        assert_fails_with(
            &out,
            "results store \"empty.db\": not a pgrig results store (an empty database",
        );
        assert_eq!(
            std::fs::metadata(dir.path().join("empty.db"))
                .unwrap()
                .len(),
            0
        );
    }
    assert_eq!(files(dir.path()), ["empty.db"]);
}

/// Starts a study, waits until it holds its study in the store, runs a second one with the same
/// file and store (which must be refused naming the first), then lets the first finish.
fn second_study_is_refused(db: &TestDb, dir: &Path, store: &str, holder_text: &str) {
    let mut first = pgrig_cmd(db, dir, &["study", "s.toml", "--store", store])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(first.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("initialising the dataset") {
            break;
        }
    }
    let drain = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>());
    let second = pgrig(db, dir, &["study", "s.toml", "--store", store]);
    let status = first.wait().unwrap();
    let rest = drain.join().unwrap().join("\n");
    assert!(status.success(), "first study failed:\n{seen}{rest}");
    assert_eq!(second.code, Some(1), "{}\n{}", second.stdout, second.stderr);
    let holder = holder_text.replace("{pid}", &first.id().to_string());
    assert!(
        second.stderr.contains(&format!(
            "study \"conc\" is being run into this store by {holder}"
        )),
        "{}",
        second.stderr
    );
    let out = pgrig(db, dir, &["results", "export", "--store", store]);
    assert!(out.success(), "{}", out.stderr);
    let runs: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    let mut idx: Vec<u64> = runs
        .iter()
        .map(|r| r["run_index"].as_u64().unwrap())
        .collect();
    idx.sort();
    assert_eq!(idx, [0, 1], "each run stored once");
    // and the study is complete for the next one
    let again = pgrig(db, dir, &["study", "s.toml", "--store", store]);
    assert!(
        again
            .stderr
            .contains("all 2 runs of study \"conc\" are already stored"),
        "{}",
        again.stderr
    );
}

#[test]
fn two_studies_into_one_sqlite_store_do_not_repeat_runs() {
    let db = pgrig_testkit::fresh_db("store_conc");
    let dir = tempfile::tempdir().unwrap();
    write_study(&db, dir.path(), "conc", "duration = \"1s\"");
    second_study_is_refused(&db, dir.path(), "pgrig.db", "process {pid} (");
}

#[test]
fn two_studies_into_one_postgres_store_do_not_repeat_runs() {
    let db = pgrig_testkit::fresh_db("store_conc_pg");
    let dir = tempfile::tempdir().unwrap();
    write_study(&db, dir.path(), "conc", "duration = \"1s\"");
    second_study_is_refused(
        &db,
        dir.path(),
        &db.url(),
        "another session (server process ",
    );
}

#[test]
fn results_on_a_postgres_database_without_a_store_create_nothing() {
    let db = pgrig_testkit::fresh_db("store_pg_ro");
    let dir = tempfile::tempdir().unwrap();
    let out = pgrig(&db, dir.path(), &["results", "list", "--store", &db.url()]);
    assert_fails_with(&out, "no pgrig results store in this database");
    assert_eq!(
        db.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgrig'"),
        "0"
    );

    // a store of another schema version is refused, for reading and for a study
    db.psql(
        "CREATE SCHEMA pgrig; CREATE TABLE pgrig.studies (id bigint); CREATE TABLE pgrig.runs (id bigint); \
         CREATE TABLE pgrig.meta (key text PRIMARY KEY, value text); INSERT INTO pgrig.meta VALUES ('schema_version', '2')",
    );
    write_study(&db, dir.path(), "v", "transactions = 1");
    for args in [
        &["results", "export", "--store", &db.url()][..],
        &["study", "s.toml", "--store", &db.url()],
    ] {
        let out = pgrig(&db, dir.path(), args);
        assert_fails_with(
            &out,
            "written by a newer pgrig (store schema version 2; this pgrig reads version 1)",
        );
    }
    assert_eq!(db.psql("SELECT count(*) FROM pgrig.runs"), "0");
}
