//! One benchmark run: config -> runner (threads x clients) -> client state machine -> stats -> result.
//! Knows nothing about terminals or argv.

pub mod config;
