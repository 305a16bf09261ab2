//! YCSB's closing summary, rendered from pgrig's run document: `[OVERALL], RunTime(ms)` and
//! `Throughput(ops/sec)`, then per operation (each transaction type is one YCSB operation)
//! `Operations`, `AverageLatency(us)`, `MinLatency(us)`, `MaxLatency(us)`, the 95th and 99th
//! percentile and `Return=OK`, as YCSB's text exporter writes them (`[NAME], measurement,
//! value`, doubles as Java prints them). Failed operations appear as YCSB files them, under
//! `[NAME-FAILED]` with `Return=ERROR`. Operations that never ran print nothing (YCSB makes a
//! measurement on first use). A pure function: the document in, the lines out.

use pgrig_engine::document::{RunDocument, ScriptDoc};

/// The summary lines, in YCSB's order (overall first, then the operations in the run's order).
pub fn summary_lines(doc: &RunDocument) -> Vec<String> {
    let runtime_ms = (doc.duration_s * 1000.0).round() as u64;
    let ops = doc.transactions.ok + doc.transactions.failed;
    let throughput = if runtime_ms > 0 {
        1000.0 * ops as f64 / runtime_ms as f64
    } else {
        0.0
    };
    let mut out = vec![
        line("OVERALL", "RunTime(ms)", runtime_ms.to_string()),
        line("OVERALL", "Throughput(ops/sec)", java_double(throughput)),
    ];
    for s in &doc.scripts {
        operation(&mut out, s);
    }
    out
}

/// The summary as text, one line each, newline-terminated.
pub fn summary_text(doc: &RunDocument) -> String {
    summary_lines(doc)
        .iter()
        .map(|l| format!("{l}\n"))
        .collect()
}

fn operation(out: &mut Vec<String>, s: &ScriptDoc) {
    let name = operation_name(&s.desc);
    let t = &s.transactions;
    if t.ok > 0 {
        let l = &s.latency_ms;
        let us = |ms: f64| ((ms * 1000.0).round() as u64).to_string();
        out.push(line(name, "Operations", t.ok.to_string()));
        out.push(line(
            name,
            "AverageLatency(us)",
            java_double(l.mean * 1000.0),
        ));
        out.push(line(name, "MinLatency(us)", us(l.min)));
        out.push(line(name, "MaxLatency(us)", us(l.max)));
        out.push(line(name, "95thPercentileLatency(us)", us(l.p95)));
        out.push(line(name, "99thPercentileLatency(us)", us(l.p99)));
        out.push(line(name, "Return=OK", t.ok.to_string()));
    }
    if t.failed > 0 {
        let failed = format!("{name}-FAILED");
        out.push(line(&failed, "Operations", t.failed.to_string()));
        out.push(line(&failed, "Return=ERROR", t.failed.to_string()));
    }
}

/// The operation a script stands for: its description up to any ` (` or after a `: `
/// (`READ`, `ycsb-a: READ`, `READ (builtin)` all name `READ`).
fn operation_name(desc: &str) -> &str {
    let d = desc.rsplit(": ").next().unwrap_or(desc);
    d.split(" (").next().unwrap_or(d).trim()
}

fn line(metric: &str, measurement: &str, value: String) -> String {
    format!("[{metric}], {measurement}, {value}")
}

/// `v` as Java's `Double.toString` writes it: plain with at least one decimal from 10^-3 to
/// 10^7, else `d.dddE±n`.
pub fn java_double(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let a = v.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let s = format!("{v}");
        return if s.contains('.') { s } else { format!("{s}.0") };
    }
    let s = format!("{v:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_java_prints_them() {
        assert_eq!(java_double(0.0), "0.0");
        assert_eq!(java_double(98.91196834817013), "98.91196834817013");
        assert_eq!(java_double(1500.0), "1500.0");
        assert_eq!(java_double(12_345_678.0), "1.2345678E7");
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(0.0001234), "1.234E-4");
    }

    #[test]
    fn operation_names_come_from_the_description() {
        assert_eq!(operation_name("READ"), "READ");
        assert_eq!(
            operation_name("ycsb-f: READ-MODIFY-WRITE"),
            "READ-MODIFY-WRITE"
        );
        assert_eq!(operation_name("SCAN (weight 95)"), "SCAN");
    }
}
