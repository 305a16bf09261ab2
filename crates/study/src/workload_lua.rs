//! sysbench Lua scripts in a study (`sysbench = "transfer.lua"`, relative to the study file,
//! with the script's options as `options = { accounts = 1000 }` and matrix keys
//! `options.NAME`): the checks (an option the script's `sysbench.cmdline.options` does not
//! declare is refused), the point's script with its options, the identity of its dataset (the
//! script's `prepare` runs again only when it changes), and the Lua runtime's invocation for
//! a command (`prepare`, `cleanup`, `run`) of a point.

use std::path::{Path, PathBuf};

use pgrig_lua::{Invocation, OptValue};
use pgrig_wire::ConnArgs;

use super::WorkloadSpec;
use crate::spec::scalar_text;

/// A point's sysbench script: the file, its options as given, its dataset's identity.
#[derive(Clone, Debug)]
pub struct LuaPoint {
    pub script: PathBuf,
    pub options: Vec<(String, String)>,
    /// Equal for two points exactly when the script and its options are the same.
    pub dataset_key: String,
}

impl WorkloadSpec {
    /// A script excludes scripts, builtins, native workloads and queries.
    pub(super) fn validate_lua(&self) -> Result<(), (&'static str, String)> {
        let Some(script) = &self.sysbench else {
            return Ok(());
        };
        if !script.ends_with(".lua") {
            return Err((
                "sysbench",
                format!(
                    "sysbench = \"{script}\": give the path of a sysbench Lua script (FILE.lua)"
                ),
            ));
        }
        let clash = [
            ("builtin", self.builtin.is_some()),
            ("scripts", self.scripts.is_some()),
            ("query", self.query.is_some()),
            ("queries", self.queries.is_some()),
            ("defines", !self.defines.is_empty()),
            ("workload", self.workload.is_some()),
            ("latency_limit", self.latency_limit.is_some()),
            ("connect", self.connect),
        ];
        if let Some((key, _)) = clash.iter().find(|(_, given)| *given) {
            return Err((
                key,
                format!("give either sysbench (a Lua script) or `{key}`, not both"),
            ));
        }
        crate::spec::scalar_options(&self.options)?;
        Ok(())
    }

    /// The point's script and options (`None`: no script). The error names the unknown option
    /// (empty for the script itself) and says what is wrong.
    pub fn lua_point(&self, base_dir: &Path) -> Option<Result<LuaPoint, (String, String)>> {
        let script = base_dir.join(self.sysbench.as_deref()?);
        Some(self.check_lua(script))
    }

    fn check_lua(&self, script: PathBuf) -> Result<LuaPoint, (String, String)> {
        if !script.is_file() {
            let msg = format!("sysbench script \"{}\" is not a file", script.display());
            return Err((String::new(), msg));
        }
        let options: Vec<(String, String)> = (self.options.iter())
            .map(|(k, v)| (k.replace('-', "_"), scalar_text(v).unwrap_or_default()))
            .collect();
        let probe = self.lua_invocation(&script, &[], "help", ConnArgs::default());
        let declared =
            pgrig_lua::declared_options(probe).map_err(|m| (String::new(), m.to_string()))?;
        let names: Vec<&str> = declared.iter().map(|(n, _)| n.as_str()).collect();
        if let Some((k, _)) = options.iter().find(|(k, _)| !names.contains(&k.as_str())) {
            let known = if names.is_empty() {
                "it declares none".to_string()
            } else {
                format!("it declares: {}", names.join(", "))
            };
            let msg = format!(
                "unknown option \"{k}\" of sysbench script \"{}\" ({known} in sysbench.cmdline.options)",
                script.display()
            );
            return Err((k.clone(), msg));
        }
        let mut key = format!("{}\n", script.display());
        for (k, v) in &options {
            key += &format!("{k}={v}\n");
        }
        Ok(LuaPoint {
            script,
            options,
            dataset_key: key,
        })
    }

    /// The Lua runtime's invocation of `command` for `script` with `options`, connecting with
    /// `conn`: `clients` threads, the point's duration (or transactions per client as
    /// `--events`), rate and seed; sysbench's report not printed (the study stores the run).
    pub fn lua_invocation(
        &self,
        script: &Path,
        options: &[(String, String)],
        command: &str,
        conn: ConnArgs,
    ) -> Invocation {
        let threads = self.clients.max(1);
        let (time, events) = match (&self.duration, self.transactions) {
            (Some(d), _) => (d.millis().unwrap_or(1000).div_ceil(1000), 0),
            (None, Some(t)) => (0, t * u64::from(threads)),
            (None, None) => (0, 10 * u64::from(threads)),
        };
        let rate = self.rate.map_or(0, |r| r.round().max(1.0) as u64);
        let seed = self.seed.map_or(0, |s| (s % u64::from(u32::MAX)) as u32);
        let ps_disable = self.protocol == "simple";
        let general = vec![
            ("threads".into(), OptValue::Int(i64::from(threads))),
            ("events".into(), OptValue::Int(events as i64)),
            ("time".into(), OptValue::Int(time as i64)),
            ("rate".into(), OptValue::Int(rate as i64)),
            ("report_interval".into(), OptValue::Int(0)),
            ("rand_seed".into(), OptValue::Int(i64::from(seed))),
            ("rand_type".into(), OptValue::Str("special".into())),
            ("percentile".into(), OptValue::Int(95)),
            ("histogram".into(), OptValue::Bool(false)),
            ("verbosity".into(), OptValue::Int(2)),
            ("db_driver".into(), OptValue::Str("pgsql".into())),
            (
                "db_ps_mode".into(),
                OptValue::Str(if ps_disable { "disable" } else { "auto" }.into()),
            ),
        ];
        let script_args = (options.iter())
            .map(|(k, v)| (k.clone(), Some(v.clone()), format!("--{k}={v}")))
            .collect();
        Invocation {
            name: script.display().to_string(),
            script: script.to_path_buf(),
            source: None,
            command: Some(command.to_string()),
            argv: vec![
                "sysbench".into(),
                script.display().to_string(),
                command.into(),
            ],
            script_args,
            general,
            threads,
            events,
            time,
            forced_shutdown: None,
            rate,
            report_interval: 0,
            rand_seed: seed,
            rand_type: "special".into(),
            percentile: 95,
            histogram: false,
            notices: false,
            ps_mode_disable: ps_disable,
            driver: "pgsql".into(),
            conn,
        }
    }
}
