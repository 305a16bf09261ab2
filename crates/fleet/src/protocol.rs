//! What the coordinator and the workers say to each other through the schema: the coordinator
//! creates a run and opens it (`runs.state` `waiting`), workers find it and register with their
//! host, cores, version and clock offset, the coordinator sets the shared start instant once all
//! have registered (`running`, `start_at`), workers write one row per interval and a heartbeat
//! in one transaction and read the run's state back (`stopping`: Ctrl-C on the coordinator),
//! and hand in their final statistics (`workers.result`).

use crate::db::{lit, parse, Db};
use crate::FleetError;

/// A run as the workers read it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRow {
    pub id: i64,
    pub segments: u32,
    /// the run options of the whole run (`pgrig bench` options after the program name; run
    /// options only, which the worker checks)
    pub args: Vec<String>,
    /// the run's scripts ([`crate::scripts::encode`]; the worker decodes and checks them)
    pub scripts: String,
    pub seed: u64,
    pub interval_ms: u32,
    /// the run options' digest ([`options_digest`])
    pub digest: String,
    /// `pgbench`, or `lua` (a sysbench Lua script: [`crate::lua_script`])
    pub kind: String,
    pub state: String,
    /// seconds since the coordinator's last sign of life
    pub coordinator_silent_s: f64,
}

/// The digest of a run's options: SHA-256 (hex) of its segment count, run options and scripts.
/// A worker given `--options-digest` (a prefix of at least 8 hex digits) joins only a run with
/// these options.
pub fn options_digest(segments: u32, args: &[String], scripts: &str) -> String {
    let mut text = format!("segments={segments}\0");
    for a in args {
        text.push_str(a);
        text.push('\0');
    }
    text.push_str(scripts);
    crate::scripts::digest(&text)
}

/// A worker as the coordinator sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerRow {
    pub segment: u32,
    pub host: String,
    pub cores: u32,
    pub version: String,
    pub offset_ms: f64,
    pub error_ms: f64,
    pub state: String,
    pub error: Option<String>,
    /// seconds since its last heartbeat, by the database's clock
    pub silent_s: f64,
    pub result: Option<String>,
    /// what it reaches ([`crate::target::Fingerprint`] as text; empty: not measured)
    pub target: String,
}

/// One interval of one worker (figures of that interval alone, except `cpu_s`: the worker
/// process's CPU seconds so far).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Interval {
    pub segment: u32,
    pub seq: u32,
    pub ok: u64,
    pub failed: u64,
    pub skipped: u64,
    pub retried: u64,
    pub retries: u64,
    pub latency_sum_us: f64,
    pub cpu_s: f64,
    /// the interval's latency histogram ([`crate::codec::histogram_text`])
    pub histogram: Option<String>,
    /// a sysbench Lua script's segment: what its interval line needs beyond the counts
    pub lua: Option<LuaSecond>,
}

/// A Lua script segment's second beyond the counts (`ok`: events, `retries`: ignored errors):
/// its queries by sysbench's classes, its reconnects, and its threads still running as it
/// ended (0: the segment's last, partial second, not part of its series).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LuaSecond {
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub reconnects: u64,
    pub threads: u32,
}

/// The columns of [`LuaSecond`] in `pgrig_fleet.intervals`, in its fields' order.
const LUA_COLUMNS: &str = "queries_read, queries_write, queries_other, reconnects, threads_running";

/// The [`LuaSecond`] of an interval row's columns (all NULL: none; some NULL: damaged).
fn lua_second(r: &[Option<String>]) -> Result<Option<LuaSecond>, FleetError> {
    if r.iter().all(Option::is_none) {
        return Ok(None);
    }
    let g = |i: usize| r.get(i).and_then(|v| v.as_deref());
    Ok(Some(LuaSecond {
        reads: parse(g(0), "queries_read")?,
        writes: parse(g(1), "queries_write")?,
        other: parse(g(2), "queries_other")?,
        reconnects: parse(g(3), "reconnects")?,
        threads: parse(g(4), "threads_running")?,
    }))
}

/// Creates the schema if missing, cancels the runs whose coordinator has been silent for
/// [`COORDINATOR_SILENCE_S`] ([`cancel_stale`]), and opens a run waiting for `segments` workers;
/// its id and the stale runs cancelled.
pub fn create_run(
    db: &mut Db,
    segments: u32,
    args: &[String],
    scripts: &str,
    seed: u64,
    interval_ms: u32,
) -> Result<(i64, Vec<i64>), FleetError> {
    create_run_of(db, "pgbench", segments, (args, scripts), seed, interval_ms)
}

