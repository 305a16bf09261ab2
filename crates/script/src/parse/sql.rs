//! Compiling an SQL command: `:name` references (pgbench's `parseVariable` rules), the `$n` form
//! for extended/prepared modes, the prepared-statement name and the `-r` display line.

use crate::bytes;
use crate::command::{QueryMode, SqlCommand, SqlPart};
use crate::error::ScriptError;
use crate::lexer::SqlChunk;
use crate::vars::VarTable;

/// pgbench's limit on parameters of one statement (`MAX_ARGS - 1`).
pub const MAX_PARAMS: usize = 255;

/// `-r` text of an SQL command: its first line, at most 127 bytes (cut back to a char boundary).
pub(crate) fn sql_first_line(text: &str) -> String {
    let line = text.split(['\n', '\r']).next().unwrap_or("");
    let mut end = line.len().min(127);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].to_owned()
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_name_char(b: u8) -> bool {
    is_name_start(b) || b.is_ascii_digit()
}

/// Split `text` into literal pieces and `:name` references. A `:` not followed by a name-start
/// character skips all consecutive colons (so `::int` and `:=` stay literal).
pub(crate) fn split_vars(text: &str, vars: &mut VarTable) -> Vec<SqlPart> {
    let b = text.as_bytes();
    let mut parts = Vec::new();
    let mut lit_start = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b':' {
            i += 1;
            continue;
        }
        if i + 1 < b.len() && is_name_start(b[i + 1]) {
            let mut j = i + 1;
            while j < b.len() && is_name_char(b[j]) {
                j += 1;
            }
            if lit_start < i {
                parts.push(SqlPart::Lit(bytes::encode(&text[lit_start..i])));
            }
            let name = &text[i + 1..j];
            parts.push(SqlPart::Var {
                var: vars.intern(name),
                name: name.to_owned(),
            });
            i = j;
            lit_start = j;
        } else {
            while i < b.len() && b[i] == b':' {
                i += 1;
            }
        }
    }
    if lit_start < b.len() {
        parts.push(SqlPart::Lit(bytes::encode(&text[lit_start..])));
    }
    parts
}

/// Build the compiled SQL command. Prepared mode takes the next `P_<n>` name from `counter`.
pub(crate) fn compile_sql(
    chunk: &SqlChunk,
    vars: &mut VarTable,
    mode: QueryMode,
    counter: &mut usize,
) -> SqlCommand {
    let parts = split_vars(&chunk.text, vars);
    let mut param_sql_bytes = Vec::with_capacity(chunk.text.len());
    let mut params = Vec::new();
    for p in &parts {
        match p {
            SqlPart::Lit(s) => param_sql_bytes.extend_from_slice(s),
            SqlPart::Var { var, .. } => {
                params.push(*var);
                param_sql_bytes.push(b'$');
                param_sql_bytes.extend_from_slice(params.len().to_string().as_bytes());
            }
        }
    }
    let param_sql = bytes::decode(&param_sql_bytes).into_owned();
    let prepared_name = if mode == QueryMode::Prepared {
        let name = format!("P_{counter}");
        *counter += 1;
        name
    } else {
        String::new()
    };
    SqlCommand {
        text: chunk.text.clone(),
        parts,
        param_sql,
        param_sql_bytes,
        params,
        prepared_name,
        statements: chunk.statements,
        gset: None,
    }
}

/// Extended and prepared modes accept at most [`MAX_PARAMS`] parameters per command.
pub(crate) fn check_params(sql: &SqlCommand, mode: QueryMode) -> Result<(), ScriptError> {
    if mode != QueryMode::Simple && sql.params.len() > MAX_PARAMS {
        return Err(ScriptError::message(format!(
            "statement has too many arguments (maximum is {MAX_PARAMS}): {}",
            sql.text
        )));
    }
    Ok(())
}
