//! A segmented run's scripts as they travel through the coordination schema (`runs.scripts`):
//! builtins by name, files as their text with its SHA-256 — the coordinator reads each file
//! once, no worker opens a path it was given. A worker checks what it reads before running it
//! (anyone who can write the schema can write this): a known builtin, a weight in pgbench's
//! range, a printable name, a text within [`MAX_TEXT`] that matches its digest, and no `\shell`
//! or `\setshell` (they would run commands on the worker's host).

use pgrig_engine::config::ScriptSource;
use pgrig_script::{CommandKind, QueryMode, VarTable};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::FleetError;

/// The longest script text accepted, bytes.
pub const MAX_TEXT: usize = 1 << 20;
/// pgbench's `MAX_SCRIPTS`.
pub const MAX_SCRIPTS: usize = 128;

/// The SHA-256 of `text`, hex.
pub fn digest(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The run's scripts as JSON text for `runs.scripts`.
pub fn encode(scripts: &[ScriptSource]) -> String {
    let list: Vec<Value> = scripts
        .iter()
        .map(|s| match s {
            ScriptSource::Builtin { name, weight } => json!({"builtin": name, "weight": weight}),
            ScriptSource::File { path, text, weight } => json!({
                "file": path, "weight": weight, "text": text, "sha256": digest(text)}),
        })
        .collect();
    Value::Array(list).to_string()
}

fn bad(i: usize, why: &str) -> FleetError {
    FleetError::new(format!("the run's script {}: {why}", i + 1))
}

/// Refuses `\shell` and `\setshell` in `text` (and a script that does not parse).
fn no_shell(i: usize, name: &str, text: &str) -> Result<(), FleetError> {
    let (mut vars, mut counter) = (VarTable::new(), 0);
    let commands =
        pgrig_script::parse::parse_script(name, text, &mut vars, QueryMode::Simple, &mut counter)
            .map_err(|e| bad(i, &e.to_string()))?;
    for c in &commands {
        if matches!(
            c.kind,
            CommandKind::Shell { .. } | CommandKind::SetShell { .. }
        ) {
            return Err(bad(
                i,
                &format!(
                    "line {}: \\shell and \\setshell would run commands on the worker's host; \
                     scripts of a segmented run may not use them",
                    c.line
                ),
            ));
        }
    }
    Ok(())
}

/// One script of the list, checked.
fn script_of(i: usize, v: &Value) -> Result<ScriptSource, FleetError> {
    let weight = (v["weight"].as_i64())
        .filter(|w| (0..=i64::from(i32::MAX)).contains(w))
        .ok_or_else(|| bad(i, &format!("weight {} is out of range", v["weight"])))?;
    if let Some(name) = v["builtin"].as_str() {
        let b = pgrig_script::builtin::lookup(name).map_err(|e| bad(i, &e.to_string()))?;
        if b.name != name {
            return Err(bad(i, &format!("\"{name}\" is not a builtin's full name")));
        }
        return Ok(ScriptSource::Builtin {
            name: name.to_string(),
            weight,
        });
    }
    let name = v["file"]
        .as_str()
        .ok_or_else(|| bad(i, "neither builtin nor file"))?;
    if name.len() > 4096 || name.chars().any(char::is_control) {
        return Err(bad(i, &format!("the name {name:?} is not printable")));
    }
    let text = v["text"].as_str().ok_or_else(|| bad(i, "no text"))?;
    if text.len() > MAX_TEXT {
        return Err(bad(i, &format!("{} bytes, at most {MAX_TEXT}", text.len())));
    }
    let sum = digest(text);
    if v["sha256"].as_str() != Some(sum.as_str()) {
        return Err(bad(
            i,
            &format!("its text does not match its SHA-256 (has {sum})"),
        ));
    }
    no_shell(i, name, text)?;
    Ok(ScriptSource::File {
        path: name.to_string(),
        text: text.to_string(),
        weight,
    })
}

/// The scripts of `runs.scripts`, each checked; at least one, total weight above zero.
pub fn decode(text: &str) -> Result<Vec<ScriptSource>, FleetError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| FleetError::new(format!("the run's scripts are damaged: {e}")))?;
    let list = (v.as_array())
        .filter(|l| (1..=MAX_SCRIPTS).contains(&l.len()))
        .ok_or_else(|| {
            FleetError::new(format!(
                "the run's scripts are not a list of 1 to {MAX_SCRIPTS} scripts"
            ))
        })?;
    let scripts = (list.iter().enumerate())
        .map(|(i, s)| script_of(i, s))
        .collect::<Result<Vec<_>, _>>()?;
    let total: i64 = scripts
        .iter()
        .map(|s| match s {
            ScriptSource::Builtin { weight, .. } | ScriptSource::File { weight, .. } => *weight,
        })
        .sum();
    if total == 0 {
        return Err(FleetError::new("the run's scripts weigh nothing in total"));
    }
    Ok(scripts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> ScriptSource {
        ScriptSource::File {
            path: "w.sql".into(),
            text: text.into(),
            weight: 1,
        }
    }

    #[test]
    fn scripts_survive_the_round_trip() {
        let s = vec![
            ScriptSource::Builtin {
                name: "select-only".into(),
                weight: 2,
            },
            file("SELECT 1;\n"),
        ];
        assert_eq!(decode(&encode(&s)).unwrap(), s);
    }

    #[test]
    fn a_changed_text_a_shell_command_or_an_unknown_builtin_is_refused() {
        let e = encode(&[file("SELECT 1;\n")]).replace("SELECT 1", "SELECT 2");
        assert!(decode(&e).unwrap_err().0.contains("SHA-256"));
        let e = encode(&[file("\\shell touch /tmp/x\n")]);
        assert!(decode(&e).unwrap_err().0.contains("\\shell"));
        let e = encode(&[file("\\setshell v echo 1\nSELECT :v;\n")]);
        assert!(decode(&e).unwrap_err().0.contains("line 1"));
        assert!(decode(r#"[{"builtin": "nope", "weight": 1}]"#).is_err());
        assert!(decode(r#"[{"builtin": "select-only", "weight": -1}]"#).is_err());
        assert!(decode("[]").is_err());
    }
}