/// [`create_run`] of a run of `kind` (`pgbench`, or [`crate::lua_script::KIND`]).
pub fn create_run_of(
    db: &mut Db,
    kind: &str,
    segments: u32,
    (args, scripts): (&[String], &str),
    seed: u64,
    interval_ms: u32,
) -> Result<(i64, Vec<i64>), FleetError> {
    db.exec(crate::schema::DDL)?;
    let cancelled = cancel_stale(db)?;
    let digest = options_digest(segments, args, scripts);
    let arr = format!(
        "ARRAY[{}]::text[]",
        args.iter().map(|a| lit(a)).collect::<Vec<_>>().join(",")
    );
    let id = db.value(&format!(
        "INSERT INTO pgrig_fleet.runs (segments, args, scripts, seed, interval_ms, digest, \
         kind) VALUES ({segments}, {arr}, {}, {}, {interval_ms}, {}, {}) RETURNING id",
        lit(scripts),
        lit(&seed.to_string()),
        lit(&digest),
        lit(kind)
    ))?;
    Ok((parse(id.as_deref(), "run id")?, cancelled))
}

/// Marks `failed` every unfinished run (`waiting`, `running`, `stopping`) whose coordinator has
/// not been seen for [`COORDINATOR_SILENCE_S`] (it died: nobody will start or merge it); their
/// ids. Workers never join such a run, and stop theirs.
pub fn cancel_stale(db: &mut Db) -> Result<Vec<i64>, FleetError> {
    let rows = db.rows(&format!(
        "UPDATE pgrig_fleet.runs SET state = 'failed' \
         WHERE state IN ('waiting', 'running', 'stopping') \
         AND coordinator_seen < clock_timestamp() - interval '{COORDINATOR_SILENCE_S} seconds' \
         RETURNING id"
    ))?;
    rows.iter()
        .map(|r| parse(r[0].as_deref(), "run id"))
        .collect()
}

/// The workers of run `id`.
pub fn workers(db: &mut Db, id: i64) -> Result<Vec<WorkerRow>, FleetError> {
    let rows = db.rows(&format!(
        "SELECT segment, host, cores, version, clock_offset_ms, clock_error_ms, state, error, \
         extract(epoch FROM clock_timestamp() - last_seen), result, target \
         FROM pgrig_fleet.workers WHERE run_id = {id} ORDER BY segment"
    ))?;
    rows.into_iter()
        .map(|r| {
            let g = |i: usize| r[i].as_deref();
            let seg = g(0).unwrap_or("NULL");
            let named =
                |e: FleetError| FleetError::new(format!("worker row of segment {seg}: {e}"));
            Ok(WorkerRow {
                segment: parse(g(0), "segment").map_err(named)?,
                host: g(1).unwrap_or("").to_string(),
                cores: parse(g(2), "cores").map_err(named)?,
                version: g(3).unwrap_or("").to_string(),
                offset_ms: parse(g(4), "clock offset").map_err(named)?,
                error_ms: parse(g(5), "clock error").map_err(named)?,
                state: g(6).unwrap_or("").to_string(),
                error: r[7].clone(),
                silent_s: parse(g(8), "heartbeat").map_err(named)?,
                result: r[9].clone(),
                target: g(10).unwrap_or("").to_string(),
            })
        })
        .collect()
}

/// Sets the run's state (`running` also sets the start instant `lead_ms` from now, by the
/// database's clock).
pub fn set_state(
    db: &mut Db,
    id: i64,
    state: &str,
    lead_ms: Option<u32>,
) -> Result<(), FleetError> {
    let start = lead_ms.map_or(String::new(), |ms| {
        format!(", start_at = clock_timestamp() + interval '{ms} milliseconds'")
    });
    db.exec(&format!(
        "UPDATE pgrig_fleet.runs SET state = {}{start} WHERE id = {id}",
        lit(state)
    ))
}

/// How long after it was written an interval row is certainly committed or gone (a worker's
/// transaction is a few statements): rows of a lower id than such a row appear no more.
pub const INTERVAL_SETTLED_S: u32 = 5;

/// The newest interval row of run `id` written [`INTERVAL_SETTLED_S`] ago or earlier (0:
/// none): every row of a lower id that will ever be visible is visible now.
pub fn intervals_settled(db: &mut Db, id: i64) -> Result<i64, FleetError> {
    let v = db.value(&format!(
        "SELECT coalesce(max(id), 0) FROM pgrig_fleet.intervals WHERE run_id = {id} AND \
         written_at < clock_timestamp() - interval '{INTERVAL_SETTLED_S} seconds'"
    ))?;
    parse(v.as_deref(), "interval id")
}

