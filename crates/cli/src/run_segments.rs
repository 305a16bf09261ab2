//! `pgrig run --segments N --coordinator URL`: the run turned into `pgrig bench` options and
//! handed to `pgrig bench`, whose coordinator spreads it over the workers.

/// `pgrig run --segments N --coordinator URL`: the run as `pgrig bench` options (pgbench scripts
/// only), coordinated as `bench --segments` does; pgbench's report of the whole run.
pub fn from_run(
    a: &crate::run_args::RunArgs,
    segments: u32,
    url: &str,
    scripts: &[pgrig_engine::config::ScriptSource],
    native: bool,
) -> i32 {
    use pgrig_engine::config::ScriptSource;
    let env_target =
        std::env::var_os("PGHOST").is_some() || std::env::var_os("PGDATABASE").is_some();
    let refused = if native {
        Some("--segments runs pgbench scripts only, not native workloads (yet)")
    } else if a.target.is_none() && !env_target {
        Some("--segments needs a target every host reaches (--target or PGHOST), not a throwaway server")
    } else if a.init || a.report.is_some() || a.profile.is_some() {
        Some("--segments does not combine with --init, --report or --profile (initialise with pgrig init first)")
    } else {
        None
    };
    if let Some(msg) = refused {
        eprintln!("pgrig: error: {msg}");
        return 1;
    }
    let mut argv: Vec<String> = vec!["pgrig run".into()];
    let mut push = |k: &str, v: String| argv.extend([k.to_string(), v]);
    push("-c", a.clients.to_string());
    push("-j", a.threads.to_string());
    push("-T", a.duration.to_string());
    push("-M", a.protocol.clone());
    push("--max-tries", a.max_tries.to_string());
    if let Some(seed) = a.seed {
        push("--random-seed", seed.to_string());
    }
    for s in scripts {
        match s {
            ScriptSource::Builtin { name, weight } => push("-b", format!("{name}@{weight}")),
            ScriptSource::File { path, weight, .. } => push("-f", format!("{path}@{weight}")),
        }
    }
    push("--segments", segments.to_string());
    push("--coordinator", url.to_string());
    if let Some(j) = &a.json {
        push("--json", j.clone());
    }
    if let Some(m) = &a.metrics_addr {
        push("--metrics-addr", m.clone());
        push("--metrics-linger", a.metrics_linger.to_string());
    }
    // the target is each worker's own (pgrig worker --target URL, or its PG* environment)
    crate::bench::main("pgrig run", &argv)
}
