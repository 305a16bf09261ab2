//! The terminal sink: engine messages to stderr with pgbench's `PROG: level: ` prefixes, progress
//! lines in pgbench's format, initialisation bars (indicatif) when stderr is a terminal,
//! banner/report text to stdout. Messages quoting scripts or arguments are written as the bytes
//! they came from (`pgrig_script::bytes`), as pgbench echoes them. Also [`out`] and [`err`]:
//! standard output and error that never panic (behind this crate's print macros, see `print`).

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pgrig_engine::sink::{InitProgress, Level, PhaseDisplay, Progress, Sink};

/// The first failure to write standard output other than a closed pipe.
static STDOUT_ERROR: Mutex<Option<String>> = Mutex::new(None);

/// Writes `text` to standard output and flushes it; never panics. A closed pipe (the reader left,
/// `| head`) drops the text silently; any other failure (a full device) is remembered for
/// [`stdout_status`].
pub fn out(text: &str) {
    if let Err(e) = write_stdout(text) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            if let Ok(mut first) = STDOUT_ERROR.lock() {
                first.get_or_insert_with(|| pgrig_wire::strerror(&e));
            }
        }
    }
}

/// Writes `text` to standard output and flushes it, returning the failure.
pub fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())?;
    o.flush()
}

/// Writes `text` to standard error; never panics (a failure is ignored, as pgbench ignores it).
pub fn err(text: &str) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(text.as_bytes());
    let _ = e.flush();
}

/// A command's exit status once its output is written: `code`, or 1 (with an error on stderr)
/// when standard output could not be written for another reason than a closed pipe.
pub fn stdout_status(code: i32) -> i32 {
    let failed = STDOUT_ERROR.lock().ok().and_then(|mut e| e.take());
    match failed {
        Some(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "pgrig: error: could not write to standard output: {e}"
            );
            if code == 0 {
                1
            } else {
                code
            }
        }
        None => code,
    }
}

pub struct StderrSink {
    /// `pgbench` or `pgrig`
    pub prog: String,
    pub max_tries: u32,
    pub rate: bool,
    pub latency_limit: bool,
    pub progress_timestamp: bool,
    /// `--json -`: standard output carries only the JSON, so the banner and the text report go
    /// to standard error.
    pub json_stdout: bool,
}

impl StderrSink {
    pub fn simple(prog: &str) -> Self {
        StderrSink {
            prog: prog.into(),
            max_tries: 1,
            rate: false,
            latency_limit: false,
            progress_timestamp: false,
            json_stdout: false,
        }
    }

    /// The full line for a message (no trailing newline except for `Raw`).
    pub fn format(&self, level: Level, text: &str) -> String {
        let p = &self.prog;
        match level {
            Level::Error => format!("{p}: error: {text}\n"),
            Level::Warning => format!("{p}: warning: {text}\n"),
            Level::Detail => format!("{p}: detail: {text}\n"),
            Level::Hint => format!("{p}: hint: {text}\n"),
            Level::Info | Level::Debug => format!("{p}: {text}\n"),
            Level::Raw => text.to_owned(),
        }
    }

    pub fn progress_line(&self, p: &Progress) -> String {
        let mut s = if self.progress_timestamp {
            format!("progress: {:.3} s", p.time)
        } else {
            format!("progress: {:.1} s", p.time)
        };
        s.push_str(&format!(
            ", {:.1} tps, lat {:.3} ms stddev {:.3}, {} failed",
            p.tps, p.latency_ms, p.stddev_ms, p.failed
        ));
        if self.rate {
            s.push_str(&format!(", lag {:.3} ms", p.lag_ms));
            if self.latency_limit {
                s.push_str(&format!(", {} skipped", p.skipped));
            }
        }
        if self.max_tries != 1 {
            s.push_str(&format!(", {} retried, {} retries", p.retried, p.retries));
        }
        s.push('\n');
        s
    }
}

/// Writes `line` and a newline to stderr, as the bytes it stands for.
pub fn eprint_line(line: &str) {
    let mut bytes = pgrig_script::bytes::encode(line);
    bytes.push(b'\n');
    let _ = std::io::stderr().lock().write_all(&bytes);
}

impl Sink for StderrSink {
    fn message(&self, level: Level, text: &str) {
        let line = self.format(level, text);
        let _ = std::io::stderr()
            .lock()
            .write_all(&pgrig_script::bytes::encode(&line));
    }

    fn stdout(&self, text: &str) {
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(text.as_bytes());
        let _ = o.flush();
    }

    fn banner(&self, server_version: &str) {
        let line = format!(
            "{} (pgrig {}, server {server_version})\n",
            self.prog,
            env!("CARGO_PKG_VERSION")
        );
        if self.json_stdout {
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        } else {
            self.stdout(&line);
        }
    }

    fn password(&self) -> Option<String> {
        Some(crate::prompt::read_password("Password: "))
    }

    fn progress(&self, p: &Progress) {
        let line = self.progress_line(p);
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    fn init_progress(&self) -> InitProgress {
        if std::io::stderr().is_terminal() {
            InitProgress::Displays
        } else {
            InitProgress::Lines { terminal: false }
        }
    }

    fn phase(&self, label: &str, rows: Option<u64>) -> Box<dyn PhaseDisplay> {
        Box::new(Bar::new(label, rows))
    }
}

/// An initialisation phase on the terminal: a bar with rows, rate and ETA, or a spinner with the
/// elapsed time for phases without rows.
pub struct Bar(ProgressBar);

impl Bar {
    pub fn new(label: &str, rows: Option<u64>) -> Bar {
        let bar = ProgressBar::with_draw_target(rows, ProgressDrawTarget::stderr_with_hz(8));
        let template = if rows.is_some() {
            "{prefix:>16} [{bar:32}] {human_pos}/{human_len} rows  {per_sec:>14}  {elapsed_precise}  ETA {eta_precise}"
        } else {
            "{spinner} {prefix} {elapsed_precise}"
        };
        let style = ProgressStyle::with_template(template)
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_prefix(label.to_string());
        if rows.is_none() {
            bar.enable_steady_tick(Duration::from_millis(125));
        }
        Bar(bar)
    }
}

impl PhaseDisplay for Bar {
    fn set_position(&self, rows: u64) {
        self.0.set_position(rows);
    }

    fn advance(&self, rows: u64) {
        self.0.inc(rows);
    }

    /// A bar stays on screen at its end; a spinner disappears.
    fn finish(&self) {
        match self.0.length() {
            Some(len) => {
                self.0.set_position(len);
                self.0.finish();
            }
            None => self.0.finish_and_clear(),
        }
    }
}