/// The intervals written after row `after` (a row id), with their row ids.
pub fn intervals_after(
    db: &mut Db,
    run: i64,
    after: i64,
) -> Result<Vec<(i64, Interval)>, FleetError> {
    let rows = db.rows(&format!(
        "SELECT id, segment, seq, ok, failed, skipped, retried, retries, latency_sum_us, cpu_s, \
         histogram, {LUA_COLUMNS} FROM pgrig_fleet.intervals WHERE run_id = {run} AND id > \
         {after} ORDER BY id"
    ))?;
    rows.into_iter()
        .map(|r| {
            let g = |i: usize| r[i].as_deref();
            let id: i64 = parse(g(0), "interval id")?;
            let named = |e: FleetError| {
                FleetError::new(format!("run {run}: refused interval row {id}: {e}"))
            };
            let i = Interval {
                segment: parse(g(1), "segment").map_err(named)?,
                seq: parse(g(2), "seq").map_err(named)?,
                ok: parse(g(3), "ok").map_err(named)?,
                failed: parse(g(4), "failed").map_err(named)?,
                skipped: parse(g(5), "skipped").map_err(named)?,
                retried: parse(g(6), "retried").map_err(named)?,
                retries: parse(g(7), "retries").map_err(named)?,
                latency_sum_us: parse(g(8), "latency").map_err(named)?,
                cpu_s: parse(g(9), "cpu").map_err(named)?,
                histogram: r[10].clone(),
                lua: lua_second(r.get(11..).unwrap_or_default()).map_err(named)?,
            };
            Ok((id, i))
        })
        .collect()
}

/// Which run a worker joins: run `run` (whatever its state: the worker checks it), else the
/// newest run waiting for `segments` workers whose coordinator is alive (seen within
/// [`COORDINATOR_SILENCE_S`]) and, with `digest` (a prefix of the options' digest), with those
/// options.
pub fn find_run(
    db: &mut Db,
    run: Option<i64>,
    segments: u32,
    digest: Option<&str>,
) -> Result<Option<RunRow>, FleetError> {
    find_run_of(db, "pgbench", run, segments, digest)
}

/// The run's kind, also in a schema made before runs had one (then `pgbench`).
const KIND_OF: &str = "coalesce(to_jsonb(r) ->> 'kind', 'pgbench')";

/// [`find_run`] among the runs of `kind` (with `run`: that run, whatever its kind — the worker
/// checks [`RunRow::kind`]).
pub fn find_run_of(
    db: &mut Db,
    kind: &str,
    run: Option<i64>,
    segments: u32,
    digest: Option<&str>,
) -> Result<Option<RunRow>, FleetError> {
    let filter = match run {
        Some(id) => format!("id = {id}"),
        None => format!(
            "state = 'waiting' AND segments = {segments} AND {KIND_OF} = {} AND \
             coordinator_seen > clock_timestamp() - interval '{COORDINATOR_SILENCE_S} \
             seconds'{}",
            lit(kind),
            digest.map_or(String::new(), |d| format!(
                " AND left(digest, {}) = {}",
                d.len(),
                lit(d)
            ))
        ),
    };
    let exists = db.value("SELECT to_regclass('pgrig_fleet.runs') IS NOT NULL")?;
    if exists.as_deref() != Some("t") {
        return Ok(None);
    }
    let rows = db.rows(&format!(
        "SELECT id, segments, array_to_json(args), seed, interval_ms, scripts, digest, state, \
         extract(epoch FROM clock_timestamp() - coordinator_seen), {KIND_OF} \
         FROM pgrig_fleet.runs r WHERE {filter} ORDER BY id DESC LIMIT 1"
    ))?;
    let Some(r) = rows.into_iter().next() else {
        return Ok(None);
    };
    let g = |i: usize| r[i].as_deref();
    let args: Vec<String> = serde_json::from_str(g(2).unwrap_or("[]"))
        .map_err(|e| FleetError::new(format!("the run's arguments: {e}")))?;
    Ok(Some(RunRow {
        id: parse(g(0), "run id")?,
        segments: parse(g(1), "segments")?,
        args,
        seed: parse(g(3), "seed")?,
        interval_ms: parse(g(4), "interval")?,
        scripts: g(5).unwrap_or("").to_string(),
        digest: g(6).unwrap_or("").to_string(),
        state: g(7).unwrap_or("").to_string(),
        coordinator_silent_s: parse(g(8), "coordinator heartbeat")?,
        kind: g(9).unwrap_or("pgbench").to_string(),
    }))
}

/// Who this worker is, as it registers.
#[derive(Clone, Debug, PartialEq)]
pub struct Registration {
    pub segment: u32,
    pub host: String,
    pub cores: u32,
    pub version: String,
    pub offset_ms: f64,
    pub error_ms: f64,
    /// the target it reaches ([`crate::target::Fingerprint`] as text; empty when refused before)
    pub target: String,
}

