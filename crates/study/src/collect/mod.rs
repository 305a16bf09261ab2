//! Collectors: server counters and relation sizes (`stats`), wait events and server process
//! usage sampled alongside a run (`sampler`), the server's checkpoints, WAL and CPU per second of
//! the run (`server_seconds`, with `local_server`: the processes of a server on this host), perf
//! profiles of the server (`profile`), and the host's description (`host`).

pub mod host;
pub mod local_server;
pub mod profile;
pub mod sampler;
pub mod server_seconds;
pub mod stats;
