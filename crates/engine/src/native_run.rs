//! The run's view of a native workload ([`crate::workload`]): its statements ready to send, its
//! transaction types as the run's "scripts" and each statement's per-type command slot,
//! checked against the workload's catalogue once before the run.

use std::sync::Arc;

use pgrig_script::Script;

use crate::error::EngineError;
use crate::result::ScriptInfo;
use crate::workload::Workload;

/// One statement, ready to send.
pub(crate) struct NativeStmt {
    pub sql: String,
    pub nparams: u16,
    pub simple: bool,
    pub rows: bool,
    pub prepared_name: String,
}

/// The run's view of a native workload.
pub(crate) struct NativeRun {
    pub workload: Arc<dyn Workload>,
    pub stmts: Vec<NativeStmt>,
    /// `[tx][stmt]`: the statement's command slot in the type's figures (`u32::MAX`: not
    /// listed, counted in an extra last slot)
    pub slots: Vec<Vec<u32>>,
}

impl NativeRun {
    /// Checks the catalogue and prepares the statements.
    pub fn new(workload: Arc<dyn Workload>) -> Result<NativeRun, EngineError> {
        let cat = workload.catalogue();
        let name = workload.name();
        if cat.transactions.is_empty() || cat.statements.is_empty() {
            return Err(EngineError::fatal(format!(
                "workload {name} has no transaction types or no statements"
            )));
        }
        let stmts = cat
            .statements
            .iter()
            .enumerate()
            .map(|(i, s)| NativeStmt {
                sql: s.sql.clone(),
                nparams: s.param_count(),
                simple: s.simple,
                rows: s.rows,
                prepared_name: format!("W_{i}"),
            })
            .collect::<Vec<_>>();
        let mut slots = Vec::with_capacity(cat.transactions.len());
        for t in &cat.transactions {
            let mut row = vec![u32::MAX; stmts.len()];
            for (k, &id) in t.statements.iter().enumerate() {
                let Some(slot) = row.get_mut(id as usize) else {
                    return Err(EngineError::fatal(format!(
                        "workload {name}: transaction type {} names statement {id}, which does not exist",
                        t.name
                    )));
                };
                *slot = k as u32;
            }
            slots.push(row);
        }
        Ok(NativeRun {
            workload,
            stmts,
            slots,
        })
    }

    /// The transaction types as the run's scripts (no commands: the program is the script).
    pub fn scripts(&self) -> Vec<Script> {
        self.workload
            .catalogue()
            .transactions
            .iter()
            .map(|t| Script {
                desc: t.name.clone(),
                weight: i64::from(t.weight),
                commands: Vec::new(),
            })
            .collect()
    }

    /// Per type: the statements it lists (their SQL, for the per-statement figures).
    pub fn infos(&self) -> Vec<ScriptInfo> {
        let cat = self.workload.catalogue();
        cat.transactions
            .iter()
            .map(|t| ScriptInfo {
                desc: t.name.clone(),
                weight: i64::from(t.weight),
                command_texts: t
                    .statements
                    .iter()
                    .map(|&id| cat.statements[id as usize].sql.clone())
                    .collect(),
            })
            .collect()
    }

    /// Per type: its command slots (the listed statements).
    pub fn command_counts(&self) -> Vec<usize> {
        let cat = self.workload.catalogue();
        cat.transactions
            .iter()
            .map(|t| t.statements.len())
            .collect()
    }
}