/// Registers a worker (already `failed` with `refused`: the coordinator learns why); an error
/// when its segment already has one.
pub fn register(
    db: &mut Db,
    run: i64,
    w: &Registration,
    refused: Option<&str>,
) -> Result<(), FleetError> {
    let (state, error) = refused.map_or(("registered", "NULL".into()), |e| ("failed", lit(e)));
    let done = db.value(&format!(
        "INSERT INTO pgrig_fleet.workers (run_id, segment, host, cores, version, \
         clock_offset_ms, clock_error_ms, state, error, target) VALUES ({run}, {}, {}, {}, {}, \
         {}, {}, '{state}', {error}, {}) ON CONFLICT DO NOTHING RETURNING segment",
        w.segment,
        lit(&w.host),
        w.cores,
        lit(&w.version),
        w.offset_ms,
        w.error_ms,
        lit(&w.target)
    ))?;
    if done.is_none() {
        let host = db.value(&format!(
            "SELECT host FROM pgrig_fleet.workers WHERE run_id = {run} AND segment = {}",
            w.segment
        ))?;
        return Err(FleetError::new(format!(
            "segment {} of run {run} is already registered (by host {})",
            w.segment,
            host.unwrap_or_default()
        )));
    }
    Ok(())
}

/// Seconds without a sign of the coordinator after which workers stop (it died or lost the
/// database: nobody would merge their work).
pub const COORDINATOR_SILENCE_S: f64 = 10.0;

/// The run as a worker follows it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunState {
    pub state: String,
    /// the start instant once set (database clock, ms since the epoch)
    pub start_ms: Option<f64>,
    /// seconds since the coordinator's last sign of life
    pub coordinator_silent_s: f64,
}

const RUN_STATE: &str = "SELECT state, extract(epoch FROM start_at) * 1000, \
     extract(epoch FROM clock_timestamp() - coordinator_seen) FROM pgrig_fleet.runs WHERE id = ";

fn run_state_of(rows: Vec<Vec<Option<String>>>, run: i64) -> Result<RunState, FleetError> {
    let r = rows.into_iter().next().ok_or_else(|| {
        FleetError::new(format!("run {run} is gone from the coordination schema"))
    })?;
    Ok(RunState {
        state: r[0].clone().unwrap_or_default(),
        start_ms: r[1].as_deref().and_then(|s| s.parse().ok()),
        coordinator_silent_s: parse(r[2].as_deref(), "coordinator heartbeat")?,
    })
}

/// The run's state.
pub fn run_state(db: &mut Db, run: i64) -> Result<RunState, FleetError> {
    let rows = db.rows(&format!("{RUN_STATE}{run}"))?;
    run_state_of(rows, run)
}

/// The coordinator's sign of life (workers stop after [`COORDINATOR_SILENCE_S`] without one).
pub fn coordinator_alive(db: &mut Db, run: i64) -> Result<(), FleetError> {
    db.exec(&format!(
        "UPDATE pgrig_fleet.runs SET coordinator_seen = clock_timestamp() WHERE id = {run}"
    ))
}

/// One transaction: the worker's new intervals and its heartbeat; then the run's state.
pub fn report(
    db: &mut Db,
    run: i64,
    segment: u32,
    rows: &[Interval],
) -> Result<RunState, FleetError> {
    let mut sql = String::from("BEGIN;");
    for i in rows {
        sql.push_str(&format!(
            "INSERT INTO pgrig_fleet.intervals (run_id, segment, seq, ok, failed, skipped, \
             retried, retries, latency_sum_us, cpu_s, histogram, {LUA_COLUMNS}) VALUES \
             ({run}, {segment}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});",
            i.seq,
            i.ok,
            i.failed,
            i.skipped,
            i.retried,
            i.retries,
            i.latency_sum_us,
            i.cpu_s,
            i.histogram.as_deref().map_or("NULL".to_string(), lit),
            i.lua
                .map_or("NULL, NULL, NULL, NULL, NULL".to_string(), |l| format!(
                    "{}, {}, {}, {}, {}",
                    l.reads, l.writes, l.other, l.reconnects, l.threads
                ))
        ));
    }
    sql.push_str(&format!(
        "UPDATE pgrig_fleet.workers SET last_seen = clock_timestamp(), state = 'running' \
         WHERE run_id = {run} AND segment = {segment} AND state <> 'done'; COMMIT; \
         {RUN_STATE}{run}"
    ));
    let rows = db.rows(&sql)?;
    run_state_of(rows, run)
}

/// The worker's end: its result (state `done`) or what went wrong (state `failed`).
pub fn finish(
    db: &mut Db,
    run: i64,
    segment: u32,
    outcome: Result<&str, &str>,
) -> Result<(), FleetError> {
    let (state, result, error) = match outcome {
        Ok(r) => ("done", lit(r), "NULL".to_string()),
        Err(e) => ("failed", "NULL".to_string(), lit(e)),
    };
    db.exec(&format!(
        "UPDATE pgrig_fleet.workers SET state = '{state}', result = {result}, error = {error}, \
         last_seen = clock_timestamp() WHERE run_id = {run} AND segment = {segment}"
    ))
}
