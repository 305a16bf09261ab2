//! The seam between the `sysbench` command line and the sysbench workloads
//! (`pgrig_workloads::sysbench`): which tests exist, each test's own options (for `help` and
//! to tell its options from unknown ones), and building a test into a [`Native`] workload.
//! The command line knows the workloads only through [`Tests`]; `join::tests` is the one place
//! that names the implementation.

use pgrig_workloads::{Native, OptionError, Options};

/// How a test option's value is written (sysbench's `=N`, `[=on|off]`, `=STRING`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptKind {
    Int,
    Float,
    Bool,
    Str,
}

/// One option of a test, as `sysbench TEST help` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct TestOption {
    /// sysbench's spelling (`table_size`, `range_selects`)
    pub name: String,
    pub kind: OptKind,
    pub help: String,
    /// shown in `[...]` after the help; `None`: no default shown
    pub default: Option<String>,
    /// The test's own (`TEST help` lists it); else a general option the test also reads
    /// (`--rand-type`, `--threads`), passed on when given.
    pub own: bool,
}

/// The sysbench tests pgrig runs.
pub trait Tests: Sync {
    /// Whether `test` is one (`oltp_read_write`, ...).
    fn has(&self, test: &str) -> bool;
    /// Every option the test reads: its own, then the general ones it also reads.
    fn options(&self, test: &str) -> Vec<TestOption>;
    /// The test built from its options (names as given, `-` and `_` alike).
    fn build(&self, test: &str, options: &Options) -> Result<Native, OptionError>;
    /// Why the test's `cleanup` refuses these options (select_random_* with `--tables` > 1).
    fn cleanup_refusal(&self, test: &str, options: &Options) -> Option<String>;
}
