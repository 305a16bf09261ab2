//! pgrig-replay: pgreplay 1.2's behaviour as a library.
//!
//! * [`parser::LogParser`]: a PostgreSQL log (stderr with pgreplay's `log_line_prefix`, csvlog,
//!   jsonlog) read into a stream of [`item::Item`]s — connects, statements, prepares, executions
//!   of prepared statements, cancels, disconnects — with pgreplay's warnings and statistics.
//! * [`replayfile`]: pgreplay's binary replay file, read and written byte for byte.
//! * [`replayer`]: the items replayed against a server, one connection per recorded session,
//!   at their recorded offsets scaled by a speed factor, with pgreplay's replay statistics.
//! * `--compare`: [`recorded`] (the log's durations and errors) and the replayer's measured
//!   latency, per normalised statement ([`normalize`], [`tally`]), compared and tabled
//!   ([`changes`]).
//! * [`source`]: the input opened as pgreplay opens it (a log, a replay file or a capture file).
//! * [`document`]: the replay document of one `pgrig replay` (`--json`, `--store`).

pub mod bind;
pub mod capture;
mod capture_diag;
pub mod capture_file;
pub mod capture_msg;
pub mod capture_peer;
pub mod capture_setup;
pub mod changes;
pub mod csv_variant;
pub mod document;
pub mod duration;
pub mod entry;
pub mod error;
pub mod filter;
pub mod item;
pub mod normalize;
pub mod parser;
pub mod reader;
pub mod recorded;
pub mod replayer;
pub mod replayfile;
pub mod served;
pub mod source;
pub mod stats;
pub mod tally;
pub mod time;

pub use error::Error;
pub use item::{Item, ItemKind};
