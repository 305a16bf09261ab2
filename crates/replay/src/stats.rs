//! pgreplay's parse statistics, counted as it counts them and printed in its words.

use std::fmt::Write;

/// Counters of a parse.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ParseStats {
    pub lines: u64,
    pub simple: u64,
    pub copy: u64,
    pub param: u64,
    pub named: u64,
    pub exec_named: u64,
    pub fastpath: u64,
    pub cancel: u64,
}

impl ParseStats {
    /// The "Parse statistics" block, starting with its blank line.
    pub fn report(&self) -> String {
        let mut s = String::new();
        let _ = write!(s, "\nParse statistics\n================\n\n");
        let _ = writeln!(s, "Log lines read: {}", self.lines);
        let _ = writeln!(
            s,
            "Total SQL statements processed: {}",
            self.simple + self.param + self.exec_named
        );
        let _ = writeln!(s, "Simple SQL statements processed: {}", self.simple);
        if self.copy > 0 {
            let _ = writeln!(s, "(includes {} ignored copy statements)", self.copy);
        }
        let _ = writeln!(s, "Parametrized SQL statements processed: {}", self.param);
        let _ = writeln!(
            s,
            "Named prepared SQL statements executions processed: {}",
            self.exec_named
        );
        if self.named > 0 {
            let _ = writeln!(
                s,
                "Different named prepared SQL statements processed: {}",
                self.named
            );
            let reuse = (self.exec_named as f64 - self.named as f64) / self.named as f64;
            let _ = writeln!(s, "(average reuse count {reuse:.3})");
        }
        let _ = writeln!(s, "Cancel requests processed: {}", self.cancel);
        let _ = writeln!(s, "Fast-path function calls ignored: {}", self.fastpath);
        s
    }
}
