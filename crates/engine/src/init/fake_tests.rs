//! Step sequencing against a recording fake connection: exact SQL order, messages, FREEZE
//! decisions, error texts, and that parallel loading sends the same rows as serial loading.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Mutex;

use super::db::{Connector, DbFailure, DbResult, InitDb};
use super::progress::TtyMode;
use super::steps::{run_steps, StepCtx};
use crate::config::{InitConfig, PartitionMethod};
use crate::error::EngineError;
use crate::sink::{Level, Progress, Sink};

#[derive(Default)]
struct World {
    log: Vec<String>,
    copied: Vec<u8>,
    fail_on: Option<String>,
    partitioned: bool,
    version: i32,
    connections: usize,
    /// the table has pgbench's columns (so binary COPY is used when allowed)
    binary: bool,
}

#[derive(Clone)]
struct Fake {
    w: Rc<RefCell<World>>,
    id: usize,
    notices: Vec<String>,
    /// binary COPY data of the running COPY, decoded into text lines at its end
    bin: Option<Vec<u8>>,
}

/// Decodes pgbench_accounts binary COPY data into the text lines pgbench would send.
fn decode_binary(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut p = 19;
    let int = |b: &[u8]| -> i64 {
        match b.len() {
            4 => i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            8 => i64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            _ => -1,
        }
    };
    while p + 2 <= data.len() {
        let n = i16::from_be_bytes([data[p], data[p + 1]]);
        p += 2;
        if n < 0 {
            break;
        }
        let mut fields = Vec::new();
        for _ in 0..n {
            let len = i32::from_be_bytes([data[p], data[p + 1], data[p + 2], data[p + 3]]) as usize;
            p += 4;
            fields.push(data[p..p + len].to_vec());
            p += len;
        }
        let line = format!(
            "{}\t{}\t{}\t{}\n",
            int(&fields[0]),
            int(&fields[1]),
            int(&fields[2]),
            String::from_utf8_lossy(&fields[3])
        );
        out.extend_from_slice(line.as_bytes());
    }
    out
}

impl InitDb for Fake {
    fn server_version_num(&self) -> i32 {
        self.w.borrow().version
    }
    async fn execute(&mut self, sql: &str) -> DbResult<()> {
        let mut w = self.w.borrow_mut();
        w.log.push(format!("{}: {sql}", self.id));
        if w.fail_on.as_deref() == Some(sql) {
            return Err(DbFailure::new("ERROR:  boom\n"));
        }
        if sql.starts_with("drop table if exists") {
            self.notices
                .push("NOTICE:  table \"pgbench_accounts\" does not exist, skipping".into());
        }
        Ok(())
    }
    async fn query_value(&mut self, sql: &str) -> DbResult<Option<String>> {
        let w = self.w.borrow();
        if sql.contains("relkind from") {
            let p = w.partitioned && sql.contains("'pgbench_accounts'");
            return Ok(Some(if p { "p" } else { "r" }.into()));
        }
        if sql.contains("format_type") {
            return Ok(w
                .binary
                .then(|| "integer,integer,integer,character".to_string()));
        }
        if sql.contains("maintenance_work_mem") {
            return Ok(Some("65536".into()));
        }
        if sql.contains("string_agg") {
            return Ok(Some(
                "pgbench_accounts_1|r|FOR VALUES FROM (MINVALUE) TO (100001)\n\
                 pgbench_accounts_2|r|FOR VALUES FROM (100001) TO (MAXVALUE)"
                    .into(),
            ));
        }
        Ok(None)
    }
    async fn copy_start(&mut self, sql: &str) -> DbResult<()> {
        self.w.borrow_mut().log.push(format!("{}: {sql}", self.id));
        self.bin = sql.contains("format binary").then(Vec::new);
        Ok(())
    }
    async fn copy_data(&mut self, data: &[u8]) -> DbResult<()> {
        match &mut self.bin {
            Some(b) => b.extend_from_slice(data),
            None => self.w.borrow_mut().copied.extend_from_slice(data),
        }
        tokio::task::yield_now().await;
        Ok(())
    }
    async fn copy_end(&mut self) -> DbResult<()> {
        if let Some(b) = self.bin.take() {
            let lines = decode_binary(&b);
            self.w.borrow_mut().copied.extend_from_slice(&lines);
        }
        Ok(())
    }
    fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }
}

impl Connector for Fake {
    type Db = Fake;
    async fn connect(&self) -> DbResult<Fake> {
        let id = {
            let mut w = self.w.borrow_mut();
            w.connections += 1;
            w.connections
        };
        Ok(Fake {
            w: self.w.clone(),
            id,
            notices: Vec::new(),
            bin: None,
        })
    }
}

#[derive(Default)]
struct Capture(Mutex<String>);

impl Sink for Capture {
    fn message(&self, level: Level, text: &str) {
        if let Ok(mut s) = self.0.lock() {
            match level {
                Level::Raw => s.push_str(text),
                l => s.push_str(&format!("{l:?}: {text}\n")),
            }
        }
    }
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &Progress) {}
}

