//! The replay item: one thing a recorded session did (pgreplay's `replay_item`), and its
//! `-d 1` debug rendering.

use crate::time::Timestamp;

/// What a session did; byte strings are kept as the log had them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemKind {
    Connect {
        user: Vec<u8>,
        database: Vec<u8>,
    },
    Disconnect,
    Execute {
        statement: Vec<u8>,
    },
    Prepare {
        name: Vec<u8>,
        statement: Vec<u8>,
    },
    ExecPrepared {
        name: Vec<u8>,
        values: Vec<Option<Vec<u8>>>,
    },
    Cancel,
    /// What a captured client sent at once: whole frontend messages (Parse with its parameter
    /// types, Bind with its formats, ...), sent as recorded (`pgrig capture`; not in pgreplay's
    /// replay files).
    Wire {
        messages: Vec<u8>,
    },
}

impl ItemKind {
    /// pgreplay's type code (the replay file's type byte).
    pub fn code(&self) -> u8 {
        match self {
            ItemKind::Connect { .. } => 0,
            ItemKind::Disconnect => 1,
            ItemKind::Execute { .. } => 2,
            ItemKind::Prepare { .. } => 3,
            ItemKind::ExecPrepared { .. } => 4,
            ItemKind::Cancel => 5,
            ItemKind::Wire { .. } => 6,
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            ItemKind::Connect { .. } => "connect",
            ItemKind::Disconnect => "disconnect",
            ItemKind::Execute { .. } => "execute",
            ItemKind::Prepare { .. } => "prepare",
            ItemKind::ExecPrepared { .. } => "exec_prepared",
            ItemKind::Cancel => "cancel",
            ItemKind::Wire { .. } => "messages",
        }
    }
}

/// One item: when (recorded time), which session, what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub time: Timestamp,
    pub session: u64,
    pub kind: ItemKind,
}

/// Bytes of a bind value shown in the debug trace (pgreplay's SAMPLE_SIZE).
const SAMPLE_SIZE: usize = 100;

impl Item {
    /// pgreplay's `-d 1` rendering of the item (what it prints on standard error), bytes as is.
    pub fn debug_text(&self) -> Vec<u8> {
        let mut o = Vec::new();
        let line = b"---------------------------\n";
        o.extend_from_slice(line);
        let usec = self.time.usec;
        let sec = self.time.sec as u64; // printed unsigned, as pgreplay does
        o.extend_from_slice(format!("Item: time       = {sec}.{usec:06}\n").as_bytes());
        o.extend_from_slice(format!("      session id = 0x{:x}\n", self.session).as_bytes());
        o.extend_from_slice(format!("      type       = {}\n", self.kind.type_name()).as_bytes());
        let field = |o: &mut Vec<u8>, label: &str, v: &[u8]| {
            o.extend_from_slice(format!("      {label:<10} = ").as_bytes());
            o.extend_from_slice(v);
            o.push(b'\n');
        };
        match &self.kind {
            ItemKind::Connect { user, database } => {
                field(&mut o, "user", user);
                field(&mut o, "database", database);
            }
            ItemKind::Disconnect | ItemKind::Cancel => {}
            ItemKind::Execute { statement } => field(&mut o, "statement", statement),
            ItemKind::Wire { messages } => crate::capture_msg::debug_lines(messages, &mut o),
            ItemKind::Prepare { name, statement } => {
                field(&mut o, "name", name);
                field(&mut o, "statement", statement);
            }
            ItemKind::ExecPrepared { name, values } => {
                field(&mut o, "name", name);
                for (i, v) in values.iter().enumerate() {
                    let shown = match v {
                        None => b"(null)".to_vec(),
                        Some(v) => sample(v),
                    };
                    o.extend_from_slice(format!("      ${}         = ", i + 1).as_bytes());
                    o.extend_from_slice(&shown);
                    o.push(b'\n');
                }
            }
        }
        o.extend_from_slice(line);
        o
    }
}

/// The first SAMPLE_SIZE bytes of a value, with `...` when it has that many or more (up to
/// its first NUL byte, as C strings end there).
fn sample(v: &[u8]) -> Vec<u8> {
    let v = v.split(|&b| b == 0).next().unwrap_or(&[]);
    if v.len() >= SAMPLE_SIZE {
        let mut s = v[..SAMPLE_SIZE].to_vec();
        s.extend_from_slice(b"...");
        s
    } else {
        v.to_vec()
    }
}
