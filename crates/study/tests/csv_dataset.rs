//! A study's `[dataset]` with `schema` and `csv` on a real server (`pgrig-testkit`): CSV files
//! with quoting (embedded delimiter, quote, newline), NULLs (empty unquoted and a custom null
//! string), a header line and a per-table override load as written — the rows read back from
//! the server equal the rows the test states from the files' text, independent of the loader —
//! and ANALYZE ran; a bad value, a wrong column count or a file without a table is reported as
//! `file:line` (the file's line, past a quoted newline)
//! and the study stops before any point runs.

use std::path::Path;
use std::sync::Arc;

use pgrig_engine::sink::{Level, Progress, Sink};
use pgrig_engine::StopHandle;
use pgrig_study::{check, run_study, spec, Control, Reporter, Store};
use pgrig_testkit::{fresh_db, TestDb};
use serde_json::{json, Value};

struct PrintSink;

impl Sink for PrintSink {
    fn message(&self, level: Level, text: &str) {
        eprintln!("{level:?}: {text}");
    }
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &Progress) {}
}

struct Quiet;

impl Reporter for Quiet {
    fn info(&self, text: &str) {
        eprintln!("info: {text}");
    }
    fn run_done(&self, _: usize, _: usize, _: Option<std::time::Duration>, _: &str) {}
}

const SCHEMA: &str = "create table people (id integer primary key, name text, note text);\n\
                      create table items (id integer, label text, owner text);\n";

/// Writes `schema.sql` and `data/NAME.csv` for each file into `dir`.
fn write_files(dir: &Path, files: &[(&str, &str)]) {
    std::fs::write(dir.join("schema.sql"), SCHEMA).unwrap();
    std::fs::create_dir_all(dir.join("data")).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join("data").join(format!("{name}.csv")), text).unwrap();
    }
}

/// Runs a one-query study loading `dir`'s files (`csv` is the `[dataset.csv]` table's body)
/// into `db`; the study's result and how many runs the store holds.
fn run(db: &TestDb, dir: &Path, csv: &str) -> (Result<(), String>, usize) {
    let text = format!(
        "name = \"csv\"\n[target]\nurl = \"{}\"\n[dataset]\nschema = \"schema.sql\"\n\
         [dataset.csv]\ndir = \"data\"\n{csv}\n\
         [workload]\nquery = \"select count(*) from people\"\nexecutions = 1\nwarmup_executions = 0\n\
         [collect]\nwait_events = false\n",
        db.url()
    );
    let study = spec::parse("study.toml", &text).expect("the study parses");
    let checked = check(study, dir).expect("the study checks");
    let store_path = dir.join("pgrig.db").display().to_string();
    let mut store = Store::open(&store_path).unwrap();
    let control = Control {
        stop: StopHandle::default(),
        interrupted: Box::new(|| false),
    };
    let r = run_study(&checked, &mut store, Arc::new(PrintSink), &Quiet, &control)
        .map(drop)
        .map_err(|e| e.to_string());
    let runs = store.list(None).unwrap().len();
    (r, runs)
}

/// The rows of `table` ordered by id, as JSON objects (NULL as null).
fn rows(db: &TestDb, table: &str) -> Value {
    let out = db.psql(&format!("select json_agg(t order by id) from {table} t"));
    serde_json::from_str(out.trim()).unwrap()
}

#[test]
fn csv_files_with_quoting_nulls_a_header_and_an_override_load_as_written() {
    let db = fresh_db("csv_load");
    let dir = tempfile::tempdir().unwrap();
    let people = "id,name,note\n\
                  1,\"Smith, Jane\",\"said \"\"hi\"\"\"\n\
                  2,\"two\nlines\",\n\
                  3,,\\N\n\
                  4,\"\",plain\n";
    let items = "10;'a;b';NA\n11;NA;'it''s'\n12;'NA';\n";
    write_files(dir.path(), &[("people", people), ("items", items)]);
    let csv = "header = true\n\
               [dataset.csv.tables.items]\nheader = false\ndelimiter = \";\"\nnull = \"NA\"\nquote = \"'\"\n";
    let (r, runs) = run(&db, dir.path(), csv);
    r.expect("the study runs");
    assert_eq!(runs, 1);
    // what the files say, row by row: an unquoted empty field is NULL, a quoted one is an
    // empty string, \N is text in CSV, and the override's own null string and quote
    assert_eq!(
        rows(&db, "people"),
        json!([
            {"id": 1, "name": "Smith, Jane", "note": "said \"hi\""},
            {"id": 2, "name": "two\nlines", "note": null},
            {"id": 3, "name": null, "note": "\\N"},
            {"id": 4, "name": "", "note": "plain"}
        ])
    );
    assert_eq!(
        rows(&db, "items"),
        json!([
            {"id": 10, "label": "a;b", "owner": null},
            {"id": 11, "label": null, "owner": "it's"},
            {"id": 12, "label": "NA", "owner": ""}
        ])
    );
    let analyzed = db.psql(
        "select count(*) from pg_stats where schemaname = 'public' and tablename in ('people', 'items')",
    );
    assert_eq!(analyzed.trim(), "6", "ANALYZE gave every column statistics");
}

#[test]
fn a_bad_row_names_the_file_and_line_and_no_point_runs() {
    let cases: [(&str, &str, &str); 3] = [
        // the bad value is on line 5: the quoted newline of row 1 is a line of the file too
        (
            "people",
            "id,name,note\n1,\"a\nb\",x\n2,ok,y\nx3,bad,z\n",
            "people.csv:5: invalid input syntax for type integer",
        ),
        (
            "people",
            "id,name,note\n1,a,b\n2,b,c,extra\n",
            "people.csv:3: extra data after last expected column",
        ),
        ("ghost", "id\n1\n", "ghost.csv: there is no table \"ghost\""),
    ];
    for (i, (name, text, want)) in cases.iter().enumerate() {
        let db = fresh_db(&format!("csv_bad_{i}"));
        let dir = tempfile::tempdir().unwrap();
        write_files(dir.path(), &[(name, text)]);
        let (r, runs) = run(&db, dir.path(), "header = true\n");
        let e = r.expect_err("a bad file fails the study");
        assert!(e.contains(want), "{e}\nshould contain: {want}");
        assert_eq!(runs, 0, "no point ran");
    }
}

#[test]
fn a_bad_csv_key_is_reported_where_the_study_file_says_it() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("people", "id\n")]);
    let text =
        "name = \"csv\"\n[dataset]\nschema = \"schema.sql\"\n[dataset.csv]\ndir = \"data\"\n\
                delimiter = \";;\"\n[workload]\nquery = \"select 1\"\n";
    let e = check(spec::parse("study.toml", text).unwrap(), dir.path()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("study.toml:6:13: dataset csv `delimiter` must be one ASCII character"),
        "{e}"
    );
    let text = text.replace(
        "delimiter = \";;\"",
        "[dataset.csv.tables.nosuch]\nnull = \"\"",
    );
    let e = check(spec::parse("study.toml", &text).unwrap(), dir.path()).unwrap_err();
    assert!(e.to_string().contains("there is no file nosuch.csv"), "{e}");
}
