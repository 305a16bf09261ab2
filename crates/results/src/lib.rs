//! pgrig's results, typed: what one run measured ([`document`]: the run document every output
//! renders), and the results store that keeps a study's runs ([`store`]: SQLite or PostgreSQL,
//! behind one [`Store`]). Readers — `pgrig results`, reports, compare — depend on this crate
//! alone, not on the engine that produces the documents or the studies that store them.

pub mod error;
pub mod export;
pub mod metric;
mod pg_store;
pub mod plans;
pub mod profiles;
pub mod query_summary;
pub mod replay_doc;
pub mod run_summary;
pub mod single_run;
mod sqlite_store;
pub mod store;
mod store_lock;
mod store_schema;
pub mod summary;
pub mod view;

// The run document lives in pgrig-document (pure types, which the engine uses without the stores);
// re-exported so `pgrig_results::document::…` and `pgrig_results::client_cpu::…` keep naming it.
pub use pgrig_document::{client_cpu, document};

pub use document::RunDocument;
pub use error::StoreError;
pub use store::Store;
pub use view::RunView;
