//! pgreplay's replay statistics: counted as it counts them (calls to the server, sessions,
//! statements and their durations), printed in its words, and the "behind schedule" steps.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

/// Lag of the items due in one second of the replay.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LagSecond {
    pub items: u64,
    /// Items consumed 1 ms or more after they were due.
    pub late: u64,
    pub max: Duration,
    /// Lag spent waiting for the server to answer the session's previous statement.
    pub server: Duration,
    /// Lag after that: the replayer did not get to the item sooner.
    pub replayer: Duration,
}

/// Lag shorter than this is not counted as late.
const LATE: Duration = Duration::from_millis(1);

/// Counters of a replay.
#[derive(Debug, Default, Clone)]
pub struct ReplayStats {
    pub speed: f64,
    pub run_time: Duration,
    /// Largest lag behind schedule seen, whole seconds as pgreplay counts them.
    pub secs_behind: i64,
    /// Items consumed ("calls to the server").
    pub actions: u64,
    pub sessions_total: u64,
    pub sessions_now: u64,
    pub sessions_max: u64,
    pub session_time: Duration,
    /// Results received (statements, including preparations).
    pub results: u64,
    pub prepares: u64,
    pub errors: u64,
    pub statements_now: u64,
    pub statements_max: u64,
    pub busy: Duration,
    pub longest: Duration,
    pub hist: [u64; 5],
    /// Delay steps already announced.
    pub shown: usize,
    /// Lag by second of the replay (pgrig's addition).
    pub lag_by_second: BTreeMap<u64, LagSecond>,
}

/// pgreplay's delay report steps: seconds behind and how it words them.
pub const DELAY_STEPS: [(i64, &str); 11] = [
    (10, "10 seconds"),
    (30, "30 seconds"),
    (60, "1 minute"),
    (180, "3 minutes"),
    (600, "10 minutes"),
    (1800, "30 minutes"),
    (3600, "1 hour"),
    (7200, "2 hours"),
    (21600, "6 hours"),
    (43200, "12 hours"),
    (86400, "1 day"),
];

impl ReplayStats {
    /// Records a lag; returns the lines pgreplay prints on standard output for it.
    pub fn lag(&mut self, secs: i64) -> Vec<String> {
        let mut out = Vec::new();
        if secs > self.secs_behind {
            self.secs_behind = secs;
            while self.shown < DELAY_STEPS.len() && DELAY_STEPS[self.shown].0 <= secs {
                out.push(format!(
                    "Execution is {} behind schedule",
                    DELAY_STEPS[self.shown].1
                ));
                self.shown += 1;
            }
        }
        out
    }

    /// Records the exact lag of an item due in `second`, `server` of it waiting for the server.
    pub fn record_lag(&mut self, second: u64, late: Duration, server: Duration) {
        let e = self.lag_by_second.entry(second).or_default();
        e.items += 1;
        if late >= LATE {
            e.late += 1;
            e.max = e.max.max(late);
            e.server += server;
            e.replayer += late.saturating_sub(server);
        }
    }

