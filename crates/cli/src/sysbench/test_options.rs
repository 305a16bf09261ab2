//! A test's own options: every option the general ones did not take must be one of the test's
//! (else sysbench's `invalid option: ARG`; a test without options of its own takes any), with
//! a value of its kind; they become the
//! workload's [`Options`], with the general options the test also reads (`--rand-type`, ...).

use pgrig_workloads::Options;

use super::cmdline::CmdLine;
use super::general::Exit;
use super::options::{self, GENERAL_OPTIONS};
use super::seam::{OptKind, TestOption};

fn norm(name: &str) -> String {
    name.replace('-', "_")
}

fn valid(kind: OptKind, value: Option<&str>) -> bool {
    match (kind, value) {
        (OptKind::Bool, v) => options::parse_bool(v).is_some(),
        (_, None) => false,
        (OptKind::Int, Some(v)) => v.trim().parse::<i64>().is_ok(),
        (OptKind::Float, Some(v)) => v.trim().parse::<f64>().is_ok_and(f64::is_finite),
        (OptKind::Str, Some(_)) => true,
    }
}

/// The workload options of the command line for a test with options `known`.
pub fn read(c: &CmdLine, known: &[TestOption]) -> Result<Options, Exit> {
    let find = |name: &str| known.iter().find(|k| norm(&k.name) == norm(name));
    let mut o = Options::new();
    for g in GENERAL_OPTIONS {
        if let (Some(k), Some(Some(v))) = (find(g.name), c.given(g.name)) {
            o.set(&k.name, v);
        }
    }
    // A test that declares no options of its own (bulk_insert) takes any, as strings.
    let takes_any = !known.iter().any(|k| k.own);
    for (name, value, raw) in &c.rest {
        let Some(k) = find(name) else {
            if takes_any {
                o.set(name, value.as_deref().unwrap_or("on"));
                continue;
            }
            return Err(Exit::stderr(format!("invalid option: {raw}")));
        };
        if !valid(k.kind, value.as_deref()) {
            return Err(Exit::stderr(format!("invalid option: {raw}")));
        }
        let v = match (k.kind, value.as_deref()) {
            (OptKind::Bool, v) => {
                if options::parse_bool(v) == Some(true) {
                    "on"
                } else {
                    "off"
                }
            }
            (_, v) => v.unwrap_or_default(),
        };
        o.set(&k.name, v.trim());
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Vec<TestOption> {
        let opt = |name: &str, kind| TestOption {
            name: name.into(),
            kind,
            help: String::new(),
            default: None,
            own: true,
        };
        vec![
            opt("tables", OptKind::Int),
            opt("skip_trx", OptKind::Bool),
            TestOption {
                own: false,
                ..opt("rand-type", OptKind::Str)
            },
        ]
    }

    fn line(s: &str) -> CmdLine {
        CmdLine::parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn test_options_become_workload_options() {
        let o = read(
            &line("--rand-type=uniform t run --tables=3 --skip-trx"),
            &known(),
        )
        .unwrap();
        assert_eq!(o.get("tables"), Some("3"));
        assert_eq!(o.get("skip_trx"), Some("on"));
        assert_eq!(o.get("rand-type"), Some("uniform"));
    }

    #[test]
    fn unknown_options_and_bad_values_are_invalid_options() {
        let e = read(&line("t run --tabels=3"), &known()).unwrap_err();
        assert_eq!(e.stderr, "invalid option: --tabels=3\n");
        let e = read(&line("t run --tables=abc"), &known()).unwrap_err();
        assert_eq!(e.stderr, "invalid option: --tables=abc\n");
        let e = read(&line("t run --skip_trx=maybe"), &known()).unwrap_err();
        assert_eq!(e.stderr, "invalid option: --skip_trx=maybe\n");
    }
}
