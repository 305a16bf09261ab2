//! Each test's queries per event by sysbench's classes (read, write, other), for the
//! `--report-interval` lines (the engine's per-second figures count transactions, not
//! statements; the final report counts every statement). bulk_insert's writes per event are
//! an estimate (one INSERT per full buffer of rows).

use crate::Options;

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
        // an event is a row; an INSERT carries a full buffer's rows (an estimate: the
        // per-second figures count events, not statements)
        "bulk_insert" => {
            let (first, last) = super::bulk::bulk_batch(1, 1);
            (0.0, 1.0 / (last - first + 1) as f64, 0.0)
        }
        _ => (0.0, 1.0, 0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_write_runs_twenty_queries_per_event() {
        let (r, w, o) = per_event("oltp_read_write", &Options::new());
        assert_eq!((r, w, o), (14.0, 4.0, 2.0));
        let mut opts = Options::new();
        opts.set("skip_trx", "on").set("range_selects", "off");
        assert_eq!(per_event("oltp_read_write", &opts), (10.0, 4.0, 0.0));
    }
}
