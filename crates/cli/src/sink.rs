//! The terminal sink: engine messages to stderr with pgbench's `PROG: level: ` prefixes, progress
//! lines in pgbench's format, banner/report text to stdout.

use std::io::Write;

use pgrig_engine::sink::{Level, Progress, Sink};

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

impl Sink for StderrSink {
    fn message(&self, level: Level, text: &str) {
        let line = self.format(level, text);
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
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
}
