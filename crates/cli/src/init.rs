//! `pgrig init [pgbench -i options] [DBNAME]`: pgbench's initialisation mode as its own
//! subcommand. The options are pgbench's (parsed as `pgbench -i ...`, with pgbench's checks
//! and messages), plus the pgrig-only `--load-jobs=N` (connections used to load and build
//! keys; 1 = pgbench's statements in pgbench's order; default: chosen from the client's and the server's cores).

use pgrig_init::{run_init_with, InitOptions};

use crate::args::{self, Action};
use crate::sink::StderrSink;

const PROG: &str = "pgrig init";
/// Most connections `--load-jobs` accepts.
const MAX_LOAD_JOBS: i64 = 256;

/// Runs `pgrig init`; `args[0]` is the program, `args[1]` `init`. Returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let rest = args.get(2..).unwrap_or(&[]);
    if matches!(rest.first().map(String::as_str), Some("--help" | "-?")) {
        print!("{}", help());
        return 0;
    }
    let (load_jobs, rest) = match take_load_jobs(rest) {
        Ok(v) => v,
        Err(msg) => {
            eprintln!("pgrig: error: {msg}");
            eprintln!("pgrig: hint: Try \"{PROG} --help\" for more information.");
            return 1;
        }
    };
    let mut argv = vec![PROG.to_string(), "-i".to_string()];
    argv.extend(rest);
    let parsed = match args::parse_or_report(PROG, &argv) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let Action::Init(cfg) = parsed.action else {
        eprintln!("pgrig: error: only initialization options can be used with \"{PROG}\"");
        return 1;
    };
    let sink = StderrSink::simple("pgrig");
    let opts = InitOptions {
        load_parallelism: load_jobs.unwrap_or(0),
        ..Default::default()
    };
    crate::interrupt::on_interrupt(opts.stop.clone());
    match run_init_with(&cfg, &sink, &opts) {
        Ok(()) => 0,
        Err(e) => e.report(&sink),
    }
}

/// Removes `--load-jobs N` / `--load-jobs=N` (last one wins) from the arguments.
pub fn take_load_jobs(args: &[String]) -> Result<(Option<u32>, Vec<String>), String> {
    let mut jobs = None;
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            out.push(a.clone());
            out.extend(it.cloned());
            break;
        }
        let value = if a == "--load-jobs" {
            match it.next() {
                Some(v) => v.clone(),
                None => return Err("option '--load-jobs' requires an argument".into()),
            }
        } else if let Some(v) = a.strip_prefix("--load-jobs=") {
            v.to_string()
        } else {
            out.push(a.clone());
            continue;
        };
        let n: i64 = value
            .trim_end()
            .parse()
            .map_err(|_| format!("invalid value \"{value}\" for option --load-jobs"))?;
        if !(1..=MAX_LOAD_JOBS).contains(&n) {
            return Err(format!("--load-jobs must be in range 1..{MAX_LOAD_JOBS}"));
        }
        jobs = Some(n as u32);
    }
    Ok((jobs, out))
}

fn help() -> String {
    format!(
        "{PROG} creates and fills pgbench's tables, like \"pgbench -i\", faster.\n\n\
         Usage:\n  {PROG} [OPTION]... [DBNAME]\n\n\
         Initialization options (pgbench's):\n\
         {init}\
         pgrig options:\n\
         \x20 --load-jobs=NUM          connections for loading and building keys\n\
         \x20                          (1: pgbench's statements in pgbench's order; default:\n\
         \x20                          from the client's and the server's cores)\n\n\
         Connection options:\n\
         \x20 -h, --host=HOSTNAME      database server host or socket directory\n\
         \x20 -p, --port=PORT          database server port number\n\
         \x20 -U, --username=USERNAME  connect as specified database user\n\
         \x20 -?, --help               show this help, then exit\n\n\
         On a terminal, progress shows as bars with rows, rate and ETA, and a per-step summary\n\
         follows pgbench's \"done in\" line; otherwise pgbench's own progress lines are printed.\n",
        init = args::init_options()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn help_lists_pgbench_init_options_once_and_load_jobs() {
        let h = help();
        assert_eq!(h.matches("  -I, --init-steps=[dtgGvpf]+").count(), 1);
        assert!(h.contains(
            "  --unlogged-tables        create tables as unlogged tables\n\npgrig options:"
        ));
        assert!(!h.contains("--initialize"));
        assert!(h.contains("  --load-jobs=NUM          connections"));
    }

    #[test]
    fn load_jobs_is_taken_out_in_both_spellings() {
        let (j, rest) =
            take_load_jobs(&v(&["-s", "2", "--load-jobs", "3", "db"])).unwrap_or_default();
        assert_eq!((j, rest), (Some(3), v(&["-s", "2", "db"])));
        let (j, _) = take_load_jobs(&v(&["--load-jobs=1"])).unwrap_or_default();
        assert_eq!(j, Some(1));
        let (j, rest) = take_load_jobs(&v(&["--", "--load-jobs=1"])).unwrap_or_default();
        assert_eq!((j, rest), (None, v(&["--", "--load-jobs=1"])));
    }

    #[test]
    fn bad_load_jobs_values_are_refused() {
        assert_eq!(
            take_load_jobs(&v(&["--load-jobs=x"])).err().as_deref(),
            Some("invalid value \"x\" for option --load-jobs")
        );
        assert_eq!(
            take_load_jobs(&v(&["--load-jobs", "0"])).err().as_deref(),
            Some("--load-jobs must be in range 1..256")
        );
        assert_eq!(
            take_load_jobs(&v(&["--load-jobs"])).err().as_deref(),
            Some("option '--load-jobs' requires an argument")
        );
    }
}
