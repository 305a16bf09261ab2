//! sysbench 0.5's command lines (`--test=.../oltp.lua --oltp-tables-count=250
//! --oltp-table-size=... --num-threads=8 --max-time=60 run`, as old posts write them): the one
//! hint line printed after sysbench's own error, naming the sysbench 1.0 test and options that
//! do the same (`oltp_read_write --tables=250 --table-size=...`).

use std::path::Path;

use super::cmdline::CmdLine;

/// sysbench 0.5's scripts (`tests/db/*.lua`) and the 1.0 test that does what each does
/// (`oltp`: by its `--oltp-read-only` / `--oltp-write-only`).
const SCRIPTS: [(&str, &str); 8] = [
    ("oltp", "oltp_read_write"),
    ("oltp_simple", "oltp_point_select"),
    ("select", "oltp_point_select"),
    ("insert", "oltp_insert"),
    ("delete", "oltp_delete"),
    ("update_index", "oltp_update_index"),
    ("update_non_index", "oltp_update_non_index"),
    ("parallel_prepare", "oltp_read_write"),
];

/// The general options 0.5 spelled otherwise, and 1.0's names (a 0 leaves the option out).
const GENERAL: [(&str, &str); 4] = [
    ("num-threads", "threads"),
    ("max-time", "time"),
    ("max-requests", "events"),
    ("tx-rate", "rate"),
];

/// The hint for a 0.5 command line naming test `arg` (`None`: not one).
pub fn hint(c: &CmdLine, arg: &str) -> Option<String> {
    let stem = Path::new(arg)
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| n.strip_suffix(".lua").unwrap_or(n))
        .unwrap_or(arg);
    let legacy_opts = c.rest.iter().any(|(n, _, _)| n.starts_with("oltp_"));
    let mapped = SCRIPTS.iter().find(|(s, _)| *s == stem).map(|(_, t)| *t);
    if mapped.is_none() && !legacy_opts {
        return None;
    }
    let on = |name: &str| {
        c.rest
            .iter()
            .any(|(n, v, _)| n == name && super::options::parse_bool(v.as_deref()) == Some(true))
    };
    let test = match mapped.unwrap_or("oltp_read_write") {
        "oltp_read_write" if on("oltp_read_only") => "oltp_read_only",
        "oltp_read_write" if on("oltp_write_only") => "oltp_write_only",
        t => t,
    };
    let mut line = vec![test.to_string()];
    for (name, value, _) in &c.rest {
        let Some(opt) = name.strip_prefix("oltp_") else {
            continue;
        };
        let opt = match opt {
            "read_only" | "write_only" => continue,
            "tables_count" => "tables",
            o => o,
        };
        let opt = opt.replace('_', "-");
        line.push(match value {
            Some(v) => format!("--{opt}={v}"),
            None => format!("--{opt}"),
        });
    }
    for (old, new) in GENERAL {
        if let Some(Some(v)) = c.given(old) {
            if v.trim() != "0" {
                line.push(format!("--{new}={v}"));
            }
        }
    }
    line.extend(c.command.clone());
    Some(format!(
        "HINT: this is a sysbench 0.5 command line; in sysbench 1.0 (and pgrig) it is: sysbench {}\n",
        line.join(" ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(s: &str) -> CmdLine {
        CmdLine::parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn oltp_lua_with_its_options_is_oltp_read_write() {
        let c = line("--test=/usr/share/doc/sysbench/tests/db/oltp.lua --oltp-tables-count=250 --oltp-table-size=25000 --num-threads=8 --max-time=60 --max-requests=0 run");
        assert_eq!(
            hint(&c, "/usr/share/doc/sysbench/tests/db/oltp.lua").unwrap(),
            "HINT: this is a sysbench 0.5 command line; in sysbench 1.0 (and pgrig) it is: sysbench oltp_read_write --tables=250 --table-size=25000 --threads=8 --time=60 run\n"
        );
    }

    #[test]
    fn read_only_and_write_only_runs_name_their_tests() {
        let c = line("--test=oltp.lua --oltp-write-only=on --oltp-table-size=10 prepare");
        let h = hint(&c, "oltp.lua").unwrap();
        assert!(
            h.ends_with("sysbench oltp_write_only --table-size=10 prepare\n"),
            "{h}"
        );
        let c = line("--test=oltp.lua --oltp-read-only run");
        assert!(hint(&c, "oltp.lua")
            .unwrap()
            .contains("sysbench oltp_read_only run"));
        let c = line("--test=tests/db/update_index.lua run");
        assert!(hint(&c, "tests/db/update_index.lua")
            .unwrap()
            .contains("sysbench oltp_update_index run"));
    }

    #[test]
    fn a_1_0_line_gets_no_hint() {
        let c = line("oltp_read_write --tables=2 run");
        assert_eq!(hint(&c, "oltp_read_write"), None);
        assert_eq!(hint(&c, "/tmp/mine.lua"), None);
    }
}
