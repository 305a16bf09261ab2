//! What a coordinator tells whoever follows a run with it (`Follower`): each interval row as it
//! is read, each look at the workers, the end. A Lua script run's merged interval lines
//! (`segment_lines`) are one.

use std::collections::BTreeMap;

use crate::protocol::{Interval, WorkerRow};
use crate::FleetError;

/// Told what the coordinator reads while it follows a run (a Lua script run's merged interval
/// lines, `segment_lines`).
pub trait Follower {
    /// A new interval row (`id`), passed by `check::interval`, before the live
    /// figures take it; an error (a refused row) fails the run.
    fn row(&mut self, id: i64, i: &Interval) -> Result<(), FleetError>;
    /// After each look at the workers (every row written so far read): their rows and the
    /// segments marked silent.
    fn round(&mut self, ws: &[WorkerRow], silent: &BTreeMap<u32, f64>);
    /// The run has ended and every row written has been read.
    fn finish(&mut self);
}
