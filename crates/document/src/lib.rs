//! The run document's types and their serde, pure: what one run measured ([`document`]) and the
//! client's CPU figures read from a document or a stored record ([`client_cpu`]). No store, no
//! client, no runtime: the engine builds documents with this crate alone (not `pgrig-results`,
//! which brings SQLite and the PostgreSQL store), and `pgrig-results` re-exports both modules, so
//! `pgrig_results::document::…` and `pgrig_results::client_cpu::…` name the same items.

pub mod client_cpu;
pub mod document;

pub use document::RunDocument;
