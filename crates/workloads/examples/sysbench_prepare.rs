//! `prepare` of a sysbench test with pgrig's loader, for bench/sysbench_prepare.sh (until the
//! `pgrig sysbench` command line exists everywhere): loads the tables, prints the load report.
//!
//! Usage: sysbench_prepare CONNINFO TEST JOBS [option=value ...]

use pgrig_engine::config::ConnArgs;
use pgrig_engine::sink::NullSink;
use pgrig_engine::stop::StopHandle;
use pgrig_workloads::{sysbench, Options};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: sysbench_prepare CONNINFO TEST JOBS [option=value ...]");
        std::process::exit(2);
    }
    let mut options = Options::new();
    for kv in &args[3..] {
        let Some((k, v)) = kv.split_once('=') else {
            eprintln!("not option=value: {kv}");
            std::process::exit(2);
        };
        options.set(k, v);
    }
    let native = sysbench::build(&args[1], &options).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    let conn = ConnArgs {
        dbname: Some(args[0].clone()),
        ..ConnArgs::default()
    };
    let jobs = args[2].parse().unwrap_or(0);
    match pgrig_init::generic::load(&conn, &native.load, jobs, &NullSink, &StopHandle::default()) {
        Ok(report) => println!("{}", report.summary()),
        Err(e) => {
            for (_, line) in e.lines {
                eprintln!("{line}");
            }
            std::process::exit(e.exit_code.max(1));
        }
    }
}
