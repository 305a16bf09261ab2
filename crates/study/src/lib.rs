//! `pgrig study`: matrix studies. A study file ([`spec`], [`workload`]) expands into a plan
//! ([`plan`]) of runs; the [`runner`] executes them on a throwaway or external server
//! ([`managed`], [`target`]) with the data per [`dataset`] and collectors alongside
//! ([`collect`]; setup files split by [`setup_sql`]), and every finished run ([`record`]) goes into the results [`store`].
//! [`summary`] renders what people read ([`client_cpu`] reads the client's CPU figures from any record). A workload of queries instead of scripts is a query
//! study ([`query`]: measured executions with EXPLAIN, parallel degree, cold cache); a sysbench
//! Lua script runs through `pgrig_lua` ([`runner_lua`]).

pub mod analyze;
pub mod checked;
pub use pgrig_results::{client_cpu, summary};
pub mod collect;
pub mod csv_lines;
pub mod csv_load;
pub mod csv_spec;
pub mod dataset;
pub mod db;
pub mod error;
pub mod managed;
pub mod overrides;
pub mod plan;
pub mod query;
pub mod record;
pub mod runner;
pub mod runner_lua;
pub mod setup_sql;
pub mod spec;
pub mod target;
pub mod workload;

pub use checked::{check, Checked};
pub use error::StudyError;
pub use pgrig_results::store::{self, Store};
pub use runner::{run_study, Control, Outcome, Reporter};
