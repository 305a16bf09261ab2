//! pgrig's live OpenMetrics endpoint (`--metrics-addr HOST:PORT` of `bench`, `run`, sysbench's
//! command line and the coordinator of a segmented run): `live` holds a run's figures so far
//! and renders them as OpenMetrics text; `serve` taps the engine's sink and serves them over
//! `http`. The cli only
//! wires them (`pgrig_cli::metrics` re-exports this crate).

pub mod http;
pub mod live;
pub mod serve;

pub use live::*;
pub use serve::{Metrics, MetricsTap, Server};
