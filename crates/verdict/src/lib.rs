//! A verdict on a result: the named checks that say whether a run's figures are valid, steady and
//! representative, each a [`Finding`] with its severity, evidence and advice (issue 37).
//!
//! Everything here is arithmetic on figures the caller gathered (the client's counts, the
//! server's counters, the per-second series, the server's settings): no I/O, so every check is
//! tested on constructed cases. The checks:
//! - [`steady`]: the initial transient of a per-second series by MSER-5 (White 1997), the
//!   steady window and its figures, a trend inside it, a run too short to have one;
//! - [`window`]: those as findings (`warm_up`, `trend`, `too_short`, `unsettled`);
//! - [`checks`]: did it happen (client against server counters), errors;
//! - [`background`]: background work covered (checkpoints, autovacuum), the schedule under a
//!   rate;
//! - [`config`]: pre-flight (connections, branch rows, where the dataset lives, durability);
//! - [`judge`](mod@judge): the checks a run document's own figures support, written into it.

pub mod background;
pub mod checks;
pub mod config;
pub mod judge;
pub mod steady;
pub mod tquantile;
pub mod window;

pub use judge::judge;
pub use pgrig_document::finding::{self, worst, Evidence, Finding, Severity};