struct Outcome {
    result: Result<String, EngineError>,
    log: Vec<String>,
    stderr: String,
    copied: Vec<u8>,
}

fn run(cfg: &InitConfig, parallelism: usize, setup: impl FnOnce(&mut World)) -> Outcome {
    let w = Rc::new(RefCell::new(World {
        version: 150018,
        ..Default::default()
    }));
    setup(&mut w.borrow_mut());
    let sink = Capture::default();
    let ctx = StepCtx {
        cfg,
        sink: &sink,
        tty: TtyMode::Lines(false),
        parallelism,
    };
    let connector = Fake {
        w: w.clone(),
        id: 0,
        notices: Vec::new(),
        bin: None,
    };
    let mut db = connector.clone();
    let rt = tokio::runtime::Builder::new_current_thread().build();
    let result = match rt {
        Ok(rt) => rt
            .block_on(run_steps(&ctx, &connector, &mut db))
            .map(|r| r.done),
        Err(e) => Err(EngineError::fatal(e.to_string())),
    };
    let w = w.borrow();
    let stderr = sink.0.lock().map(|s| s.clone()).unwrap_or_default();
    Outcome {
        result,
        log: w.log.clone(),
        stderr,
        copied: w.copied.clone(),
    }
}

fn cfg(steps: &str) -> InitConfig {
    InitConfig {
        steps: steps.into(),
        ..Default::default()
    }
}

