//! `-l` transaction logs: one file per worker thread (`PREFIX.PID[.TID]`), per-transaction lines or
//! `--aggregate-interval` lines, in pgbench's formats.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::UNIX_EPOCH;

use crate::shared::{RunShared, ThreadCtx};
use crate::stats::{Counts, Moments};

pub(crate) struct TxLog {
    out: BufWriter<File>,
    agg: Option<Aggregate>,
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
    /// Opens `PREFIX.PID` (thread 0) or `PREFIX.PID.TID`.
    pub fn open(sh: &RunShared, tid: usize) -> Result<TxLog, String> {
        let prefix = sh.cfg.log_prefix.as_deref().unwrap_or("pgbench_log");
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
        let f = File::create(path).map_err(|e| {
            format!(
                "could not open logfile \"{name}\": {}",
                pgrig_wire::strerror(&e)
            )
        })?;
        let agg = sh.cfg.aggregate_interval.map(|s| Aggregate {
            interval_us: s as i64 * 1_000_000,
            start_us: -1,
            latency: Moments::default(),
            lag: Moments::default(),
            counts: Counts::default(),
        });
        Ok(TxLog {
            out: BufWriter::with_capacity(64 * 1024, f),
            agg,
        })
    }

    fn epoch_us(sh: &RunShared, now_us: i64) -> i64 {
        let base = sh
            .start_wall
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        base + now_us
    }

    /// One finished (or skipped/failed) transaction. `latency` is None unless it succeeded;
    /// `what` is "" (ok), "skipped", "failed", or a failure kind.
    #[allow(clippy::too_many_arguments)]
    pub fn transaction(
        &mut self,
        sh: &RunShared,
        th: &ThreadCtx,
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
                let e = Self::epoch_us(sh, now_us);
                agg.start_us = now_us - e % 1_000_000;
            }
            while now_us >= agg.start_us + agg.interval_us {
                Self::write_agg(&mut self.out, sh, agg);
            }
            match (latency, what) {
                (Some(l), _) => {
                    agg.counts.ok += 1;
                    agg.latency.add(l);
                    if sh.throttle_delay_us.is_some() {
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
        if let Some(rate) = sh.cfg.sampling_rate {
            if th.sample_rng.borrow_mut().double() > rate {
                return;
            }
        }
        let e = Self::epoch_us(sh, now_us);
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
        if sh.throttle_delay_us.is_some() {
            let _ = write!(self.out, " {}", lag_us);
        }
        if sh.cfg.max_tries != 1 {
            let _ = write!(self.out, " {}", retries);
        }
        let _ = self.out.write_all(b"\n");
    }

    fn write_agg(out: &mut BufWriter<File>, sh: &RunShared, agg: &mut Aggregate) {
        let k = &agg.counts;
        let (l, g) = (&agg.latency, &agg.lag);
        let detailed = sh.cfg.failures_detailed;
        let _ = writeln!(
            out,
            "{} {} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {} {} {} {} {} {}",
            TxLog::epoch_us(sh, agg.start_us) / 1_000_000,
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
            if detailed && sh.cfg.continue_on_error {
                k.other_failures
            } else {
                0
            },
        );
        agg.start_us += agg.interval_us;
        agg.latency = Moments::default();
        agg.lag = Moments::default();
        agg.counts = Counts::default();
    }

    /// Flushes the last (partial) aggregation interval and the file.
    pub fn finish(&mut self, sh: &RunShared) {
        if let Some(agg) = &mut self.agg {
            if agg.start_us >= 0 {
                Self::write_agg(&mut self.out, sh, agg);
            }
        }
        let _ = self.out.flush();
    }
}
