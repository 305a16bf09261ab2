//! What pgbench does after the option loop, in its order: default script, total weight, `-j`
//! clamp, database name and surplus arguments, the init/benchmark option-family checks, the
//! cross-option checks, and building the final [`InitConfig`] / [`BenchConfig`].

use pgrig_engine::config::{
    BenchConfig, Duration, InitConfig, PartitionMethod, ScriptSource, SeedOption,
};

use super::state::State;
use super::Action;

type Lines = Vec<String>;

/// pgbench's `DEFAULT_INIT_STEPS`.
const DEFAULT_INIT_STEPS: &str = "dtgvp";
/// pgbench's `DEFAULT_NXACTS`.
const DEFAULT_NXACTS: i32 = 10;

fn weight_of(s: &ScriptSource) -> i64 {
    match s {
        ScriptSource::Builtin { weight, .. } | ScriptSource::File { weight, .. } => *weight,
    }
}

/// Runs the post-loop checks and builds the action. `positionals` are the non-option arguments.
pub fn finish(st: &mut State, positionals: &[String]) -> Result<Action, Lines> {
    let rep = st.rep.clone();
    let fatal = |msg: &str| vec![rep.error(msg)];

    if st.scripts.is_empty() && !st.is_init {
        st.scripts.push(ScriptSource::Builtin {
            name: "tpcb-like".into(),
            weight: 1,
        });
        st.bench_opt_set = true;
    }
    let total_weight: i64 = st.scripts.iter().map(weight_of).sum();
    if total_weight == 0 && !st.is_init {
        return Err(fatal("total script weight must not be zero"));
    }

    let mut rest = positionals.iter();
    if st.conn.dbname.is_none() {
        st.conn.dbname = rest.next().cloned();
    }
    if let Some(extra) = rest.next() {
        return Err(vec![
            rep.error(&format!(
                "too many command-line arguments (first is \"{extra}\")"
            )),
            rep.try_help(),
        ]);
    }

    if st.is_init {
        return init_config(st).map(Action::Init);
    }
    if st.init_opt_set {
        return Err(fatal(
            "some of the specified options cannot be used in benchmarking mode",
        ));
    }
    check_bench(st)?;
    Ok(Action::Bench(bench_config(st)))
}

fn init_config(st: &State) -> Result<InitConfig, Lines> {
    let fatal = |msg: &str| vec![st.rep.error(msg)];
    if st.bench_opt_set {
        return Err(fatal(
            "some of the specified options cannot be used in initialization (-i) mode",
        ));
    }
    if st.partitions == 0 && st.partition_method.is_some() {
        return Err(fatal(
            "--partition-method requires greater than zero --partitions",
        ));
    }
    let partition_method = match st.partition_method {
        None if st.partitions > 0 => Some(PartitionMethod::Range),
        other => other,
    };
    let mut steps = st
        .init_steps
        .clone()
        .unwrap_or_else(|| DEFAULT_INIT_STEPS.to_string());
    if st.no_vacuum {
        steps = steps.replace('v', " ");
    }
    if st.foreign_keys && !steps.contains('f') {
        steps.push('f');
    }
    steps.retain(|c| c != ' ');
    Ok(InitConfig {
        conn: st.conn.clone(),
        steps,
        scale: st.scale,
        fillfactor: st.fillfactor,
        quiet: st.quiet,
        index_tablespace: st.index_tablespace.clone(),
        tablespace: st.tablespace.clone(),
        partitions: st.partitions,
        partition_method,
        unlogged: st.unlogged,
    })
}

/// pgbench's cross-option checks for benchmark mode, in its order.
fn check_bench(st: &State) -> Result<(), Lines> {
    let fatal = |msg: &str| Err(vec![st.rep.error(msg)]);
    if st.nxacts > 0 && st.duration > 0 {
        return fatal("specify either a number of transactions (-t) or a duration (-T), not both");
    }
    // NaN sampling rates pass the option check and fail every comparison, as in C.
    let sampling = st.sample_rate.is_some_and(|r| r > 0.0);
    if sampling && !st.log {
        return fatal(
            "log sampling (--sampling-rate) is allowed only when logging transactions (-l)",
        );
    }
    if sampling && st.agg_interval > 0 {
        return fatal("log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time");
    }
    if st.agg_interval > 0 && !st.log {
        return fatal("log aggregation is allowed only when actually logging transactions");
    }
    if !st.log && st.log_prefix.is_some() {
        return fatal(
            "log file prefix (--log-prefix) is allowed only when logging transactions (-l)",
        );
    }
    if st.duration > 0 && st.agg_interval > st.duration {
        return fatal(&format!(
            "number of seconds for aggregation ({}) must not be higher than test duration ({})",
            st.agg_interval, st.duration
        ));
    }
    if st.duration > 0 && st.agg_interval > 0 && st.duration % st.agg_interval != 0 {
        return fatal(&format!(
            "duration ({}) must be a multiple of aggregation interval ({})",
            st.duration, st.agg_interval
        ));
    }
    if st.progress_timestamp && st.progress == 0 {
        return fatal("--progress-timestamp is allowed only under --progress");
    }
    if st.max_tries == 0 && st.latency_limit_us == 0 && st.duration <= 0 {
        return fatal("an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)");
    }
    Ok(())
}

fn positive(v: i32) -> Option<u32> {
    (v > 0).then_some(v as u32)
}

fn bench_config(st: &State) -> BenchConfig {
    let duration = if st.duration > 0 {
        Duration::Seconds(st.duration as u64)
    } else {
        let n = if st.nxacts > 0 {
            st.nxacts
        } else {
            DEFAULT_NXACTS
        };
        Duration::Transactions(n as u64)
    };
    BenchConfig {
        conn: st.conn.clone(),
        scripts: st.scripts.clone(),
        clients: st.clients as u32,
        threads: pgrig_engine::config::clamp_threads(st.threads as u32, st.clients as u32),
        duration,
        mode: st.mode,
        connect_per_tx: st.connect,
        defines: st.defines.clone(),
        scale: st.scale_given.then_some(st.scale),
        no_vacuum: st.no_vacuum,
        vacuum_all: st.vacuum_all,
        progress: positive(st.progress),
        progress_timestamp: st.progress_timestamp,
        report_per_command: st.report_per_command,
        rate: st.rate,
        latency_limit_us: (st.latency_limit_us != 0).then_some(st.latency_limit_us),
        max_tries: st.max_tries,
        failures_detailed: st.failures_detailed,
        verbose_errors: st.verbose_errors,
        exit_on_abort: st.exit_on_abort,
        continue_on_error: st.continue_on_error,
        log: st.log,
        log_prefix: st.log_prefix.clone(),
        sampling_rate: st.sample_rate,
        aggregate_interval: positive(st.agg_interval),
        random_seed: st.random_seed.map(SeedOption::Value),
        debug: st.debug,
        client_cpus: None,
        native: None,
        segment: None,
        total_transactions: None,
        forced_end_s: None,
    }
}