    /// pgrig's lag report: who was behind, per second of the replay (seconds with late items,
    /// at most `limit` lines, the latest-running first dropped last).
    pub fn lag_report(&self, limit: usize) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            "\nLag behind schedule (pgrig)\n===========================\n\n"
        );
        let items: u64 = self.lag_by_second.values().map(|l| l.items).sum();
        let late: u64 = self.lag_by_second.values().map(|l| l.late).sum();
        let server: Duration = self.lag_by_second.values().map(|l| l.server).sum();
        let replayer: Duration = self.lag_by_second.values().map(|l| l.replayer).sum();
        let _ = writeln!(s, "Items consumed 1 ms or more late: {late} of {items}");
        let _ = writeln!(
            s,
            "Lag waiting for the server: {:.3} seconds; replayer busy: {:.3} seconds",
            server.as_secs_f64(),
            replayer.as_secs_f64()
        );
        let rows: Vec<_> = self
            .lag_by_second
            .iter()
            .filter(|(_, l)| l.late > 0)
            .collect();
        if rows.is_empty() {
            return s;
        }
        let _ = writeln!(
            s,
            "second  items   late  max lag (s)  waiting for server (s)  replayer busy (s)"
        );
        for (sec, l) in rows.iter().take(limit) {
            let _ = writeln!(
                s,
                "{sec:>6} {:>6} {:>6} {:>12.3} {:>23.3} {:>18.3}",
                l.items,
                l.late,
                l.max.as_secs_f64(),
                l.server.as_secs_f64(),
                l.replayer.as_secs_f64()
            );
        }
        if rows.len() > limit {
            let _ = writeln!(s, "({} more seconds with late items)", rows.len() - limit);
        }
        s
    }

    /// Records one statement's duration.
    pub fn statement_done(&mut self, d: Duration) {
        let us = d.as_micros();
        let slot = match us {
            0..=20_000 => 0,
            20_001..=100_000 => 1,
            100_001..=500_000 => 2,
            500_001..=1_999_999 => 3,
            _ => 4,
        };
        self.hist[slot] += 1;
        self.longest = self.longest.max(d);
        self.busy += d;
        self.statements_now = self.statements_now.saturating_sub(1);
    }

    /// The "Replay statistics" block, starting with its blank line.
    pub fn report(&self) -> String {
        let mut s = String::new();
        let _ = write!(s, "\nReplay statistics\n=================\n\n");
        let runtime = self.run_time.as_secs_f64();
        let total = self.run_time.as_secs();
        let (hours, minutes) = (total / 3600, (total % 3600) / 60);
        let seconds = (total % 60) as f64 + f64::from(self.run_time.subsec_micros()) / 1e6;
        let busy = self.busy.as_secs_f64();
        let session = self.session_time.as_secs_f64();
        let _ = writeln!(s, "Speed factor for replay: {:.3}", self.speed);
        let _ = write!(s, "Total run time:");
        if hours > 0 {
            let _ = write!(s, " {hours} hours");
        }
        if minutes > 0 {
            let _ = write!(s, " {minutes} minutes");
        }
        let _ = writeln!(s, " {seconds:.3} seconds");
        let _ = writeln!(
            s,
            "Maximum lag behind schedule: {} seconds",
            self.secs_behind
        );
        let _ = writeln!(s, "Calls to the server: {}", self.actions);
        if runtime > 0.0 {
            let _ = writeln!(s, "({:.3} calls per second)", self.actions as f64 / runtime);
        }
        let _ = writeln!(s, "Total number of connections: {}", self.sessions_total);
        let _ = writeln!(
            s,
            "Maximum number of concurrent connections: {}",
            self.sessions_max
        );
        if runtime > 0.0 {
            let _ = writeln!(
                s,
                "Average number of concurrent connections: {:.3}",
                session / runtime
            );
        }
        if session > 0.0 {
            let _ = writeln!(
                s,
                "Average session idle percentage: {:.3}%",
                100.0 * (session - busy) / session
            );
        }
        let executed = self.results.saturating_sub(self.prepares);
        let _ = writeln!(s, "SQL statements executed: {executed}");
        if executed > 0 {
            self.statement_lines(&mut s, executed, runtime, busy);
        }
        s
    }

    fn statement_lines(&self, s: &mut String, executed: u64, runtime: f64, busy: f64) {
        let _ = writeln!(
            s,
            "({} or {:.3}% of these completed with error)",
            self.errors,
            100.0 * self.errors as f64 / executed as f64
        );
        let _ = writeln!(
            s,
            "Maximum number of concurrent SQL statements: {}",
            self.statements_max
        );
        if runtime > 0.0 {
            let _ = writeln!(
                s,
                "Average number of concurrent SQL statements: {:.3}",
                busy / runtime
            );
        }
        let _ = writeln!(
            s,
            "Average SQL statement duration: {:.3} seconds",
            busy / self.results as f64
        );
        let _ = writeln!(
            s,
            "Maximum SQL statement duration: {:.3} seconds",
            self.longest.as_secs_f64()
        );
        let total: u64 = self.hist.iter().sum::<u64>().max(1);
        let pct = |i: usize| 100.0 * self.hist[i] as f64 / total as f64;
        let _ = writeln!(s, "Statement duration histogram:");
        let _ = writeln!(s, "  0    to 0.02 seconds: {:.3}%", pct(0));
        let _ = writeln!(s, "  0.02 to 0.1  seconds: {:.3}%", pct(1));
        let _ = writeln!(s, "  0.1  to 0.5  seconds: {:.3}%", pct(2));
        let _ = writeln!(s, "  0.5  to 2    seconds: {:.3}%", pct(3));
        let _ = writeln!(s, "     over 2    seconds: {:.3}%", pct(4));
    }
}
