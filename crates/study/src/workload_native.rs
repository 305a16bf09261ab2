//! Native workloads in a study (`workload = "oltp_read_write"`, `options = { tables = 4 }`,
//! matrix keys `options.NAME`): the checks, the workload built for a point, and the identity of
//! its dataset, so the runner loads the data again only when a point's options change it.

use std::sync::Arc;

use pgrig_engine::workload::NativeWorkload;
use pgrig_workloads::{Native, Options};

use super::WorkloadSpec;
use crate::spec::scalar_text;

/// A point's native workload: what the engine runs, and the identity of the data it needs.
#[derive(Clone, Debug)]
pub struct NativePoint {
    pub workload: NativeWorkload,
    /// Equal for two points exactly when they need the same tables and rows.
    pub dataset_key: String,
}

impl WorkloadSpec {
    pub fn is_native(&self) -> bool {
        self.workload.is_some()
    }

    /// The `options` table as workload options (`key=value` text).
    pub fn native_options(&self) -> Options {
        let mut o = Options::new();
        for (k, v) in &self.options {
            o.set(k, scalar_text(v).unwrap_or_default());
        }
        o
    }

    /// Builds the point's workload (options checked by the workload itself).
    pub fn build_native(&self) -> Option<Result<Native, String>> {
        let name = self.workload.as_deref()?;
        Some(pgrig_workloads::build(name, &self.native_options()).map_err(|e| e.message))
    }

    /// The point's workload and its dataset's identity.
    pub fn native_point(&self) -> Option<Result<NativePoint, String>> {
        self.build_native().map(|r| r.map(|n| native_point(&n)))
    }

    /// Options without a native workload (checked on a whole point: a matrix key alone may
    /// give options while `[workload]` names the workload).
    pub(super) fn validate_native_kind(&self) -> Result<(), (&'static str, String)> {
        if !self.is_native() && self.sysbench.is_none() && !self.options.is_empty() {
            return Err((
                "options",
                "`options` belong to a native workload or a sysbench script; give workload = \"NAME\" or sysbench = \"SCRIPT.lua\" too".into(),
            ));
        }
        Ok(())
    }

    /// A native workload excludes scripts and queries; its name and options must build.
    pub(super) fn validate_native(&self) -> Result<(), (&'static str, String)> {
        if !self.is_native() {
            return Ok(());
        }
        let clash = [
            ("builtin", self.builtin.is_some()),
            ("scripts", self.scripts.is_some()),
            ("query", self.query.is_some()),
            ("queries", self.queries.is_some()),
            ("defines", !self.defines.is_empty()),
            ("sysbench", self.sysbench.is_some()),
        ];
        if let Some((key, _)) = clash.iter().find(|(_, given)| *given) {
            return Err((
                key,
                format!("give either workload (a native workload) or `{key}`, not both"),
            ));
        }
        crate::spec::scalar_options(&self.options)?;
        let name = self.workload.as_deref().unwrap_or_default();
        if !pgrig_workloads::is_native(name) {
            return Err((
                "workload",
                format!(
                    "unknown workload \"{name}\" (native workloads: {})",
                    pgrig_workloads::names().join(", ")
                ),
            ));
        }
        match self.build_native() {
            Some(Err(m)) => Err(("options", m)),
            _ => Ok(()),
        }
    }
}

/// The identity of a native workload's dataset: its statements and every table's row count.
fn native_point(n: &Native) -> NativePoint {
    let mut key = String::new();
    for s in n.load.drop.iter().chain(&n.load.create) {
        key.push_str(s);
        key.push('\n');
    }
    for src in &n.load.sources {
        key.push_str(&format!("{}={}\n", src.table(), src.rows()));
    }
    for s in n.load.keys.iter().chain(&n.load.after) {
        key.push_str(s);
        key.push('\n');
    }
    NativePoint {
        workload: NativeWorkload(Arc::clone(&n.workload)),
        dataset_key: key,
    }
}
