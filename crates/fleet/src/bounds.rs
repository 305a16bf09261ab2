//! What a run row may ask of one worker, in numbers. Anyone who can write `pgrig_fleet` can write
//! a row, and a row's figures become threads, connections, timers and loop counts on every
//! worker: `--threads=100000000` filled the target's `max_connections` and aborted the worker
//! (it could not allocate the threads' stacks), `--time=-5` was taken. Each figure a row can
//! carry is checked against a range that holds every real run, and refused by name otherwise.

/// Connections one worker opens at most (its share of `-c` or `--threads`): more than a client
/// host drives, and what keeps a forged row from exhausting the target's `max_connections`.
pub const MAX_SEGMENT_CLIENTS: u32 = 5_000;

/// The longest run a row may ask for, in seconds (31 days).
pub const MAX_SECONDS: u64 = 31 * 86_400;

/// The most transactions or events a row may ask for (a trillion: years of any run).
pub const MAX_COUNT: u64 = 1_000_000_000_000;

/// The highest rate a row may ask for, per second.
pub const MAX_RATE: f64 = 100_000_000.0;

/// The longest report interval a row may ask for, in seconds (a day).
pub const MAX_INTERVAL_S: u64 = 86_400;

/// Refuses `--name=value` unless `min <= value <= max` (and finite).
pub fn within(name: &str, value: f64, min: f64, max: f64) -> Result<(), String> {
    if value.is_finite() && value >= min && value <= max {
        Ok(())
    } else {
        Err(format!(
            "--{name}={value} is outside what a worker runs ({min} to {max})"
        ))
    }
}

/// Refuses a share of `clients` connections for one worker past [`MAX_SEGMENT_CLIENTS`].
pub fn segment_clients(name: &str, total: u32, share: u32) -> Result<(), String> {
    if share <= MAX_SEGMENT_CLIENTS {
        Ok(())
    } else {
        Err(format!(
            "--{name}={total} gives this worker {share} connections; a worker opens at most \
             {MAX_SEGMENT_CLIENTS} (use more segments)"
        ))
    }
}

/// The figures of a pgbench run's configuration a row carries, checked: this worker's clients,
/// `-T`/`-t`, `-R`, `-L`, `-P`, `--aggregate-interval`, `--sampling-rate`, `--max-tries`, `-s`.
pub fn bench(cfg: &pgrig_engine::config::BenchConfig, share: u32) -> Result<(), String> {
    use pgrig_engine::config::Duration;
    segment_clients("client", cfg.clients, share)?;
    match cfg.duration {
        Duration::Seconds(s) => within("time", s as f64, 1.0, MAX_SECONDS as f64)?,
        Duration::Transactions(t) => within("transactions", t as f64, 0.0, MAX_COUNT as f64)?,
    }
    if let Some(r) = cfg.rate {
        within("rate", r, 0.0, MAX_RATE)?;
    }
    if let Some(us) = cfg.latency_limit_us {
        within(
            "latency-limit",
            us as f64 / 1000.0,
            0.0,
            MAX_SECONDS as f64 * 1000.0,
        )?;
    }
    for (name, v) in [
        ("progress", cfg.progress),
        ("aggregate-interval", cfg.aggregate_interval),
    ] {
        if let Some(v) = v {
            within(name, f64::from(v), 1.0, MAX_INTERVAL_S as f64)?;
        }
    }
    if let Some(r) = cfg.sampling_rate {
        within("sampling-rate", r, 0.0, 1.0)?;
    }
    within("max-tries", f64::from(cfg.max_tries), 0.0, 1_000_000.0)?;
    if let Some(s) = cfg.scale {
        within("scale", f64::from(s), 1.0, 1_000_000.0)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgrig_engine::config::{BenchConfig, Duration};

    #[test]
    fn a_row_past_any_bound_is_refused_by_name() {
        let ok = BenchConfig::default();
        assert!(bench(&ok, 1).is_ok());
        let cases: [(BenchConfig, &str); 4] = [
            (
                BenchConfig {
                    clients: 100_000_000,
                    ..BenchConfig::default()
                },
                "--client=100000000",
            ),
            (
                BenchConfig {
                    duration: Duration::Seconds(u64::MAX / 2),
                    ..BenchConfig::default()
                },
                "--time=",
            ),
            (
                BenchConfig {
                    rate: Some(f64::INFINITY),
                    ..BenchConfig::default()
                },
                "--rate=inf",
            ),
            (
                BenchConfig {
                    sampling_rate: Some(2.0),
                    ..BenchConfig::default()
                },
                "--sampling-rate=2",
            ),
        ];
        for (cfg, name) in cases {
            let e = bench(&cfg, cfg.clients).unwrap_err();
            assert!(e.contains(name), "{e}");
        }
        assert!(within("time", -5.0, 0.0, 10.0)
            .unwrap_err()
            .contains("--time=-5"));
    }
}
