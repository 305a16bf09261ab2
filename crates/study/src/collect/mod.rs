//! Collectors: server counters and relation sizes (`stats`), wait events and server process
//! usage sampled alongside a run (`sampler`), perf profiles of the server (`profile`), and the
//! host's description (`host`).

pub mod host;
pub mod profile;
pub mod sampler;
pub mod stats;
