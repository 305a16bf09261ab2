//! sysbench's report rendered from a fixed run document (pure): the run header, an interval
//! line, the final report with `--histogram`, and a disabled percentile — byte for byte in
//! sysbench 1.0.20's layout.

use pgrig_cli::sysbench::report::{self, Header, Interval, Summary};
use pgrig_engine::document::{ClientDoc, CommandDoc, RunDocument};

/// A document of 100 oltp-like transactions by 2 clients over 2 s.
fn document() -> RunDocument {
    let text = include_str!("snapshots/run_document.json");
    let mut doc: RunDocument = serde_json::from_str(text).expect("document");
    doc.workload = Some("oltp_read_write".into());
    doc.transactions.ok = 100;
    doc.transactions.retries = 3;
    doc.duration_s = 2.0;
    doc.latency_ms.mean = 2.5;
    doc.latency_ms.min = 0.75;
    doc.latency_ms.max = 12.5;
    let cmd = |text: &str, executions, failures| CommandDoc {
        text: text.into(),
        executions,
        latency_ms_mean: 0.1,
        failures,
        retries: 0,
        latency_ms: None,
    };
    doc.scripts.truncate(1);
    doc.scripts[0].commands = vec![
        cmd("BEGIN", 103, 0),
        cmd("SELECT c FROM sbtest1 WHERE id=$1", 1000, 0),
        cmd("UPDATE sbtest1 SET k=k+1 WHERE id=$1", 103, 3),
        cmd("DELETE FROM sbtest1 WHERE id=$1", 100, 0),
        cmd(
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES ($1, $2, $3, $4)",
            100,
            0,
        ),
        cmd("COMMIT", 100, 0),
    ];
    doc.clients = vec![
        ClientDoc {
            id: 0,
            transactions: 60,
            busy_s: 0.15,
            unfinished_s: None,
        },
        ClientDoc {
            id: 1,
            transactions: 40,
            busy_s: 0.1,
            unfinished_s: None,
        },
    ];
    doc.latency_histogram.buckets = vec![(1000, 50), (2000, 40), (10_000, 10)];
    doc
}

#[test]
fn the_header_is_sysbenchs() {
    let h = Header {
        threads: 4,
        rate: 100,
        report_interval: 1,
        rand_seed: 7,
        forced_shutdown: None,
    };
    assert_eq!(
        report::header(&h),
        "Running the test with following options:\nNumber of threads: 4\n\
         Target transaction rate: 100/sec\nReport intermediate results every 1 second(s)\n\
         Initializing random number generator from seed (7).\n\n\nInitializing worker threads...\n\n"
    );
}

#[test]
fn an_interval_line_is_sysbenchs() {
    let i = Interval {
        time_s: 3.0,
        seconds: 1.0,
        threads: 2,
        events: 726.58,
        reads: 10209.99,
        writes: 1951.18,
        other: 2418.26,
        percentile: 95,
        latency_ms: 3.75,
        errors: 2.0,
        reconnects: 0.0,
        queue: None,
    };
    assert_eq!(
        report::interval(&i),
        "[ 3s ] thds: 2 tps: 726.58 qps: 14579.43 (r/w/o: 10209.99/1951.18/2418.26) lat (ms,95%): 3.75 err/s: 2.00 reconn/s: 0.00\n"
    );
}

#[test]
fn the_final_report_is_sysbenchs() {
    let s = Summary::of(&document(), 95, true);
    let expected = "\
Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       1.007 |**************************************** 50
       1.996 |********************************         40
      10.090 |********                                 10
 
SQL statistics:
    queries performed:
        read:                            1000
        write:                           300
        other:                           203
        total:                           1503
    transactions:                        100    (50.00 per sec.)
    queries:                             1503   (751.50 per sec.)
    ignored errors:                      3      (1.50 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          2.0000s
    total number of events:              100

Latency (ms):
         min:                                    0.75
         avg:                                    2.50
         max:                                   12.50
         95th percentile:                       10.09
         sum:                                  250.00

Threads fairness:
    events (avg/stddev):           50.0000/10.00
    execution time (avg/stddev):   0.1250/0.02

";
    assert_eq!(report::summary(&s), expected);
}

#[test]
fn percentile_zero_disables_the_percentile_line() {
    let s = Summary::of(&document(), 0, false);
    let text = report::summary(&s);
    assert!(text.contains("\n         percentile stats:               disabled\n"));
    assert!(!text.contains("Latency histogram"));
}
