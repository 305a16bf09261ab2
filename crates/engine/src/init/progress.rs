//! Progress of the loading steps. Not on a terminal: pgbench's own lines of the `g` step,
//! `J of T tuples (P%) of TABLE done (elapsed E s, remaining R s)` every 100000 rows, or with
//! `-q` at most every 5 seconds (checked every 100 rows) and at the end, ending in `\n` (and,
//! for the pgbench-exact `--load-jobs 1` on a terminal, in `\r`, padded over longer previous
//! lines, the last one blanked). On a terminal: an indicatif bar per phase with rows, rate and
//! ETA ([`Meter`]), and a spinner with the elapsed time for steps without rows.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Where one phase's progress goes.
pub enum Meter {
    /// pgbench's text lines (returned as text for the sink)
    Lines(Progress),
    /// a terminal bar (drawn on stderr by indicatif)
    Bar(ProgressBar),
    /// nothing (a phase pgbench reports no progress for, not on a terminal)
    Off,
}

impl Meter {
    /// A phase that loads `total` rows of `table`.
    pub fn rows(table: &'static str, total: i64, quiet: bool, tty: TtyMode) -> Meter {
        match tty {
            TtyMode::Bars => {
                let bar = ProgressBar::with_draw_target(
                    Some(total.max(0) as u64),
                    ProgressDrawTarget::stderr_with_hz(8),
                );
                let style = ProgressStyle::with_template(
                    "{prefix:>16} [{bar:32}] {human_pos}/{human_len} rows  {per_sec:>14}  {elapsed_precise}  ETA {eta_precise}",
                )
                .map(|s| s.progress_chars("=> "))
                .unwrap_or_else(|_| ProgressStyle::default_bar());
                bar.set_style(style);
                bar.set_prefix(table);
                Meter::Bar(bar)
            }
            TtyMode::Lines(tty) => {
                Meter::Lines(Progress::new(table, total, quiet, tty, Instant::now()))
            }
        }
    }

    /// A phase without row counts: a spinner on a terminal, nothing otherwise.
    pub fn spinner(what: &'static str, tty: TtyMode) -> Meter {
        if tty != TtyMode::Bars {
            return Meter::Off;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(8));
        let style = ProgressStyle::with_template("{spinner} {prefix} {elapsed_precise}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_prefix(what);
        bar.enable_steady_tick(Duration::from_millis(125));
        Meter::Bar(bar)
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
            Meter::Bar(b) => {
                if j & 0x1fff == 0 {
                    b.set_position(j as u64);
                }
                None
            }
            Meter::Off => None,
        }
    }

    /// `n` more rows are done (phases that learn progress in chunks, e.g. server-side inserts).
    pub fn add(&mut self, n: i64) {
        if let Meter::Bar(b) = self {
            b.inc(n.max(0) as u64);
        }
    }

    /// The phase is over: a bar stays on screen at its final state, a spinner disappears.
    pub fn finish(&mut self) -> Option<String> {
        match self {
            Meter::Lines(p) => p.finish(),
            Meter::Bar(b) => {
                if b.length().is_some() {
                    if let Some(len) = b.length() {
                        b.set_position(len);
                    }
                    b.finish();
                } else {
                    b.finish_and_clear();
                }
                None
            }
            Meter::Off => None,
        }
    }
}

/// How progress shows: pgbench's lines (`true` = stderr is a terminal, lines end in `\r`), or
/// indicatif bars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TtyMode {
    Lines(bool),
    Bars,
}

/// Seconds between `-q` progress lines (pgbench's `LOG_STEP_SECONDS`).
const LOG_STEP_SECONDS: f64 = 5.0;

pub struct Progress {
    table: &'static str,
    total: i64,
    quiet: bool,
    tty: bool,
    start: Instant,
    log_interval: i64,
    chars: usize,
    prev_chars: usize,
}

impl Progress {
    pub fn new(table: &'static str, total: i64, quiet: bool, tty: bool, start: Instant) -> Self {
        Progress {
            table,
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
