//! Variables: compile-time interning of names to slots ([`VarTable`]) and each client's values
//! ([`Vars`]), with pgbench's lazy string-to-typed conversion and text rendering.
//!
//! CONTRACT used by `parse` (interning) and the engine (values): change only additively.

use std::collections::HashMap;

use crate::error::EvalError;
use crate::value::Value;

mod convert;
pub use convert::{c_atoi, c_strtod_full, c_strtoi64, convert};

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

/// What a slot holds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum State {
    #[default]
    Undefined,
    /// A typed value (`\set`, `\setshell`, automatic variables).
    Typed(Value),
    /// A string (`-D`, `\gset`, `\aset`) in `Slot::text`, with its conversion once done.
    Str(Option<Value>),
}

#[derive(Clone, Debug, Default)]
struct Slot {
    state: State,
    /// The string value when `state` is `Str`; kept (cleared) otherwise so its capacity is reused.
    text: String,
}

/// One client's variable values, indexed by [`VarId`].
///
/// Values are typed, or strings converted lazily on first use in an expression (pgbench's
/// rules, see [`convert`](mod@convert)). Reads and writes never allocate once a slot's string has grown to
/// its steady-state size.
#[derive(Clone, Debug, Default)]
pub struct Vars {
    slots: Vec<Slot>,
}

impl Vars {
    pub fn new() -> Self {
        Self::default()
    }

    /// Room for `n` variables (e.g. `VarTable::len()`), all undefined.
    pub fn with_len(n: usize) -> Self {
        let mut v = Self::default();
        v.slots.resize_with(n, Slot::default);
        v
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    fn slot_mut(&mut self, id: VarId) -> &mut Slot {
        let i = id.0 as usize;
        if i >= self.slots.len() {
            self.slots.resize_with(i + 1, Slot::default);
        }
        &mut self.slots[i]
    }

    fn slot(&self, id: VarId) -> Option<&Slot> {
        self.slots.get(id.0 as usize)
    }

    /// Assigns a typed value (`\set`, `\setshell`, `:scale`, `:client_id`, ...).
    pub fn set_value(&mut self, id: VarId, v: Value) {
        let slot = self.slot_mut(id);
        slot.state = State::Typed(v);
        slot.text.clear();
    }

    /// Assigns a string value (`-D NAME=VALUE`, `\gset`, `\aset`), reusing the slot's buffer.
    pub fn set_str(&mut self, id: VarId, s: &str) {
        let slot = self.slot_mut(id);
        slot.text.clear();
        slot.text.push_str(s);
        slot.state = State::Str(None);
    }

    /// `-D NAME=VALUE`: same as [`Vars::set_str`].
    pub fn define(&mut self, id: VarId, s: &str) {
        self.set_str(id, s);
    }

    /// Makes the variable undefined again.
    pub fn unset(&mut self, id: VarId) {
        if let Some(slot) = self.slots.get_mut(id.0 as usize) {
            slot.state = State::Undefined;
            slot.text.clear();
        }
    }

    pub fn is_defined(&self, id: VarId) -> bool {
        self.slot(id).is_some_and(|s| s.state != State::Undefined)
    }

    /// The string a string-valued variable holds (`None` for typed or undefined ones).
    pub fn str_value(&self, id: VarId) -> Option<&str> {
        match self.slot(id) {
            Some(Slot {
                state: State::Str(_),
                text,
            }) => Some(text),
            _ => None,
        }
    }

    /// The typed value for expression evaluation, converting (and caching) a string value.
    /// Errors: `undefined variable "NAME"` and the conversion errors of [`convert`](mod@convert).
    #[inline]
    pub fn get(&mut self, id: VarId, names: &VarTable) -> Result<Value, EvalError> {
        let i = id.0 as usize;
        let Some(slot) = self.slots.get_mut(i) else {
            return Err(undefined(id, names));
        };
        match slot.state {
            State::Typed(v) | State::Str(Some(v)) => Ok(v),
            State::Undefined => Err(undefined(id, names)),
            State::Str(None) => {
                let name = names.names.get(i).map_or("", String::as_str);
                let v = convert(name, &slot.text)?;
                slot.state = State::Str(Some(v));
                Ok(v)
            }
        }
    }

    /// Appends the variable's text form (SQL substitution, parameters, shell arguments): a string
    /// variable renders as its original bytes (see [`crate::bytes`]), a typed one as `NULL`/`true`/`false`/`%lld`/`%.15g`.
    /// Returns false (appending nothing) when the variable is undefined.
    pub fn render(&self, id: VarId, out: &mut Vec<u8>) -> bool {
        match self.slot(id) {
            None => false,
            Some(slot) => match slot.state {
                State::Undefined => false,
                State::Typed(v) => {
                    v.push_text_bytes(out);
                    true
                }
                State::Str(_) => {
                    crate::bytes::encode_into(&slot.text, out);
                    true
                }
            },
        }
    }

    /// [`Vars::render`] into a `String`.
    pub fn render_str(&self, id: VarId, out: &mut String) -> bool {
        match self.slot(id) {
            None => false,
            Some(slot) => match slot.state {
                State::Undefined => false,
                State::Typed(v) => {
                    v.push_text(out);
                    true
                }
                State::Str(_) => {
                    out.push_str(&slot.text);
                    true
                }
            },
        }
    }

    /// `\sleep :name`: `atoi` of the variable's text form, with pgbench's messages
    /// (`sleep: undefined variable "%s"`, `sleep: invalid sleep time "%s" for variable "%s"`).
    pub fn sleep_value(&self, id: VarId, name: &str) -> Result<i64, String> {
        let mut buf = crate::format::StackBuf::<48>::new();
        let text: &str = match self.slot(id).map(|s| (s.state, s)) {
            None | Some((State::Undefined, _)) => {
                return Err(format!("sleep: undefined variable \"{name}\""))
            }
            Some((State::Typed(v), _)) => {
                let _ = v.write_text(&mut buf);
                std::str::from_utf8(buf.as_bytes()).unwrap_or("")
            }
            Some((State::Str(_), slot)) => &slot.text,
        };
        let usec = c_atoi(text);
        if usec == 0 && !text.as_bytes().first().is_some_and(u8::is_ascii_digit) {
            return Err(format!(
                "sleep: invalid sleep time \"{text}\" for variable \"{name}\""
            ));
        }
        Ok(i64::from(usec))
    }
}

#[cold]
fn undefined(id: VarId, names: &VarTable) -> EvalError {
    let name = names.names.get(id.0 as usize).map_or("", String::as_str);
    EvalError::text(format!("undefined variable \"{name}\""))
}

/// pgbench's `valid_variable_name`: `[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*` (bytes).
pub fn valid_variable_name(name: &str) -> bool {
    let b = name.as_bytes();
    match b.first() {
        None => false,
        Some(&c) if !(c >= 0x80 || c.is_ascii_alphabetic() || c == b'_') => false,
        Some(_) => b[1..]
            .iter()
            .all(|&c| c >= 0x80 || c.is_ascii_alphanumeric() || c == b'_'),
    }
}

/// `%s: invalid variable name: "%s"` (context: `set`, `setshell`, `gset`, `aset`, `option`,
/// `startup`).
pub fn invalid_variable_name_message(context: &str, name: &str) -> String {
    format!("{context}: invalid variable name: \"{name}\"")
}
