//! Loading a dataset's CSV files ([`crate::csv_spec::CsvSet`]): pgrig reads each file and sends
//! its bytes through `COPY table FROM STDIN (FORMAT csv, ...)` on a connection of its own,
//! several tables at once (largest first), with a progress display per file when the sink draws
//! them (a bar on a terminal). The server never opens a file. A failing COPY is reported as
//! `file:line` (the line the server names, [`crate::csv_lines`]), and the other loaders stop
//! after their current file.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use pgrig_engine::sink::{InitProgress, Level, PhaseDisplay, Sink};
use pgrig_engine::StopHandle;

use crate::csv_lines::line_in_context;
use crate::csv_spec::{copy_statement, CsvFile, CsvSet};
use crate::db::Db;
use crate::error::StudyError;

/// The rows loaded per table, in the order the loads finished.
type Loaded = Vec<(String, u64)>;

/// Bytes read from a file and sent at a time.
const CHUNK: usize = 256 * 1024;

/// Loads every file of `set` into its table on the server of `conninfo`; the rows loaded per
/// table, in the set's order. The first error is returned once every loader has stopped.
pub fn load(
    set: &CsvSet,
    conninfo: &str,
    sink: &dyn Sink,
    stop: &StopHandle,
) -> Result<Loaded, StudyError> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let jobs = match set.jobs {
        0 => cores.clamp(2, 4),
        n => n,
    }
    .min(set.files.len())
    .max(1);
    let queue = Mutex::new(set.files.iter().collect::<VecDeque<_>>());
    let failed = AtomicBool::new(false);
    let outcome: Mutex<(Loaded, Option<StudyError>)> = Mutex::new((Vec::new(), None));
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                let r = worker(&queue, &failed, conninfo, sink, stop, |table, rows| {
                    if let Ok(mut o) = outcome.lock() {
                        o.0.push((table.to_string(), rows));
                    }
                });
                if let Err(e) = r {
                    failed.store(true, Ordering::Relaxed);
                    if let Ok(mut o) = outcome.lock() {
                        o.1.get_or_insert(e);
                    }
                }
            });
        }
    });
    let (mut loaded, error) = outcome
        .into_inner()
        .map_err(|_| StudyError::Other("a CSV loader panicked".into()))?;
    if let Some(e) = error {
        return Err(e);
    }
    let order = |t: &str| set.files.iter().position(|f| f.table == t);
    loaded.sort_by_key(|(t, _)| order(t));
    Ok(loaded)
}

/// One connection taking files off the queue until it is empty or a loader failed.
fn worker(
    queue: &Mutex<VecDeque<&CsvFile>>,
    failed: &AtomicBool,
    conninfo: &str,
    sink: &dyn Sink,
    stop: &StopHandle,
    mut done: impl FnMut(&str, u64),
) -> Result<(), StudyError> {
    let mut db = Db::connect(conninfo, "the target")?;
    loop {
        if failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        if stop.requested() {
            return Err(StudyError::Interrupted);
        }
        let next = queue.lock().ok().and_then(|mut q| q.pop_front());
        let Some(file) = next else { return Ok(()) };
        let display = match sink.init_progress() {
            InitProgress::Displays => {
                Some(sink.phase(&format!("{} (bytes)", file.table), Some(file.bytes)))
            }
            InitProgress::Lines { .. } => None,
        };
        let rows = copy_file(&mut db, file, display.as_deref(), stop);
        if let Some(d) = &display {
            d.finish();
        }
        let rows = rows?;
        sink.message(
            Level::Info,
            &format!("loaded {rows} rows into {} from {}", file.table, file.shown),
        );
        done(&file.table, rows);
    }
}

/// Sends one file through COPY; the rows the server copied.
fn copy_file(
    db: &mut Db,
    file: &CsvFile,
    display: Option<&dyn PhaseDisplay>,
    stop: &StopHandle,
) -> Result<u64, StudyError> {
    let place = || file.shown.clone();
    let mut reader = std::fs::File::open(&file.path).map_err(|e| StudyError::Data {
        place: place(),
        message: format!("could not open: {}", pgrig_wire::strerror(&e)),
    })?;
    let sql = copy_statement(file);
    let (rt, conn) = db
        .parts()
        .ok_or_else(|| StudyError::Other("connection closed".into()))?;
    let result: Result<Result<u64, pgrig_wire::Error>, StudyError> = rt.block_on(async {
        let mut copy = match conn.copy_in_start(&sql).await {
            Ok(c) => c,
            Err(e) => return Ok(Err(e)),
        };
        let mut buf = vec![0u8; CHUNK];
        let mut sent = 0u64;
        loop {
            let n = match reader.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = copy.fail("pgrig could not read the file").await;
                    return Err(StudyError::Data {
                        place: place(),
                        message: format!("could not read: {}", pgrig_wire::strerror(&e)),
                    });
                }
            };
            if n == 0 {
                break;
            }
            if stop.requested() {
                let _ = copy.fail("canceled by Ctrl-C").await;
                return Err(StudyError::Interrupted);
            }
            if let Err(e) = copy.write(&buf[..n]).await {
                return Ok(Err(e));
            }
            sent += n as u64;
            if let Some(d) = display {
                d.set_position(sent);
            }
        }
        Ok(copy.finish().await)
    });
    result?.map_err(|e| copy_error(file, &e))
}

/// The server's COPY error placed in the file: `file:line` when it names a record.
fn copy_error(file: &CsvFile, e: &pgrig_wire::Error) -> StudyError {
    let Some(db) = e.db_error() else {
        return StudyError::Data {
            place: file.shown.clone(),
            message: e.to_string(),
        };
    };
    let mut message = db.message.clone();
    if let Some(d) = &db.detail {
        message.push_str(&format!(" ({d})"));
    }
    if db.code == "42P01" {
        message = format!(
            "there is no table \"{}\" to load this file into (create it in the dataset's schema file): {message}",
            file.table
        );
    }
    let line = db.where_.as_deref().and_then(line_in_context);
    if let Some(w) = &db.where_ {
        message.push_str(&format!("; {w}"));
    }
    let place = match line {
        Some(l) => format!("{}:{l}", file.shown),
        None => file.shown.clone(),
    };
    // the server quotes the file's bytes back: no control characters reach the terminal
    let message = message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    StudyError::Data { place, message }
}
