//! The script of a Lua run in the coordination schema: its file name and SHA-256 only, never
//! its text. A Lua script is code with the user's rights (`os.execute`, `io`, `ffi`), so a
//! worker runs only a file of its own (`pgrig worker --lua-script FILE`) whose SHA-256 is the
//! run's; whoever can write the schema can name a digest, not make a worker run new code.

use serde_json::{json, Value};

use crate::FleetError;

/// The run kind of a Lua script run in `pgrig_fleet.runs.kind` (pgbench runs: `pgbench`).
pub const KIND: &str = "lua";

/// A run's script as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptRef {
    /// the file's name on the coordinator's host (no directory: for messages)
    pub name: String,
    /// SHA-256 of the file's bytes, 64 lower-case hex digits
    pub sha256: String,
}

/// SHA-256 of `bytes`, hex.
pub fn digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl ScriptRef {
    /// The reference to the script at `path` with the bytes `text`.
    pub fn of(path: &std::path::Path, text: &[u8]) -> ScriptRef {
        let name = path
            .file_name()
            .map_or_else(|| "script.lua".into(), |n| n.to_string_lossy().into_owned());
        ScriptRef {
            name,
            sha256: digest(text),
        }
    }

    pub fn encode(&self) -> String {
        json!({"lua": {"name": self.name, "sha256": self.sha256}}).to_string()
    }

    /// The reference stored in a run, checked: a printable file name without a directory,
    /// a digest of 64 hex digits.
    pub fn decode(text: &str) -> Result<ScriptRef, FleetError> {
        let bad = |why: &str| FleetError::new(format!("its script reference {why}"));
        let v: Value = serde_json::from_str(text).map_err(|_| bad("is not JSON"))?;
        let (Some(name), Some(sha)) = (v["lua"]["name"].as_str(), v["lua"]["sha256"].as_str())
        else {
            return Err(bad("has no file name and SHA-256"));
        };
        let plain = !name.is_empty()
            && name.len() <= 255
            && !name.contains('/')
            && !name.chars().any(char::is_control);
        if !plain {
            return Err(bad(&format!("names no plain file: {name:?}")));
        }
        if sha.len() != 64 || !sha.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(bad(&format!(
                "has no SHA-256: {:?}",
                sha.escape_debug().to_string()
            )));
        }
        Ok(ScriptRef {
            name: name.to_string(),
            sha256: sha.to_ascii_lowercase(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_round_trips_and_a_forged_one_is_refused() {
        let r = ScriptRef::of(std::path::Path::new("/x/oltp.lua"), b"function event() end");
        assert_eq!(ScriptRef::decode(&r.encode()).unwrap(), r);
        assert_eq!(r.name, "oltp.lua");
        for bad in [
            r#"{"lua": {"name": "../../etc/x", "sha256": "00"}}"#,
            r#"{"lua": {"name": "a.lua", "sha256": "zz"}}"#,
            r#"[{"builtin": "select-only", "weight": 1}]"#,
        ] {
            assert!(ScriptRef::decode(bad).is_err(), "{bad}");
        }
    }
}
