//! Progress of the loading steps. Not on a terminal: pgbench's own lines of the `g` step,
//! `J of T tuples (P%) of TABLE done (elapsed E s, remaining R s)` every 100000 rows, or with
//! `-q` at most every 5 seconds (checked every 100 rows) and at the end, ending in `\n` (and,
//! when the sink asks for terminal lines, in `\r`, padded over longer previous lines, the last
//! one blanked). When the sink draws displays ([`InitProgress::Displays`], bars on a terminal):
//! a [`PhaseDisplay`] per phase, fed rows ([`Meter`]); the drawing is the sink's.

use std::time::{Duration, Instant};

use pgrig_engine::sink::{InitProgress, PhaseDisplay, Sink};

/// Where one phase's progress goes.
pub enum Meter {
    /// pgbench's text lines (returned as text for the sink)
    Lines(Progress),
    /// the sink's display of the phase
    Display(Box<dyn PhaseDisplay>),
    /// nothing (a phase pgbench reports no progress for, without displays)
    Off,
}

impl Meter {
    /// A phase that loads `total` rows of `table`.
    pub fn rows(
        table: &str,
        total: i64,
        quiet: bool,
        mode: InitProgress,
        sink: &dyn Sink,
    ) -> Meter {
        match mode {
            InitProgress::Displays => Meter::Display(sink.phase(table, Some(total.max(0) as u64))),
            InitProgress::Lines { terminal } => {
                Meter::Lines(Progress::new(table, total, quiet, terminal, Instant::now()))
            }
        }
    }

    /// A phase without row counts: a display (spinner) when the sink draws them, else nothing.
    pub fn spinner(what: &'static str, mode: InitProgress, sink: &dyn Sink) -> Meter {
        match mode {
            InitProgress::Displays => Meter::Display(sink.phase(what, None)),
            InitProgress::Lines { .. } => Meter::Off,
        }
    }

    /// Rows `1..=j` were sent; returns progress text to print, if any. Cheap when nothing is due.
    #[inline]
    pub fn row(&mut self, j: i64) -> Option<String> {
        match self {
            Meter::Lines(p) => {
                if p.due(j) {
                    p.tick(j, Instant::now())
                } else {
                    None
                }
            }
            Meter::Display(d) => {
                if j & 0x1fff == 0 {
                    d.set_position(j as u64);
                }
                None
            }
            Meter::Off => None,
        }
    }

    /// `n` more rows are done (phases that learn progress in chunks, e.g. server-side inserts).
    pub fn add(&mut self, n: i64) {
        if let Meter::Display(d) = self {
            d.advance(n.max(0) as u64);
        }
    }

    /// The phase is over.
    pub fn finish(&mut self) -> Option<String> {
        match self {
            Meter::Lines(p) => p.finish(),
            Meter::Display(d) => {
                d.finish();
                None
            }
            Meter::Off => None,
        }
    }
}

/// Seconds between `-q` progress lines (pgbench's `LOG_STEP_SECONDS`).
const LOG_STEP_SECONDS: f64 = 5.0;

pub struct Progress {
    table: String,
    total: i64,
    quiet: bool,
    tty: bool,
    start: Instant,
    log_interval: i64,
    chars: usize,
    prev_chars: usize,
}

impl Progress {
    pub fn new(table: &str, total: i64, quiet: bool, tty: bool, start: Instant) -> Self {
        Progress {
            table: table.to_string(),
            total,
            quiet,
            tty,
            start,
            log_interval: 1,
            chars: 0,
            prev_chars: 0,
        }
    }

    /// Whether row `j` (1-based count of rows sent) may produce a line; cheap, no clock read.
    #[inline]
    pub fn due(&self, j: i64) -> bool {
        if self.quiet {
            j % 100 == 0
        } else {
            j % 100_000 == 0
        }
    }

    /// Called after row `j` was sent when [`Progress::due`]; returns the text to print, if any.
    pub fn tick(&mut self, j: i64, now: Instant) -> Option<String> {
        let elapsed = now.saturating_duration_since(self.start);
        self.tick_elapsed(j, elapsed)
    }

