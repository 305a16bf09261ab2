//! One benchmark run: config -> runner (threads x clients) -> client state machine -> stats ->
//! result. Knows nothing about terminals or argv: messages go to a [`sink::Sink`].

pub mod config;
pub mod cpu;
pub mod document;
pub mod error;
pub mod result;
pub mod sink;
pub mod stats;
pub mod stop;
pub mod workload;

pub mod ask;
mod client;
mod client_state;
mod compile;
mod debug;
mod exec;
mod log;
mod native;
mod native_run;
mod outcome;
mod pipeline;
mod runner;
mod setup;
mod shared;
mod sql;
mod worker;

pub use error::EngineError;
pub use runner::run_bench;
pub use stop::StopHandle;
