//! Turns the run's script sources into compiled scripts sharing one variable table, and the
//! per-client initial variables (`-D`, `scale`, `client_id`, `default_seed`, `random_seed`).

use pgrig_script::{CommandKind, Script, VarId, VarTable};

use crate::config::{BenchConfig, ScriptSource};
use crate::error::EngineError;

pub(crate) struct Compiled {
    pub scripts: Vec<Script>,
    pub vartable: VarTable,
    pub prep_index: Vec<Vec<usize>>,
    pub n_prepared: usize,
    /// per variable slot: its name is not a valid variable name (`\set . 1`), so assigning
    /// it fails at run time as in pgbench
    pub invalid_name: Vec<bool>,
    pub uses_builtin: bool,
    pub auto: AutoVars,
}

#[derive(Clone, Copy)]
pub(crate) struct AutoVars {
    pub scale: VarId,
    pub client_id: VarId,
    pub default_seed: VarId,
    pub random_seed: VarId,
}

impl AutoVars {
    /// The automatic variables' slots, first in the table.
    fn intern(vartable: &mut VarTable) -> AutoVars {
        AutoVars {
            scale: vartable.intern("scale"),
            client_id: vartable.intern("client_id"),
            default_seed: vartable.intern("default_seed"),
            random_seed: vartable.intern("random_seed"),
        }
    }
}

/// A native workload's "compiled" form: its transaction types as scripts without commands,
/// one prepared-statement slot per statement, and the automatic variables (unused).
pub(crate) fn compile_native(native: &crate::native_run::NativeRun) -> Compiled {
    let mut vartable = VarTable::new();
    let auto = AutoVars::intern(&mut vartable);
    let scripts = native.scripts();
    Compiled {
        prep_index: scripts.iter().map(|_| Vec::new()).collect(),
        scripts,
        invalid_name: vec![false; vartable.len()],
        vartable,
        n_prepared: native.stmts.len(),
        uses_builtin: false,
        auto,
    }
}

pub(crate) fn compile(cfg: &BenchConfig) -> Result<Compiled, EngineError> {
    let mut vartable = VarTable::new();
    let auto = AutoVars::intern(&mut vartable);
    for (name, _) in &cfg.defines {
        vartable.intern(name);
    }
    let mut counter = 0usize;
    let mut scripts = Vec::new();
    let mut uses_builtin = false;
    let default = [ScriptSource::Builtin {
        name: "tpcb-like".into(),
        weight: 1,
    }];
    let sources = if cfg.scripts.is_empty() {
        &default[..]
    } else {
        &cfg.scripts[..]
    };
    for src in sources {
        let (desc, text, weight) = match src {
            ScriptSource::Builtin { name, weight } => {
                uses_builtin = true;
                let b = pgrig_script::builtin::lookup(name)
                    .map_err(|e| EngineError::fatal(e.to_string()))?;
                (b.desc.to_string(), b.script.to_string(), *weight)
            }
            ScriptSource::File { path, text, weight } => (path.clone(), text.clone(), *weight),
        };
        let commands =
            pgrig_script::parse::parse_script(&desc, &text, &mut vartable, cfg.mode, &mut counter)
                .map_err(|e| EngineError::fatal(e.to_string()))?;
        if commands.is_empty() {
            return Err(EngineError::fatal(format!(
                "empty command list for script \"{desc}\""
            )));
        }
        scripts.push(Script {
            desc,
            weight,
            commands,
        });
    }
    if scripts.iter().map(|s| s.weight).sum::<i64>() == 0 {
        return Err(EngineError::fatal("total script weight must not be zero"));
    }
    let mut n_prepared = 0;
    let prep_index = scripts
        .iter()
        .map(|s| {
            s.commands
                .iter()
                .map(|c| match c.kind {
                    CommandKind::Sql(_) => {
                        n_prepared += 1;
                        n_prepared - 1
                    }
                    _ => usize::MAX,
                })
                .collect()
        })
        .collect();
    let invalid_name = (0..vartable.len())
        .map(|i| !pgrig_script::vars::valid_variable_name(vartable.name(VarId(i as u32))))
        .collect();
    Ok(Compiled {
        scripts,
        vartable,
        prep_index,
        n_prepared,
        invalid_name,
        uses_builtin,
        auto,
    })
}