    fn tick_elapsed(&mut self, j: i64, elapsed: Duration) -> Option<String> {
        if !self.due(j) || j <= 0 {
            return None;
        }
        let elapsed_sec = elapsed.as_secs_f64();
        if self.quiet
            && j != self.total
            && elapsed_sec < self.log_interval as f64 * LOG_STEP_SECONDS
        {
            return None;
        }
        let remaining = (self.total - j) as f64 * elapsed_sec / j as f64;
        let pct = j.saturating_mul(100) / self.total.max(1);
        let line = format!(
            "{j} of {} tuples ({pct}%) of {} done (elapsed {elapsed_sec:.2} s, remaining {remaining:.2} s)",
            self.total, self.table
        );
        self.chars = line.len();
        let mut out = line;
        if self.prev_chars > self.chars {
            out.push_str(&" ".repeat(self.prev_chars - self.chars));
        }
        out.push(if self.tty { '\r' } else { '\n' });
        self.prev_chars = self.chars;
        if self.quiet {
            self.log_interval = (elapsed_sec / LOG_STEP_SECONDS).ceil() as i64;
        }
        Some(out)
    }

    /// Text to print after the last row: on a terminal, blanks the last progress line.
    pub fn finish(&self) -> Option<String> {
        if self.chars != 0 && self.tty {
            Some(format!("{}\r", " ".repeat(self.chars)))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    fn p(total: i64, quiet: bool, tty: bool) -> Progress {
        Progress::new("pgbench_accounts", total, quiet, tty, Instant::now())
    }

    #[test]
    fn line_every_hundred_thousand_rows_with_newline() {
        let mut pr = p(200_000, false, false);
        assert_eq!(pr.tick_elapsed(99_999, secs(1.0)), None);
        assert_eq!(
            pr.tick_elapsed(100_000, secs(1.0)).as_deref(),
            Some("100000 of 200000 tuples (50%) of pgbench_accounts done (elapsed 1.00 s, remaining 1.00 s)\n")
        );
        assert_eq!(pr.finish(), None);
    }

    #[test]
    fn terminal_lines_end_in_carriage_return_and_are_blanked() {
        let mut pr = p(1_000_000, false, true);
        let a = pr.tick_elapsed(900_000, secs(9.5)).unwrap_or_default();
        assert!(a.ends_with("remaining 1.06 s)\r"), "{a}");
        let b = pr.tick_elapsed(1_000_000, secs(10.0)).unwrap_or_default();
        // longer than the previous line: no padding
        assert!(
            b.len() > a.len() && b.ends_with("remaining 0.00 s)\r"),
            "{b}"
        );
        let fin = pr.finish().unwrap_or_default();
        assert_eq!(fin.len(), b.len());
        assert!(fin.trim_end_matches('\r').chars().all(|c| c == ' '));
    }

    #[test]
    fn shorter_line_is_padded_over_previous() {
        let mut pr = p(1_000_000, false, true);
        let a = pr.tick_elapsed(100_000, secs(123.0)).unwrap_or_default();
        let b = pr.tick_elapsed(200_000, secs(124.0)).unwrap_or_default();
        assert_eq!(a.len(), b.len());
        assert!(b.ends_with(" \r"));
    }

    #[test]
    fn quiet_prints_every_five_seconds_and_at_end() {
        let mut pr = p(1_000_000, true, false);
        assert_eq!(pr.tick_elapsed(100_000, secs(4.9)), None);
        assert!(pr.tick_elapsed(100_100, secs(5.2)).is_some());
        assert_eq!(pr.tick_elapsed(100_200, secs(9.9)), None);
        assert!(pr.tick_elapsed(100_300, secs(10.1)).is_some());
        assert_eq!(
            pr.tick_elapsed(100_350, secs(20.0)),
            None,
            "only every 100 rows"
        );
        assert!(
            pr.tick_elapsed(1_000_000, secs(10.2)).is_some(),
            "end is always reported"
        );
    }

    #[test]
    fn quiet_small_table_never_reports_below_hundred_rows() {
        let mut pr = p(1, true, false);
        assert_eq!(pr.tick_elapsed(1, secs(0.1)), None);
    }

    #[test]
    fn percent_is_truncated() {
        let mut pr = p(300_000, false, false);
        let a = pr.tick_elapsed(100_000, secs(0.0)).unwrap_or_default();
        assert!(a.contains("(33%)"), "{a}");
    }
}