fn sorted_lines(b: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = String::from_utf8_lossy(b)
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

#[test]
fn default_steps_send_pgbench_sql_in_order() {
    let o = run(&cfg("dtgvp"), 1, |_| {});
    let log: Vec<&str> = o.log.iter().map(|s| s.trim_start_matches("0: ")).collect();
    assert_eq!(
        log[0],
        "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers"
    );
    assert_eq!(log[1], "create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22))");
    assert_eq!(log[5], "begin");
    assert_eq!(
        log[6],
        "truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers"
    );
    // pgbench 15 inserts branches and tellers without FREEZE
    assert_eq!(log[7], "copy pgbench_branches from stdin");
    assert_eq!(log[8], "copy pgbench_tellers from stdin");
    assert_eq!(log[9], "copy pgbench_accounts from stdin with (freeze on)");
    assert_eq!(log[10], "commit");
    assert_eq!(log[11], "vacuum analyze pgbench_branches");
    assert_eq!(
        log[15],
        "alter table pgbench_branches add primary key (bid)"
    );
    assert_eq!(log.len(), 18);
    assert_eq!(sorted_lines(&o.copied).len(), 1 + 10 + 100_000);
}

#[test]
fn messages_and_done_line_follow_pgbench() {
    let o = run(&cfg("dtgvpf"), 1, |_| {});
    let done = o.result.unwrap_or_default();
    assert!(done.starts_with("done in "), "{done}");
    for op in [
        "drop tables",
        "create tables",
        "client-side generate",
        "vacuum",
        "primary keys",
        "foreign keys",
    ] {
        assert!(done.contains(&format!("{op} ")), "{done}");
    }
    assert!(done.ends_with(" s)."), "{done}");
    let expected = "dropping old tables...\n\
                    NOTICE:  table \"pgbench_accounts\" does not exist, skipping\n\
                    creating tables...\n\
                    generating data (client-side)...\n\
                    100000 of 100000 tuples (100%) of pgbench_accounts done (elapsed ";
    assert!(o.stderr.starts_with(expected), "{}", o.stderr);
    assert!(
        o.stderr
            .ends_with("vacuuming...\ncreating primary keys...\ncreating foreign keys...\n"),
        "{}",
        o.stderr
    );
}

#[test]
fn query_failure_reports_query_and_stops() {
    let o = run(&cfg("dtgvp"), 1, |w| {
        w.fail_on = Some("vacuum analyze pgbench_tellers".into())
    });
    let e = o
        .result
        .err()
        .unwrap_or_else(|| EngineError::fatal("no error"));
    assert_eq!(e.exit_code, 1);
    assert_eq!(
        e.lines,
        vec![
            (Level::Error, "query failed: ERROR:  boom".to_string()),
            (
                Level::Detail,
                "Query was: vacuum analyze pgbench_tellers".to_string()
            )
        ]
    );
    assert!(!o.log.iter().any(|l| l.contains("primary key")));
}

#[test]
fn old_servers_and_partitioned_tables_copy_without_freeze() {
    let o = run(&cfg("g"), 1, |w| w.version = 130000);
    assert!(o.log.iter().all(|l| !l.contains("freeze")), "{:?}", o.log);
    let o = run(&cfg("g"), 1, |w| w.partitioned = true);
    assert!(
        o.log
            .contains(&"0: copy pgbench_accounts from stdin".to_string()),
        "{:?}",
        o.log
    );
    assert!(o
        .log
        .contains(&"0: copy pgbench_tellers from stdin".to_string()));
}

#[test]
fn server_side_generation_uses_generate_series() {
    let o = run(
        &InitConfig {
            scale: 3,
            ..cfg("G")
        },
        1,
        |_| {},
    );
    assert_eq!(o.log[2], "0: insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, 3) as bid");
    assert!(o.stderr.starts_with("generating data (server-side)...\n"));
}

#[test]
fn partitions_are_announced_after_the_tables() {
    let c = InitConfig {
        partitions: 3,
        partition_method: Some(PartitionMethod::Hash),
        ..cfg("t")
    };
    let o = run(&c, 1, |_| {});
    assert_eq!(o.stderr, "creating tables...\ncreating 3 partitions...\n");
    assert_eq!(
        o.log[6],
        "0: create table pgbench_accounts_3\n  partition of pgbench_accounts\n  for values with (modulus 3, remainder 2) with (fillfactor=100)"
    );
}

#[test]
fn ordinary_table_on_14_plus_stays_one_frozen_copy_in_binary() {
    let c = InitConfig {
        scale: 3,
        ..cfg("g")
    };
    let serial = run(&c, 1, |_| {});
    let fast = run(&c, 4, |w| w.binary = true);
    assert_eq!(sorted_lines(&serial.copied), sorted_lines(&fast.copied));
    assert!(
        fast.log.contains(
            &"0: copy pgbench_accounts from stdin with (freeze on, format binary)".to_string()
        ),
        "{:?}",
        fast.log
    );
    assert_eq!(fast.log.iter().filter(|l| l.contains("copy")).count(), 3);
    assert!(fast
        .stderr
        .contains("300000 of 300000 tuples (100%) of pgbench_accounts done"));
}

#[test]
fn parallel_load_of_ordinary_table_without_freeze_sends_the_same_rows() {
    let c = InitConfig {
        scale: 3,
        ..cfg("g")
    };
    let serial = run(&c, 1, |w| w.version = 130000);
    let par = run(&c, 4, |w| {
        w.version = 130000;
        w.binary = true;
    });
    assert_eq!(sorted_lines(&serial.copied), sorted_lines(&par.copied));
    assert!(
        par.log
            .iter()
            .any(|l| l.starts_with("4: copy pgbench_accounts from stdin with (format binary)")),
        "{:?}",
        par.log
    );
    assert!(par
        .stderr
        .contains("300000 of 300000 tuples (100%) of pgbench_accounts done"));
    let commit = par.log.iter().position(|l| l == "0: commit");
    let first_copy = par.log.iter().position(|l| l.starts_with("1: copy"));
    assert!(
        commit < first_copy,
        "truncation committed before the other connections copy"
    );
}

#[test]
fn parallel_load_of_range_partitions_copies_into_each_partition() {
    let c = InitConfig {
        scale: 2,
        partitions: 2,
        ..cfg("g")
    };
    let serial = run(&c, 1, |w| w.partitioned = true);
    let par = run(&c, 2, |w| w.partitioned = true);
    assert_eq!(sorted_lines(&serial.copied), sorted_lines(&par.copied));
    for p in [1, 2] {
        assert!(
            par.log
                .iter()
                .any(|l| l.ends_with(&format!(": copy \"pgbench_accounts_{p}\" from stdin"))),
            "{:?}",
            par.log
        );
    }
    assert!(!par.log.iter().any(|l| l.contains("freeze")));
}

#[test]
fn concurrent_primary_keys_use_separate_connections() {
    let o = run(&cfg("p"), 3, |_| {});
    let keys: Vec<&String> = o.log.iter().filter(|l| l.contains("primary key")).collect();
    assert_eq!(keys.len(), 3, "{:?}", o.log);
    assert!(
        o.log
            .contains(&"0: alter table pgbench_branches add primary key (bid)".to_string()),
        "{:?}",
        o.log
    );
    assert_eq!(keys.iter().filter(|l| !l.starts_with("0: ")).count(), 2);
    assert!(o
        .log
        .iter()
        .any(|l| l == "0: set maintenance_work_mem = '65536kB'"));
}

#[test]
fn partition_keys_are_built_before_the_parent_key() {
    let c = InitConfig {
        scale: 2,
        partitions: 2,
        ..cfg("p")
    };
    let o = run(&c, 2, |w| w.partitioned = true);
    let parent = o
        .log
        .iter()
        .position(|l| l == "0: alter table pgbench_accounts add primary key (aid)");
    let part = o
        .log
        .iter()
        .position(|l| l.ends_with(": alter table \"pgbench_accounts_2\" add primary key (aid)"));
    assert!(part.is_some() && parent > part, "{:?}", o.log);
}

#[test]
fn exact_mode_sends_only_pgbench_statements() {
    let o = run(&cfg("dtgvpf"), 1, |w| w.binary = true);
    assert!(!o
        .log
        .iter()
        .any(|l| l.contains("binary") || l.contains("set ")));
}
