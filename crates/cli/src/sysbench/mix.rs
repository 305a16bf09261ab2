//! How sysbench counts queries: reads (statements returning rows), writes (statements changing
//! rows) and other (transaction control). pgrig classifies each statement by its SQL verb,
//! and knows each test's queries per event for the `--report-interval` lines.

use pgrig_workloads::Options;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    Other,
}

/// The kind of statement `sql`.
pub fn kind(sql: &str) -> Kind {
    let verb: String = sql
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_uppercase();
    match verb.as_str() {
        "SELECT" | "WITH" | "VALUES" | "TABLE" => Kind::Read,
        "INSERT" | "UPDATE" | "DELETE" | "MERGE" => Kind::Write,
        _ => Kind::Other,
    }
}

/// Queries per event (read, write, other) of `test` with its options, as its script runs them.
pub fn per_event(test: &str, o: &Options) -> (f64, f64, f64) {
    let n = |k: &str, d: u64| o.u64(k, d).unwrap_or(d) as f64;
    let on = |k: &str, d: bool| o.bool(k, d).unwrap_or(d);
    let ranges = if on("range_selects", true) {
        n("simple_ranges", 1) + n("sum_ranges", 1) + n("order_ranges", 1) + n("distinct_ranges", 1)
    } else {
        0.0
    };
    let reads = n("point_selects", 10) + ranges;
    let writes = n("index_updates", 1) + n("non_index_updates", 1) + 2.0 * n("delete_inserts", 1);
    let trx = if on("skip_trx", false) { 0.0 } else { 2.0 };
    match test {
        "oltp_read_write" => (reads, writes, trx),
        "oltp_read_only" => (reads, 0.0, trx),
        "oltp_write_only" => (0.0, writes, trx),
        "oltp_point_select" | "select_random_points" | "select_random_ranges" => (1.0, 0.0, 0.0),
        _ => (0.0, 1.0, 0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_counted_by_verb() {
        assert_eq!(kind("SELECT c FROM sbtest1 WHERE id=$1"), Kind::Read);
        assert_eq!(kind("  update sbtest1 SET k=k+1"), Kind::Write);
        assert_eq!(kind("BEGIN"), Kind::Other);
    }

    #[test]
    fn read_write_runs_twenty_queries_per_event() {
        let (r, w, o) = per_event("oltp_read_write", &Options::new());
        assert_eq!((r, w, o), (14.0, 4.0, 2.0));
        let mut opts = Options::new();
        opts.set("skip_trx", "on").set("range_selects", "off");
        assert_eq!(per_event("oltp_read_write", &opts), (10.0, 4.0, 0.0));
    }
}
