//! Variables: compile-time interning of names to slots ([`VarTable`]) and each client's values
//! ([`Vars`]), with pgbench's lazy string-to-typed conversion and text rendering.
//!
//! CONTRACT used by `parse` (interning) and the engine (values): change only additively.

use std::collections::HashMap;

/// A variable's slot, resolved at parse time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

/// Name -> slot table shared by every script of a run (and `-D` definitions, automatic variables).
#[derive(Clone, Debug, Default)]
pub struct VarTable {
    names: Vec<String>,
    map: HashMap<String, VarId>,
}

impl VarTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// The slot of `name`, creating it if needed. Does not validate the name.
    pub fn intern(&mut self, name: &str) -> VarId {
        if let Some(&id) = self.map.get(name) {
            return id;
        }
        let id = VarId(self.names.len() as u32);
        self.names.push(name.to_owned());
        self.map.insert(name.to_owned(), id);
        id
    }

    pub fn get(&self, name: &str) -> Option<VarId> {
        self.map.get(name).copied()
    }

    pub fn name(&self, id: VarId) -> &str {
        &self.names[id.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// One client's variable values, indexed by [`VarId`]. (Owned by the evaluator.)
#[derive(Clone, Debug, Default)]
pub struct Vars {}
