//! A pgbench run's coordinator opening the run: the run options the workers get (run options
//! only, refused with a password: they are stored in the schema), and the run written into the
//! coordination schema with its seed fixed, runs whose coordinator went silent cancelled, and
//! how workers join it said through the caller's sink.

use std::time::{SystemTime, UNIX_EPOCH};

use pgrig_engine::config::{BenchConfig, SeedOption};
use pgrig_engine::sink::{Level, Sink};
use pgrig_pgbench_args::SegmentsOptions;

use crate::db::Db;
use crate::protocol;
use crate::FleetError;

/// Seconds between a worker's reports.
pub const INTERVAL_MS: u32 = 1000;

/// The run options the workers get ([`pgrig_pgbench_args::run_options::for_workers`]: no connection
/// option, target, local path or pgrig option); refused when one holds a password (it would be
/// stored in the schema).
pub fn worker_args(args: &[String]) -> Result<Vec<String>, FleetError> {
    let rest = args.get(1..).unwrap_or(&[]);
    let out = pgrig_pgbench_args::run_options::for_workers(rest).map_err(FleetError::new)?;
    if out.iter().any(|a| pgrig_wire::mask_passwords(a) != *a) {
        return Err(FleetError::new(
            "a password on the command line of a segmented run would be stored in the \
             coordination schema: give it to every host in PGPASSWORD or a password file",
        ));
    }
    Ok(out)
}

/// Writes the run into the coordination schema (its seed fixed now, so every segment draws
/// from it) and says how workers join it; cancels runs whose coordinator went silent.
pub fn create_run(
    sink: &dyn Sink,
    cfg: &mut BenchConfig,
    seg: &SegmentsOptions,
    stored: &[String],
) -> Result<(Db, i64), FleetError> {
    let seed = match cfg.random_seed {
        Some(SeedOption::Value(v)) => v,
        _ => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64),
    };
    cfg.random_seed = Some(SeedOption::Value(seed));
    let mut db = Db::connect(&seg.coordinator)?;
    let scripts = crate::scripts::encode(&cfg.scripts);
    let (run, stale) =
        protocol::create_run(&mut db, seg.count, stored, &scripts, seed, INTERVAL_MS)?;
    for id in stale {
        sink.message(
            Level::Warning,
            &format!(
                "cancelled run {id}: its coordinator has not been seen for over {} s",
                protocol::COORDINATOR_SILENCE_S
            ),
        );
    }
    let digest = protocol::options_digest(seg.count, stored, &scripts);
    sink.message(
        Level::Info,
        &format!(
            "run {run} (options digest {}) waits for {n} workers: pgrig worker --segment I/{n} \
             --coordinator \"{}\" --run {run} [--target URL] [--log-dir DIR]",
            &digest[..16],
            db.shown,
            n = seg.count
        ),
    );
    Ok((db, run))
}
