//! `-l` transaction logs: one file per worker thread (`PREFIX.PID[.TID]`), per-transaction lines or
//! `--aggregate-interval` lines, in pgbench's formats: pgbench 15-18's (the aggregated line's
//! fifteen columns), pgbench 19's sixteenth column (other failures) only with
//! `--continue-on-error`, the pgbench 19 option that gives it a meaning. What the format depends
//! on is taken from the run's configuration when the file is opened.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use pgrig_script::Prng;

use crate::config::BenchConfig;
use crate::stats::{Counts, Moments};

pub(crate) struct TxLog {
    out: BufWriter<File>,
    agg: Option<Aggregate>,
    format: Format,
    /// `--sampling-rate`'s draws
    sample_rng: Prng,
}

/// What the lines hold, from the run's options.
struct Format {
    /// the run's start in µs since the epoch (log times are `now_us()` times plus this)
    epoch_base_us: i64,
    sampling_rate: Option<f64>,
    /// `-R`: a lag column
    throttled: bool,
    /// `--max-tries` other than 1: a retries column
    retries: bool,
    failures_detailed: bool,
    continue_on_error: bool,
}

struct Aggregate {
    interval_us: i64,
    /// start of the current interval, µs since run start
    start_us: i64,
    latency: Moments,
    lag: Moments,
    counts: Counts,
}

impl TxLog {
    /// Opens `PREFIX.PID` (thread 0) or `PREFIX.PID.TID`; `start_wall` is the run's start.
    pub fn open(
        cfg: &BenchConfig,
        start_wall: SystemTime,
        tid: usize,
        sample_rng: Prng,
    ) -> Result<TxLog, String> {
        let prefix = cfg.log_prefix.as_deref().unwrap_or("pgbench_log");
        let pid = std::process::id();
        let name = if tid == 0 {
            format!("{prefix}.{pid}")
        } else {
            format!("{prefix}.{pid}.{tid}")
        };
        // the prefix's own bytes (an argument need not be UTF-8: see pgrig_script::bytes)
        let path = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(
            &pgrig_script::bytes::encode(&name),
        )
        .to_owned();
        let f = pgrig_outfile::create_streaming(std::path::Path::new(&path)).map_err(|e| {
            format!(
                "could not open logfile \"{name}\": {}",
                pgrig_wire::strerror(&e)
            )
        })?;
        let agg = cfg.aggregate_interval.map(|s| Aggregate {
            interval_us: s as i64 * 1_000_000,
            start_us: -1,
            latency: Moments::default(),
            lag: Moments::default(),
            counts: Counts::default(),
        });
        let format = Format {
            epoch_base_us: start_wall
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_micros() as i64)
                .unwrap_or(0),
            sampling_rate: cfg.sampling_rate,
            throttled: cfg.rate.is_some(),
            retries: cfg.max_tries != 1,
            failures_detailed: cfg.failures_detailed,
            continue_on_error: cfg.continue_on_error,
        };
        Ok(TxLog {
            out: BufWriter::with_capacity(64 * 1024, f),
            agg,
            format,
            sample_rng,
        })
    }

    /// One finished (or skipped/failed) transaction. `latency` is None unless it succeeded;
    /// `what` is "" (ok), "skipped", "failed", or a failure kind.
    #[allow(clippy::too_many_arguments)]
    pub fn transaction(
        &mut self,
        client: u32,
        tx_no: u64,
        script: usize,
        latency: Option<f64>,
        what: &str,
        now_us: i64,
        lag_us: i64,
        retries: u32,
    ) {
        if let Some(agg) = &mut self.agg {
            if agg.start_us < 0 {
                // first interval starts at a whole second of wall-clock time
                let e = self.format.epoch_base_us + now_us;
                agg.start_us = now_us - e % 1_000_000;
            }
            while now_us >= agg.start_us + agg.interval_us {
                Self::write_agg(&mut self.out, &self.format, agg);
            }
            match (latency, what) {
                (Some(l), _) => {
                    agg.counts.ok += 1;
                    agg.latency.add(l);
                    if self.format.throttled {
                        agg.lag.add(lag_us as f64);
                    }
                }
                (None, "skipped") => agg.counts.skipped += 1,
                (None, "serialization") => agg.counts.serialization_failures += 1,
                (None, "deadlock") => agg.counts.deadlock_failures += 1,
                (None, _) => agg.counts.other_failures += 1,
            }
            if retries > 0 {
                agg.counts.retried += 1;
                agg.counts.retries += retries as u64;
            }
            return;
        }
        if let Some(rate) = self.format.sampling_rate {
            if self.sample_rng.double() > rate {
                return;
            }
        }
        let e = self.format.epoch_base_us + now_us;
        let _ = match latency {
            Some(l) => write!(
                self.out,
                "{} {} {:.0} {} {} {}",
                client,
                tx_no,
                l,
                script,
                e / 1_000_000,
                e % 1_000_000
            ),
            None => write!(
                self.out,
                "{} {} {} {} {} {}",
                client,
                tx_no,
                what,
                script,
                e / 1_000_000,
                e % 1_000_000
            ),
        };
        if self.format.throttled {
            let _ = write!(self.out, " {}", lag_us);
        }
        if self.format.retries {
            let _ = write!(self.out, " {}", retries);
        }
        let _ = self.out.write_all(b"\n");
    }

    /// One aggregated line: pgbench 15-18's fifteen columns, and pgbench 19's sixteenth (other
    /// failures) only with `--continue-on-error`, the pgbench 19 option that gives it a meaning.
    fn write_agg(out: &mut BufWriter<File>, format: &Format, agg: &mut Aggregate) {
        let k = &agg.counts;
        let (l, g) = (&agg.latency, &agg.lag);
        let detailed = format.failures_detailed;
        let _ = write!(
            out,
            "{} {} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {} {} {} {} {}",
            (format.epoch_base_us + agg.start_us) / 1_000_000,
            k.ok,
            l.sum,
            l.sum2,
            if l.count > 0 { l.min } else { 0.0 },
            if l.count > 0 { l.max } else { 0.0 },
            g.sum,
            g.sum2,
            if g.count > 0 { g.min } else { 0.0 },
            if g.count > 0 { g.max } else { 0.0 },
            k.skipped,
            k.retried,
            k.retries,
            if detailed {
                k.serialization_failures
            } else {
                0
            },
            if detailed { k.deadlock_failures } else { 0 },
        );
        if format.continue_on_error {
            let other = if detailed { k.other_failures } else { 0 };
            let _ = write!(out, " {other}");
        }
        let _ = out.write_all(b"\n");
        agg.start_us += agg.interval_us;
        agg.latency = Moments::default();
        agg.lag = Moments::default();
        agg.counts = Counts::default();
    }

    /// Flushes the last (partial) aggregation interval and the file.
    pub fn finish(&mut self) {
        if let Some(agg) = &mut self.agg {
            if agg.start_us >= 0 {
                Self::write_agg(&mut self.out, &self.format, agg);
            }
        }
        let _ = self.out.flush();
    }
}
