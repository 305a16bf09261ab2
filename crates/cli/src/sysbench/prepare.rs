//! `prepare` and `cleanup`: sysbench's lines (`Creating table 'sbtest1'...`, `Inserting N
//! records into 'sbtest1'`, `Creating a secondary index on 'sbtest1'...`, `Dropping table
//! 'sbtest1'...`) around pgrig's loader (parallel COPY, keys after the load), with a progress
//! bar and ETA per table on a terminal only. The tables are created here, one statement at a
//! time, so a table that exists fails as sysbench fails: its driver's FATAL lines, status 1.

use std::io::IsTerminal;

use pgrig_engine::sink::{InitProgress, Level, NoDisplay, PhaseDisplay, Progress, Sink};
use pgrig_engine::StopHandle;
use pgrig_init::generic::{self, LoadPlan};
use pgrig_workloads::Native;

use super::db::{exec_failed, Db};
use super::general::{Exit, General, Pg, Phase};

/// The table a `CREATE TABLE` / `DROP TABLE` / `CREATE INDEX ... ON` statement names.
pub fn table_of(sql: &str) -> Option<&str> {
    let words: Vec<&str> = sql.split_whitespace().collect();
    let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
    let after = |i: usize| {
        let mut j = i;
        if upper.get(j).map(String::as_str) == Some("IF") {
            j += if upper.get(j + 1).map(String::as_str) == Some("NOT") {
                3
            } else {
                2
            };
        }
        words.get(j).map(|w| w.split('(').next().unwrap_or(w))
    };
    match (upper.first()?.as_str(), upper.get(1)?.as_str()) {
        ("CREATE", "TABLE") | ("DROP", "TABLE") => after(2),
        ("CREATE", "INDEX") | ("CREATE", "UNIQUE") => {
            let on = upper.iter().position(|w| w == "ON")?;
            after(on + 1)
        }
        _ => None,
    }
    .filter(|t| !t.is_empty())
}

/// `prepare`; `parallel`: sysbench runs it on its worker threads (the oltp_common tests).
pub fn prepare(pg: &Pg, general: &General, native: Native, parallel: bool) -> Result<i32, Exit> {
    let LoadPlan {
        drop: drops,
        create,
        sources,
        keys,
        after,
    } = native.load;
    let threads = if parallel { general.threads } else { 1 };
    if threads > 1 && general.notices {
        // sysbench prepares on its worker threads
        print!("Initializing worker threads...\n\n");
    }
    let mut db = Db::connect(pg, Phase::Prepare { threads })?;
    for sql in drops.iter().chain(&create) {
        if let Some(t) = table_of(sql).filter(|_| create.contains(sql)) {
            println!("Creating table '{t}'...");
        }
        db.exec(sql).map_err(|e| exec_failed(sql, &e))?;
    }
    drop(db);
    for s in &sources {
        println!("Inserting {} records into '{}'", s.rows(), s.table());
    }
    let secondary: Vec<String> = keys
        .iter()
        .filter(|k| {
            k.trim_start()
                .to_ascii_uppercase()
                .starts_with("CREATE INDEX")
        })
        .filter_map(|k| table_of(k).map(str::to_string))
        .collect();
    let rest = LoadPlan {
        sources,
        keys,
        after,
        ..LoadPlan::default()
    };
    // sysbench prepares with --threads connections; pgrig's default fits the cores.
    let jobs = if general.threads > 1 {
        general.threads as usize
    } else {
        0
    };
    let stop = StopHandle::default();
    crate::interrupt::on_interrupt(stop.clone());
    if let Err(e) = generic::load(&pg.conn_args(), &rest, jobs, &LoadSink, &stop) {
        let text: Vec<String> = e.lines.iter().map(|(_, l)| l.clone()).collect();
        return Err(Exit::fatal(text.join("\nFATAL: ")));
    }
    for t in secondary {
        println!("Creating a secondary index on '{t}'...");
    }
    Ok(0)
}

/// `cleanup`.
pub fn cleanup(pg: &Pg, native: &Native) -> Result<i32, Exit> {
    let mut db = Db::connect(pg, Phase::Cleanup)?;
    for sql in &native.cleanup {
        if let Some(t) = table_of(sql) {
            println!("Dropping table '{t}'...");
        }
        db.exec(sql).map_err(|e| exec_failed(sql, &e))?;
    }
    Ok(0)
}

/// The loader's messages as sysbench's log lines; a bar per table on a terminal.
struct LoadSink;

impl Sink for LoadSink {
    fn message(&self, level: Level, text: &str) {
        match level {
            Level::Error => println!("FATAL: {text}"),
            Level::Warning => println!("WARNING: {text}"),
            _ => {}
        }
    }
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &Progress) {}
    fn init_progress(&self) -> InitProgress {
        InitProgress::Displays
    }
    fn phase(&self, label: &str, rows: Option<u64>) -> Box<dyn PhaseDisplay> {
        if rows.is_some() && std::io::stderr().is_terminal() {
            Box::new(crate::sink::Bar::new(label, rows))
        } else {
            Box::new(NoDisplay)
        }
    }
}
