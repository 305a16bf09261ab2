//! COPY into a table: the format (binary when the table's columns are exactly what the row
//! source writes in binary, else text) and the rows sent in chunks, with pgbench's error texts.

use crate::ctx::{query_failed, StepCtx};
use crate::dataset::{CopyFormat, RowSource, BINARY_HEADER, BINARY_TRAILER};
use crate::db::InitDb;
use crate::ddl;
use pgrig_engine::error::EngineError;
use pgrig_engine::sink::Level;

/// Bytes of COPY data collected before a chunk is sent.
pub const CHUNK: usize = 128 * 1024;

/// Binary COPY when `target`'s columns are exactly what `src` writes in binary, else text.
pub async fn copy_format<D: InitDb>(
    db: &mut D,
    target: &str,
    src: &dyn RowSource,
) -> Result<CopyFormat, EngineError> {
    let Some(want) = src.binary_columns() else {
        return Ok(CopyFormat::Text);
    };
    let sql = ddl::column_types_query(target);
    let types = db
        .query_value(&sql)
        .await
        .map_err(|e| query_failed(&e.message, &sql))?
        .unwrap_or_default();
    Ok(binary_format_for(&types, want, src.rows()))
}

/// The binary format when the comma-separated `types` match `want` (`key` = `integer`, if all
/// keys fit, or `bigint`), else text (which lets the server report pgbench's errors).
pub fn binary_format_for(types: &str, want: &[&str], rows: i64) -> CopyFormat {
    let types: Vec<&str> = types.split(',').collect();
    if types.len() != want.len() {
        return CopyFormat::Text;
    }
    let mut wide_key = false;
    for (t, w) in types.iter().zip(want) {
        match (*w, *t) {
            ("key", "integer") if rows <= i64::from(i32::MAX) => {}
            ("key", "bigint") => wide_key = true,
            (w, t) if w != "key" && w == t => {}
            _ => return CopyFormat::Text,
        }
    }
    CopyFormat::Binary { wide_key }
}

/// Sends rows `from..to` (0-based) of `src` with the COPY statement `copy`. `on_row(j)` is
/// called with the 1-based number of rows sent so far and may return progress text to print.
#[allow(clippy::too_many_arguments)]
pub async fn copy_rows<D: InitDb>(
    ctx: &StepCtx<'_>,
    db: &mut D,
    src: &dyn RowSource,
    copy: &str,
    format: CopyFormat,
    from: i64,
    to: i64,
    mut on_row: impl FnMut(i64) -> Option<String>,
) -> Result<(), EngineError> {
    let started = db.copy_start(copy).await;
    ctx.flush_notices(db);
    if let Err(e) = started {
        return Err(EngineError::fatal(format!(
            "unexpected copy in result: {}",
            e.message.trim_end()
        )));
    }
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK + 256);
    let binary = matches!(format, CopyFormat::Binary { .. });
    if binary {
        buf.extend_from_slice(BINARY_HEADER);
    }
    for k in from..to {
        src.push_row(&mut buf, k, format);
        if let Some(text) = on_row(k - from + 1) {
            ctx.say(&text);
        }
        if buf.len() >= CHUNK {
            send(db, &buf).await?;
            buf.clear();
        }
    }
    if binary {
        buf.extend_from_slice(BINARY_TRAILER);
    }
    if !buf.is_empty() {
        send(db, &buf).await?;
    }
    let ended = db.copy_end().await;
    ctx.flush_notices(db);
    if let Err(e) = ended {
        // libpq reports the server's error through the notice processor, then pgbench fails.
        ctx.say(&format!("{}\n", e.message.trim_end()));
        return Err(EngineError::fatal("PQendcopy failed"));
    }
    Ok(())
}

async fn send<D: InitDb>(db: &mut D, buf: &[u8]) -> Result<(), EngineError> {
    db.copy_data(buf).await.map_err(|e| {
        EngineError::fatal(e.message.trim_end().to_string()).with(Level::Error, "PQputline failed")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const WANT: [&str; 4] = ["key", "integer", "integer", "character"];

    #[test]
    fn binary_only_for_pgbench_columns() {
        assert_eq!(
            binary_format_for("integer,integer,integer,character", &WANT, 100),
            CopyFormat::Binary { wide_key: false }
        );
        assert_eq!(
            binary_format_for("bigint,integer,integer,character", &WANT, 100),
            CopyFormat::Binary { wide_key: true }
        );
        assert_eq!(
            binary_format_for("integer,integer,integer,character", &WANT, 3_000_000_000),
            CopyFormat::Text,
            "keys beyond int must reach the server as text so it reports the overflow"
        );
        assert_eq!(
            binary_format_for("integer,integer,integer,text", &WANT, 100),
            CopyFormat::Text
        );
        assert_eq!(
            binary_format_for("integer,integer,integer", &WANT, 100),
            CopyFormat::Text
        );
    }
}
