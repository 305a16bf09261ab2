//! `[collect] profile`: perf samples the throwaway server's processes (and with
//! `profile_client`, pgrig's own) during every run; the folded stacks are kept with the run in
//! its provenance (`profiles.server`, `profiles.client`: `samples` and `folded`).

use serde_json::{json, Value};

use pgrig_profile::{Profile, Recording};

use crate::error::StudyError;
use crate::managed::Managed;
use crate::spec::CollectSpec;

/// The recordings of one run.
pub struct Profiling {
    server: Recording,
    client: Option<Recording>,
}

/// Starts profiling when the study asks for it; a target that is not a throwaway server on
/// this host is refused.
pub fn start(m: &Managed, collect: &CollectSpec) -> Result<Option<Profiling>, StudyError> {
    if !collect.profile {
        return Ok(None);
    }
    let server = m.server.as_ref().ok_or_else(|| {
        StudyError::Refused(format!(
            "[collect] profile needs a throwaway target: target \"{}\" is an external server \
             (perf samples the server's processes on this host)",
            m.name
        ))
    })?;
    let fail = |e: pgrig_profile::ProfileError| StudyError::Other(e.to_string());
    let mut server =
        Recording::start("the server's processes", &server.pids(), true).map_err(fail)?;
    let mut client = if collect.profile_client {
        let me = [std::process::id()];
        Some(Recording::start("pgrig's own process", &me, false).map_err(fail)?)
    } else {
        None
    };
    server.enable().map_err(fail)?;
    if let Some(c) = client.as_mut() {
        c.enable().map_err(fail)?;
    }
    Ok(Some(Profiling { server, client }))
}

impl Profiling {
    /// Stops perf and returns the `profiles` object of the run's provenance.
    pub fn finish(mut self) -> Result<Value, StudyError> {
        let fail = |e: pgrig_profile::ProfileError| StudyError::Other(e.to_string());
        self.server.stop().map_err(fail)?;
        if let Some(c) = self.client.as_mut() {
            c.stop().map_err(fail)?;
        }
        let mut out = json!({"server": entry(&self.server.finish().map_err(fail)?)});
        if let Some(c) = self.client {
            out["client"] = entry(&c.finish().map_err(fail)?);
        }
        Ok(out)
    }
}

pub use pgrig_results::profiles::{stored, summarise};

fn entry(p: &Profile) -> Value {
    json!({"samples": p.samples, "folded": p.folded})
}
