//! The coordinator of a sysbench Lua script's run over several hosts prints sysbench's
//! `--report-interval` lines of the whole run, merged from the segments' interval rows: their
//! shape is a single-host run's (and sysbench 1.0.20's, when installed), their figures add up
//! to the merged run document's per-second series and, with the segments' last partial
//! seconds, to what the server holds (a row per event); a forged interval row is refused
//! naming the row.

use crate::common;
use crate::lua_segments_common::{self, coordinator, sql_lit, wait};
use crate::sysbench_common::{command, link, normalise, oracle};

use std::path::{Path, PathBuf};
use std::process::Child;

use pgrig_results::document::RunDocument;
use pgrig_testkit::{fresh_db, CmdOutput, TestDb};

/// Every event: a read, a write (a row with the thread's id) and two others (`BEGIN`,
/// `COMMIT`); every thread writes one row in `thread_init` (`n` < 0).
const SCRIPT: &str = r#"
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE seen (tid int NOT NULL, n int NOT NULL)")
end
function thread_init()
  con = sysbench.sql.driver():connect()
  con:query(string.format("INSERT INTO seen VALUES (%d, -1)", sysbench.tid))
end
function event()
  con:query("BEGIN")
  con:query("SELECT 1")
  con:query(string.format("INSERT INTO seen VALUES (%d, %d)", sysbench.tid,
                          sysbench.rand.uniform(1, 1000)))
  con:query("COMMIT")
end
"#;

fn script(dir: &Path) -> PathBuf {
    let f = dir.join("intervals.lua");
    std::fs::write(&f, SCRIPT).unwrap();
    f
}

