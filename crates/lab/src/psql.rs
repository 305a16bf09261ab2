//! Running SQL through the installed `psql` (for test setup and administration; the product's
//! own wire driver lives in pgrig-wire).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::{tail_lines, LabError};

/// Runs `sql` via `psql -X -q -At -v ON_ERROR_STOP=1 -f -` with exactly the given `PG*` env
/// (all other `PG*` variables of this process removed). Returns stdout without the final newline.
pub(crate) fn run(
    psql: &Path,
    env: &[(String, String)],
    db: &str,
    sql: &str,
) -> Result<String, LabError> {
    let mut cmd = Command::new(psql);
    cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-f", "-"]);
    for (k, _) in std::env::vars_os() {
        if k.to_str().is_some_and(|k| k.starts_with("PG")) {
            cmd.env_remove(&k);
        }
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let failed = |status: String, stderr: String| LabError::Psql {
        db: db.to_string(),
        sql: abbreviate(sql),
        status,
        stderr,
    };
    let mut child = cmd.spawn().map_err(|e| {
        failed(
            format!("could not start {}: {e}", psql.display()),
            String::new(),
        )
    })?;
    let mut stdin = child.stdin.take();
    let sql_owned = sql.to_string();
    // Feed stdin from a thread so large outputs cannot deadlock against a large script.
    let feeder = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(sql_owned.as_bytes());
        }
    });
    let out = child
        .wait_with_output()
        .map_err(|e| failed(format!("wait failed: {e}"), String::new()))?;
    let _ = feeder.join();
    if !out.status.success() {
        return Err(failed(
            out.status.to_string(),
            tail_lines(&String::from_utf8_lossy(&out.stderr), 20),
        ));
    }
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    if text.ends_with('\n') {
        text.pop();
    }
    Ok(text)
}

fn abbreviate(sql: &str) -> String {
    let one_line = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 200 {
        one_line.chars().take(200).collect::<String>() + "..."
    } else {
        one_line
    }
}
