//! `pgrig tpcc load|check`: TPC-C's dataset loaded in parallel by warehouse ranges (binary COPY,
//! keys after the load, progress) and the consistency conditions of clause 3.3.2 checked on a
//! database, each reported pass/fail with the offending keys (exit status 1 on any failure).
//! Running it is `pgrig run --workload tpcc -o warehouses=N` (or a study).

use clap::{Args, Parser, Subcommand};

use pgrig_engine::config::ConnArgs;
use pgrig_engine::StopHandle;
use pgrig_workloads::tpcc::check;
use pgrig_workloads::Options;

use crate::sink::StderrSink;

#[derive(Parser, Debug)]
#[command(
    name = "pgrig tpcc",
    about = "TPC-C's dataset and consistency checks (run it with pgrig run --workload tpcc)",
    subcommand_required = true
)]
struct TpccArgs {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Create the nine tables (dropping existing ones) and load the initial population.
    Load(LoadArgs),
    /// Check the consistency conditions (1-10 and 12; 11 too with --initial).
    Check(CheckArgs),
}

/// Where the database is (libpq's defaults and PG* variables apply).
#[derive(Args, Debug)]
struct Target {
    /// A postgresql:// URI or a conninfo string.
    #[arg(long)]
    target: Option<String>,
    /// Server host or socket directory.
    #[arg(long, short = 'h')]
    host: Option<String>,
    /// Server port.
    #[arg(long, short = 'p')]
    port: Option<String>,
    /// User name.
    #[arg(long = "username", short = 'U')]
    user: Option<String>,
    /// Database name (or a conninfo string).
    #[arg(long, short = 'd')]
    dbname: Option<String>,
}

impl Target {
    fn conn(&self) -> ConnArgs {
        ConnArgs {
            host: self.host.clone(),
            port: self.port.clone(),
            user: self.user.clone(),
            dbname: self.target.clone().or_else(|| self.dbname.clone()),
        }
    }
}

#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
struct LoadArgs {
    #[command(flatten)]
    target: Target,
    /// Warehouses to load.
    #[arg(long, short = 'W', default_value_t = 1)]
    warehouses: u64,
    /// Range-partition every table but ITEM into this many warehouse ranges (0 = none).
    #[arg(long, default_value_t = 0)]
    partitions: u64,
    /// Connections loading in parallel (0 = from the client's and the server's cores).
    #[arg(long, default_value_t = 0)]
    load_jobs: usize,
    /// The dataset's seed (fixes the load-time NURand constants; give runs the same one).
    #[arg(long)]
    load_seed: Option<u64>,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
}

#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
struct CheckArgs {
    #[command(flatten)]
    target: Target,
    /// Also check that the database has this many warehouses.
    #[arg(long, short = 'W')]
    warehouses: Option<i64>,
    /// The database is as loaded (no Delivery ran): check condition 11 too.
    #[arg(long)]
    initial: bool,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
}

/// Runs `pgrig tpcc`; `args[0]` is `tpcc`. Returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let argv = std::iter::once("pgrig tpcc".to_string()).chain(args.iter().skip(1).cloned());
    let a: TpccArgs = match crate::own_args::parse(argv) {
        Ok(a) => a,
        Err(code) => return code,
    };
    match a.command {
        Command::Load(l) => load(l),
        Command::Check(c) => run_check(c),
    }
}

fn load(a: LoadArgs) -> i32 {
    let mut o = Options::new();
    o.set("warehouses", a.warehouses.to_string());
    o.set("partitions", a.partitions.to_string());
    if let Some(s) = a.load_seed {
        o.set("load_seed", s.to_string());
    }
    let native = match pgrig_workloads::build("tpcc", &o) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("pgrig: error: {e}");
            return 1;
        }
    };
    let sink = StderrSink::simple("pgrig");
    let stop = StopHandle::default();
    crate::interrupt::on_interrupt(stop.clone());
    eprintln!("pgrig: loading TPC-C with {} warehouse(s)...", a.warehouses);
    match pgrig_init::generic::load(&a.target.conn(), &native.load, a.load_jobs, &sink, &stop) {
        Ok(r) => {
            let seed = a
                .load_seed
                .unwrap_or(pgrig_workloads::tpcc::DEFAULT_LOAD_SEED);
            let c = pgrig_workloads::tpcc::rand::NurandC::load(seed);
            println!(
                "tpcc: {} warehouse(s) loaded {}; {:.0} rows/s; load seed {seed} (C_LAST constant {}, recorded in {})",
                a.warehouses,
                r.summary(),
                r.rows as f64 / r.total_s().max(1e-9),
                c.c_last,
                pgrig_workloads::tpcc::schema::DATASET_TABLE
            );
            0
        }
        Err(_) if stop.requested() => 130,
        Err(e) => e.report(&sink),
    }
}

fn run_check(a: CheckArgs) -> i32 {
    let config = match pgrig_wire::Config::from_args(&a.target.conn(), "pgrig") {
        Ok(c) => c,
        Err(e) => {
            eprintln!("pgrig: error: {e}");
            return 1;
        }
    };
    let mut failed = false;
    if let Some(want) = a.warehouses {
        match check::count_warehouses(&config) {
            Ok(n) if n == want => println!("warehouses  pass  {n} warehouse(s), as given"),
            Ok(n) => {
                println!("warehouses  FAIL  {n} warehouse(s), but --warehouses {want} was given");
                failed = true;
            }
            Err(e) => return connection_error(&e),
        }
    }
    let outcomes = match check::run(&config, a.initial) {
        Ok(o) => o,
        Err(e) => return connection_error(&e),
    };
    for o in &outcomes {
        println!("{}", o.line());
        failed |= !o.passed();
    }
    let bad = outcomes.iter().filter(|o| !o.passed()).count();
    if failed {
        eprintln!(
            "pgrig: error: {bad} of {} consistency conditions failed",
            outcomes.len()
        );
        1
    } else {
        println!("all {} consistency conditions hold", outcomes.len());
        0
    }
}

fn connection_error(e: &pgrig_wire::Error) -> i32 {
    eprintln!("pgrig: error: {}", e.to_string().trim_end());
    if e.code() == Some("42P01") {
        eprintln!("pgrig: hint: load the tables first: pgrig tpcc load --warehouses N");
    }
    1
}
