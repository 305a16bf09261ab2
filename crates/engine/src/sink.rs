//! Where the engine's messages go. The engine never prints: the CLI (or a study) implements
//! [`Sink`] and decides on prefixes, streams and formats.

/// Diagnostics in pgbench's levels. `Raw` lines are printed as they are (e.g. `debug()` output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Detail,
    Hint,
    Info,
    Debug,
    /// printed exactly as given to stderr (no prefix, no newline added)
    Raw,
}

/// One progress report (`-P`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// seconds since the run started (or the Unix epoch with `--progress-timestamp`)
    pub time: f64,
    pub tps: f64,
    pub latency_ms: f64,
    pub stddev_ms: f64,
    pub failed: u64,
    pub lag_ms: f64,
    pub skipped: u64,
    pub retried: u64,
    pub retries: u64,
    /// client CPU time over the interval: the busiest worker thread's share of it on a CPU (0..1)
    pub client_cpu_time: f64,
    /// client run-queue wait over the interval: the largest share of it a worker thread spent
    /// ready to run but waiting for a CPU (0..1)
    pub client_run_queue_wait: f64,
}

/// One whole second of the run, as it completes (every second, whatever `-P` says): what
/// happened in it over all threads and the latency distribution of its successful transactions
/// (µs). For interval reports (sysbench's `--report-interval`), live metrics and merging runs
/// from several hosts.
#[derive(Clone, Copy, Debug)]
pub struct SecondReport<'a> {
    /// 1 = the first second of the benchmark
    pub second: u64,
    /// counts and latency moments of this second
    pub delta: &'a crate::stats::Snapshot,
    /// latency histogram of this second's successful transactions, µs
    pub histogram: &'a hdrhistogram::Histogram<u64>,
}

/// How initialisation (`pgbench -i`) shows the progress of its loading phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitProgress {
    /// pgbench's text lines, through [`Sink::message`] (`terminal`: lines end in `\r`, as
    /// pgbench's do on a terminal)
    Lines { terminal: bool },
    /// a [`PhaseDisplay`] per phase from [`Sink::phase`] (bars on a terminal), and a summary
    /// of the step times at the end
    Displays,
}

/// The display of one initialisation phase, drawn by the front end: a bar when the phase
/// counts rows, a spinner otherwise.
pub trait PhaseDisplay {
    /// `rows` rows of the phase are done.
    fn set_position(&self, rows: u64);
    /// `rows` more rows are done.
    fn advance(&self, rows: u64);
    /// The phase is over (a bar stays at its end, a spinner goes away).
    fn finish(&self);
}

/// A display that shows nothing.
pub struct NoDisplay;