fn prepare(db: &TestDb, file: &Path) {
    let out = command(link(), db, &[file.to_str().unwrap(), "prepare"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

fn worker(db: &TestDb, i: u32, n: u32, file: &Path) -> Child {
    lua_segments_common::worker(db, i, n, file, &["--wait", "60"])
}

/// One interval line's figures: its second, threads, and per-second events, reads, writes,
/// other, errors, reconnects.
#[derive(Debug)]
struct Line {
    second: u64,
    threads: u64,
    figures: [f64; 6],
}

/// The `[ Ns ] thds: ...` lines of `out`.
fn lines(out: &str) -> Vec<Line> {
    out.lines()
        .filter(|l| l.starts_with("[ "))
        .map(|l| {
            let num = |after: &str| -> f64 {
                let rest = l
                    .split(after)
                    .nth(1)
                    .unwrap_or_else(|| panic!("{after} in {l}"));
                let v: String = rest
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                v.parse().unwrap_or_else(|_| panic!("{after} in {l}"))
            };
            let rwo: Vec<f64> = (l.split("(r/w/o: ").nth(1).unwrap().split(')').next())
                .unwrap()
                .split('/')
                .map(|v| v.parse().unwrap())
                .collect();
            Line {
                second: num("[ ") as u64,
                threads: num("thds:") as u64,
                figures: [
                    num("tps:"),
                    rwo[0],
                    rwo[1],
                    rwo[2],
                    num("err/s:"),
                    num("reconn/s:"),
                ],
            }
        })
        .collect()
}

/// `sql`'s one number.
fn count(db: &TestDb, sql: &str) -> u64 {
    db.psql(sql).trim().parse().unwrap()
}

#[test]
fn the_coordinator_prints_sysbenchs_interval_lines_of_the_merged_seconds() {
    let _turn = common::alone();
    let (db, one_db) = (fresh_db("lua_int_merged"), fresh_db("lua_int_one"));
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path());
    prepare(&db, &file);
    prepare(&one_db, &file);
    let json = dir.path().join("run.json");
    let json_arg = format!("--json={}", json.display());
    let opts = [
        "--threads=4",
        "--time=3",
        "--report-interval=1",
        "--rand-seed=7",
    ];
    let mut args = opts.to_vec();
    args.push(&json_arg);
    let coord = coordinator(&db, &file, 2, &args);
    let ws: Vec<CmdOutput> = (0..2)
        .map(|i| worker(&db, i, 2, &file))
        .collect::<Vec<_>>()
        .into_iter()
        .map(wait)
        .collect();
    let c = wait(coord);
    for (i, w) in ws.iter().enumerate() {
        assert_eq!(w.code, Some(0), "worker {i}:\n{}\n{}", w.stdout, w.stderr);
    }
    assert_eq!(c.code, Some(0), "coordinator:\n{}\n{}", c.stdout, c.stderr);

    // the shape: one host running every thread prints the same text, digits aside
    let f = file.to_str().unwrap();
    let mut single = vec![f];
    single.extend(opts);
    single.push("run");
    let one_json = dir.path().join("one.json");
    let one_arg = format!("--json={}", one_json.display());
    let mut with_json = single.clone();
    with_json.insert(1, &one_arg);
    let one = pgrig_testkit::run(command(link(), &one_db, &with_json));
    assert_eq!(one.code, Some(0), "{}", one.stdout);
    let merged = lines(&c.stdout);
    let seconds: Vec<u64> = merged.iter().map(|l| l.second).collect();
    assert_eq!(seconds, [1, 2, 3], "{}", c.stdout);
    assert_eq!(
        normalise(&c.stdout),
        normalise(&one.stdout),
        "coordinator:\n{}\none host:\n{}",
        c.stdout,
        one.stdout
    );
    assert!(merged.iter().all(|l| l.threads == 4), "{merged:?}");

    // the figures: the merged document's series, second by second
    let doc: RunDocument = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc.series.len(), 3, "{:?}", doc.series);
    for (l, s) in merged.iter().zip(&doc.series) {
        let want = [
            s.tps,
            s.queries_read.unwrap(),
            s.queries_write.unwrap(),
            s.queries_other.unwrap(),
            s.retries,
            s.reconnects.unwrap(),
        ];
        assert_eq!(l.figures, want.map(|v| v as f64), "second {}", l.second);
    }
    // one host's lines are its series' seconds alike
    let one_doc: RunDocument =
        serde_json::from_str(&std::fs::read_to_string(&one_json).unwrap()).unwrap();
    for (l, s) in lines(&one.stdout).iter().zip(&one_doc.series) {
        let want = [s.tps, s.queries_read.unwrap(), s.queries_write.unwrap()];
        assert_eq!(
            l.figures[..3],
            want.map(|v| v as f64),
            "one host, second {}",
            l.second
        );
    }
    let sum = |k: usize| merged.iter().map(|l| l.figures[k]).sum::<f64>() as u64;
    assert!(sum(0) > 0);

    // and the server: every event is a row, counted in a line or in a segment's last,
    // partial second (after --time, not part of the series)
    let partial = |col: &str| {
        count(
            &db,
            &format!("SELECT coalesce(sum({col}), 0) FROM pgrig_fleet.intervals WHERE threads_running = 0"),
        )
    };
    let events = count(&db, "SELECT count(*) FROM seen WHERE n >= 0");
    let rows = count(&db, "SELECT count(*) FROM seen");
    assert_eq!(events, sum(0) + partial("ok"), "events");
    assert_eq!(rows, sum(2) + partial("queries_write"), "writes: rows");
    assert_eq!(
        events,
        sum(1) + partial("queries_read"),
        "reads: one per event"
    );
    assert_eq!(
        2 * events,
        sum(3) + partial("queries_other"),
        "BEGIN, COMMIT"
    );
    // (the events finished after --time: in flight, or while the watcher was descheduled)
    assert!(
        partial("ok") * 4 <= sum(0) / 3,
        "the partial seconds hold less than a quarter of a second's events: {} of {}",
        partial("ok"),
        sum(0)
    );
    assert_eq!(doc.transactions.ok, events);

    // sysbench 1.0.20 itself prints lines of this shape (the oracle; missing, the test fails)
    let real = pgrig_testkit::run(command(&oracle(), &one_db, &single));
    let shape = |t: &str| -> Vec<String> {
        (normalise(t).lines())
            .filter(|l| l.starts_with("[ "))
            .map(str::to_string)
            .collect()
    };
    let (ours, theirs) = (shape(&c.stdout), shape(&real.stdout));
    assert!(!theirs.is_empty(), "{}", real.stdout);
    assert_eq!(ours[0], theirs[0], "{}", real.stdout);
}

#[test]
fn below_verbosity_3_the_coordinator_prints_no_interval_lines() {
    let db = fresh_db("lua_int_quiet");
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path());
    prepare(&db, &file);
    let args = [
        "--threads=2",
        "--time=2",
        "--report-interval=1",
        "--verbosity=2",
    ];
    let coord = coordinator(&db, &file, 2, &args);
    let ws: Vec<Child> = (0..2).map(|i| worker(&db, i, 2, &file)).collect();
    for w in ws.into_iter().map(wait) {
        assert_eq!(w.code, Some(0), "{}", w.stderr);
    }
    let c = wait(coord);
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    assert!(!c.stdout.contains("[ 1s ]"), "{}", c.stdout);
    assert!(!c.stdout.contains("Threads started!"), "{}", c.stdout);
}

