//! `pgrig study`: matrix studies. A study file ([`spec`]) expands into a plan ([`plan`]) of
//! runs; the runner executes them on a throwaway or external server with collectors alongside,
//! and every finished run goes into the results store.

pub mod error;
pub mod plan;
pub mod spec;
pub mod workload;

pub use error::StudyError;
