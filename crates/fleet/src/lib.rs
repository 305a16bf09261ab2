//! `pgrig-fleet`: one benchmark run from several client hosts, coordinated through PostgreSQL
//! and merged exactly. A run is split into segments (`share`: each segment's clients, rate and
//! first global client id); the coordinator and the workers meet in a small schema
//! (`schema`: `pgrig_fleet.runs`, `.workers`, `.intervals`) spoken through `db`; workers measure
//! their clock offset to the database (`clock`), register, wait for the shared start instant,
//! report every interval (`protocol`) and hand their final statistics over serialised (`codec`:
//! counters, moments and HDR histograms in hdrhistogram's V2 format), which the coordinator
//! merges into one run result (`merge`), so percentiles of the whole run are true percentiles.
//! The schema is a trust boundary both ways: the run's scripts travel as text with a digest and
//! are checked by each worker (`scripts`), and every row the coordinator reads back is checked
//! before use (`check`). Workers prove they reach the same target (`target`: system identifier,
//! database, dataset); runs whose coordinator went silent are cancelled and never joined.
//! A run of a sysbench Lua script is a run of kind `lua` (`lua_script`: the schema names the
//! script by file name and SHA-256, never its text; a worker runs its own copy): its segments
//! hand in `pgrig_lua::tally::Tally`s (`lua_codec`), checked (`lua_check`) and added
//! (`lua_merge`); those three modules need pgrig-lua (LuaJIT) and are built with the `lua`
//! feature only (the cli turns it on), so a pgbench-only build of the fleet compiles no Lua.
//! For Kubernetes (`pgrig k8s manifest`): the checks of every name, quantity and option before
//! anything is printed (`k8s_check`), a Lua run's ConfigMap files (`k8s_lua_files`), the
//! objects (`k8s_objects`) and their YAML text (`k8s_yaml`). What every worker does to join a
//! run and report (`join`) and what it takes from the run (`worker_run`); what a coordinator
//! tells whoever follows the run with it (`follower`), such as a Lua run's merged interval lines
//! (`segment_lines`, `lua` feature); a pgbench run's coordinator opening the run (`open_run`) and
//! what its workers hand in, checked and merged (`handed_in`). Nothing here prints: messages
//! come back as values or go through a sink or output the caller gives.

pub mod bounds;
pub mod check;
pub mod clock;
pub mod codec;
pub mod db;
pub mod follower;
pub mod handed_in;
pub mod join;
mod json_read;
pub mod k8s_check;
pub mod k8s_lua_files;
pub mod k8s_objects;
pub mod k8s_yaml;
#[cfg(feature = "lua")]
pub mod lua_check;
#[cfg(feature = "lua")]
pub mod lua_codec;
#[cfg(feature = "lua")]
pub mod lua_merge;
pub mod lua_script;
pub mod merge;
pub mod open_run;
pub mod protocol;
pub mod schema;
pub mod scripts;
#[cfg(feature = "lua")]
pub mod segment_lines;
pub mod share;
pub mod target;
pub mod vacuum;
pub mod worker_run;

/// What went wrong, said for the user (connection strings masked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetError(pub String);

impl std::fmt::Display for FleetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FleetError {}

impl FleetError {
    pub fn new(msg: impl Into<String>) -> FleetError {
        FleetError(msg.into())
    }
}