/// Polls for a run newer than run `after`; its id.
fn run_id(db: &TestDb, after: i64) -> i64 {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let v = db
            .try_psql("SELECT max(id) FROM pgrig_fleet.runs")
            .unwrap_or_default();
        if let Some(id) = v.trim().parse().ok().filter(|id| *id > after) {
            return id;
        }
        assert!(std::time::Instant::now() < until, "no run");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn a_forged_interval_row_is_refused_naming_the_row() {
    let db = fresh_db("lua_int_forged");
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path());
    let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
    h.record(1000).unwrap();
    let hist = sql_lit(&pgrig_fleet::codec::histogram_text(&h));
    let mut last = 0;
    // (the Lua columns, what the refusal says)
    for (lua, says) in [
        (
            "9007199254740993, 1, 0, 0, 1",
            "queries_read is out of range: 9007199254740993",
        ),
        ("1, 1, 2, 0, 2", "2 threads running, but the segment has 1"),
        (
            "NULL, NULL, NULL, NULL, NULL",
            "it holds no queries by class",
        ),
        (
            "1, -1, 2, 0, 1",
            "unexpected queries_write in the coordination schema",
        ),
    ] {
        let coord = coordinator(
            &db,
            &file,
            1,
            &[
                "--threads=1",
                "--time=5",
                "--report-interval=1",
                "--segments-wait=30",
            ],
        );
        let run = run_id(&db, last);
        last = run;
        let id = db.psql(&format!(
            "INSERT INTO pgrig_fleet.workers (run_id, segment, host, cores, version, \
             clock_offset_ms, clock_error_ms) VALUES ({run}, 0, 'forger', 1, 'x', 0, 0); \
             INSERT INTO pgrig_fleet.intervals (run_id, segment, seq, ok, failed, skipped, \
             retried, retries, latency_sum_us, cpu_s, histogram, queries_read, queries_write, \
             queries_other, reconnects, threads_running) VALUES ({run}, 0, 1, 1, 0, 0, 0, 0, \
             1000, 0.1, {hist}, {lua}) RETURNING id"
        ));
        let id = id.trim().lines().last().unwrap().to_string();
        let c = wait(coord);
        assert_eq!(c.code, Some(1), "{lua}: {}\n{}", c.stdout, c.stderr);
        assert!(
            c.stderr
                .contains(&format!("run {run}: refused interval row {id}")),
            "{lua}: {}",
            c.stderr
        );
        assert!(c.stderr.contains(says), "{lua}: {}", c.stderr);
        assert!(!c.stdout.contains("[ 1s ]"), "no line: {}", c.stdout);
        assert!(
            !c.stdout.contains("transactions:"),
            "no report: {}",
            c.stdout
        );
        let state = db.psql(&format!(
            "SELECT state FROM pgrig_fleet.runs WHERE id = {run}"
        ));
        assert_eq!(state.trim(), "failed", "{lua}");
    }
}

