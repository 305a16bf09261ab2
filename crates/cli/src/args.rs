//! pgbench's command line as the cli reads it: the parser is `pgrig_pgbench_args` (re-exported
//! here whole, so `args::Action`, `args::run_options` … name its items); this file adds
//! [`parse_or_report`], which prints the parser's lines on stderr.

pub use pgrig_pgbench_args::*;

/// [`parse_pgbench_args`] with the process environment, as the commands call it: errors and
/// notices go to stderr; an error is returned as pgbench's exit status.
pub fn parse_or_report(prog: &str, args: &[String]) -> Result<Parsed, i32> {
    let env = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
    let parsed = parse_pgbench_args(prog, args, &env).map_err(|e| {
        for l in &e.lines {
            crate::sink::eprint_line(l);
        }
        e.exit_code
    })?;
    for n in &parsed.notices {
        crate::sink::eprint_line(n);
    }
    Ok(parsed)
}