impl PhaseDisplay for NoDisplay {
    fn set_position(&self, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

pub trait Sink: Send + Sync {
    fn message(&self, level: Level, text: &str);
    /// Report text for standard output (the banner before the run).
    fn stdout(&self, text: &str);
    fn progress(&self, p: &Progress);
    /// The version line pgbench prints once connected (`pgbench (15.4, server 16.1)`); pgrig
    /// names itself and the server. Default: nothing.
    fn banner(&self, _server_version: &str) {}
    /// Called once per benchmark when setup (scale detection, vacuum) is done, right before the
    /// clients connect and run (e.g. to start a profiler). Default: nothing.
    fn measuring(&self) {}
    /// Each second of the benchmark once all threads have passed it. Default: nothing.
    fn second(&self, _s: &SecondReport<'_>) {}
    /// How initialisation shows progress. Default: pgbench's lines.
    fn init_progress(&self) -> InitProgress {
        InitProgress::Lines { terminal: false }
    }
    /// The display of one initialisation phase under [`InitProgress::Displays`]: `label` names
    /// it, `rows` is its row count (`None`: a phase without rows).
    fn phase(&self, _label: &str, _rows: Option<u64>) -> Box<dyn PhaseDisplay> {
        Box::new(NoDisplay)
    }
    /// pgbench's password prompt: asked once when the server wants a password and none is
    /// known; `None` when there is no one to ask (default).
    fn password(&self) -> Option<String> {
        None
    }
    /// A native workload's statement failed and the error ends client `client` (not
    /// retryable): `sql` as sent (values inlined when `simple`: sent as a simple query), the
    /// SQLSTATE and the server's message. `true`: the sink reported it in its own words (the
    /// sysbench drop-in prints sysbench's driver lines); `false` (default): the engine prints
    /// pgbench's abort line.
    fn sql_abort(&self, _client: u32, _sql: &[u8], _simple: bool, _error: (&str, &str)) -> bool {
        false
    }
}

/// What a sink wrapper adds to the sink it wraps ([`Tapped`]): it sees the benchmark's start
/// and each of its seconds before they are passed on. Defaults: nothing.
pub trait Tap: Send + Sync {
    fn measuring(&self) {}
    fn second(&self, _s: &SecondReport<'_>) {}
}

impl<T: Tap + ?Sized> Tap for std::sync::Arc<T> {
    fn measuring(&self) {
        (**self).measuring()
    }
    fn second(&self, s: &SecondReport<'_>) {
        (**self).second(s)
    }
}

/// A sink that passes every event to `inner`, after letting `tap` see the start and the seconds.
/// The one pass-through: a wrapper that writes its own forwarding forgets the next method added
/// to [`Sink`].
pub struct Tapped<T> {
    pub inner: std::sync::Arc<dyn Sink>,
    pub tap: T,
}

impl<T: Tap> Sink for Tapped<T> {
    fn message(&self, level: Level, text: &str) {
        self.inner.message(level, text)
    }
    fn stdout(&self, text: &str) {
        self.inner.stdout(text)
    }
    fn progress(&self, p: &Progress) {
        self.inner.progress(p)
    }
    fn banner(&self, server_version: &str) {
        self.inner.banner(server_version)
    }
    fn measuring(&self) {
        self.tap.measuring();
        self.inner.measuring()
    }
    fn second(&self, s: &SecondReport<'_>) {
        self.tap.second(s);
        self.inner.second(s)
    }
    fn init_progress(&self) -> InitProgress {
        self.inner.init_progress()
    }
    fn phase(&self, label: &str, rows: Option<u64>) -> Box<dyn PhaseDisplay> {
        self.inner.phase(label, rows)
    }
    fn password(&self) -> Option<String> {
        self.inner.password()
    }
    fn sql_abort(&self, client: u32, sql: &[u8], simple: bool, error: (&str, &str)) -> bool {
        self.inner.sql_abort(client, sql, simple, error)
    }
}

/// A sink that drops everything (for library users and tests).
pub struct NullSink;

impl Sink for NullSink {
    fn message(&self, _: Level, _: &str) {}
    fn stdout(&self, _: &str) {}
    fn progress(&self, _: &Progress) {}
}

/// libpq's default notice processor for the run's connections: each NOTICE/WARNING the server
/// sends is printed as libpq prints it (`NOTICE:  text`, then `DETAIL:`/`HINT:` lines).
pub(crate) fn notice_printer(sink: std::sync::Arc<dyn Sink>) -> pgrig_wire::NoticeHandler {
    std::sync::Arc::new(move |fields: &pgrig_wire::ErrorFields<'_>| {
        let mut text = fields.to_db_error().to_string();
        text.push('\n');
        sink.message(Level::Raw, &text);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    /// Records every event it is given.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl Sink for Recorder {
        fn message(&self, _: Level, text: &str) {
            self.0.lock().unwrap().push(format!("message {text}"));
        }
        fn stdout(&self, text: &str) {
            self.0.lock().unwrap().push(format!("stdout {text}"));
        }
        fn progress(&self, _: &Progress) {
            self.0.lock().unwrap().push("progress".into());
        }
        fn banner(&self, v: &str) {
            self.0.lock().unwrap().push(format!("banner {v}"));
        }
        fn measuring(&self) {
            self.0.lock().unwrap().push("measuring".into());
        }
        fn password(&self) -> Option<String> {
            Some("from inner".into())
        }
        fn sql_abort(&self, client: u32, _: &[u8], _: bool, _: (&str, &str)) -> bool {
            self.0.lock().unwrap().push(format!("sql_abort {client}"));
            true
        }
    }

    #[derive(Default)]
    struct Counter(AtomicUsize);

    impl Tap for Counter {
        fn measuring(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_tapped_sink_passes_every_event_on_and_lets_the_tap_see_the_start() {
        let inner = Arc::new(Recorder::default());
        let tap = Arc::new(Counter::default());
        let s = Tapped {
            inner: inner.clone(),
            tap: tap.clone(),
        };
        s.message(Level::Info, "m");
        s.stdout("o");
        s.progress(&Progress {
            time: 1.0,
            tps: 0.0,
            latency_ms: 0.0,
            stddev_ms: 0.0,
            failed: 0,
            lag_ms: 0.0,
            skipped: 0,
            retried: 0,
            retries: 0,
            client_cpu_time: 0.0,
            client_run_queue_wait: 0.0,
        });
        s.banner("18");
        s.measuring();
        assert_eq!(s.password().as_deref(), Some("from inner"));
        assert!(s.sql_abort(7, b"select", true, ("42P01", "no table")));
        assert_eq!(tap.0.load(Ordering::SeqCst), 1);
        assert_eq!(
            *inner.0.lock().unwrap(),
            [
                "message m",
                "stdout o",
                "progress",
                "banner 18",
                "measuring",
                "sql_abort 7"
            ]
        );
    }
}