#[test]
fn each_line_is_printed_while_the_run_goes_on_and_sums_its_seconds() {
    use std::io::BufRead;
    let _turn = common::alone();
    let db = fresh_db("lua_int_live");
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path());
    prepare(&db, &file);
    let json = dir.path().join("run.json");
    let json_arg = format!("--json={}", json.display());
    let args = [
        "--threads=2",
        "--time=6",
        "--report-interval=2",
        "--rate=200",
        &json_arg,
    ];
    let mut coord = coordinator(&db, &file, 2, &args);
    let stdout = coord.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send((std::time::Instant::now(), line));
        }
    });
    let ws: Vec<Child> = (0..2).map(|i| worker(&db, i, 2, &file)).collect();
    let ws: Vec<CmdOutput> = ws.into_iter().map(wait).collect();
    let ended = std::time::Instant::now();
    for w in &ws {
        assert_eq!(w.code, Some(0), "{}", w.stderr);
    }
    let c = wait(coord);
    reader.join().unwrap();
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    let got: Vec<(std::time::Instant, String)> = rx.try_iter().collect();
    let text: String = got.iter().map(|(_, l)| format!("{l}\n")).collect();
    let first = got
        .iter()
        .find(|(_, l)| l.starts_with("[ 2s ]"))
        .unwrap_or_else(|| panic!("no [ 2s ] line:\n{text}"));
    // the run went on for 4 s more after its second 2
    assert!(
        ended.duration_since(first.0) > std::time::Duration::from_secs(2),
        "the [ 2s ] line came {:?} before the workers ended:\n{text}",
        ended.duration_since(first.0)
    );
    let merged = lines(&text);
    let seconds: Vec<u64> = merged.iter().map(|l| l.second).collect();
    assert_eq!(seconds, [2, 4, 6], "{text}");
    let doc: RunDocument = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for l in &merged {
        let span = &doc.series[l.second as usize - 2..l.second as usize];
        let events: u64 = span.iter().map(|s| s.tps).sum();
        let writes: u64 = span.iter().map(|s| s.queries_write.unwrap()).sum();
        assert_eq!(l.figures[0] * 2.0, events as f64, "second {}", l.second);
        assert_eq!(l.figures[2] * 2.0, writes as f64, "second {}", l.second);
    }
}

#[test]
fn after_a_segment_goes_silent_the_lines_go_on_with_the_other_segments_threads() {
    let _turn = common::alone();
    let db = fresh_db("lua_int_killed");
    let dir = tempfile::tempdir().unwrap();
    let file = script(dir.path());
    prepare(&db, &file);
    let args = [
        "--threads=4",
        "--time=8",
        "--rate=100",
        "--report-interval=1",
    ];
    let coord = coordinator(&db, &file, 2, &args);
    let w0 = worker(&db, 0, 2, &file);
    let mut w1 = worker(&db, 1, 2, &file);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let reported = "SELECT count(*) FROM pgrig_fleet.intervals WHERE segment = 1";
    while (db.try_psql(reported).ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_none_or(|n| n < 2)
    {
        assert!(
            std::time::Instant::now() < until,
            "segment 1 never reported"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    w1.kill().unwrap();
    let _ = w1.wait();
    let (c, w0) = (wait(coord), wait(w0));
    assert_eq!(w0.code, Some(0), "{}", w0.stderr);
    assert_eq!(c.code, Some(2), "{}\n{}", c.stdout, c.stderr);
    let merged = lines(&c.stdout);
    let seconds: Vec<u64> = merged.iter().map(|l| l.second).collect();
    assert_eq!(seconds, (1..=8).collect::<Vec<u64>>(), "{}", c.stdout);
    let threads: Vec<u64> = merged.iter().map(|l| l.threads).collect();
    assert_eq!(threads[0], 4, "{}", c.stdout);
    assert_eq!(threads[7], 2, "segment 0's threads only: {}", c.stdout);
    assert!(
        threads.windows(2).all(|w| w[1] <= w[0]),
        "{threads:?}\n{}",
        c.stdout
    );
    let incomplete = c.stdout.find("INCOMPLETE RUN").expect("labelled");
    assert!(
        c.stdout.find("[ 8s ]").unwrap() < incomplete,
        "{}",
        c.stdout
    );
}
