//! Unit tests of `--set` parsing and merging (pure: text in, text out).

use super::*;

fn sets(s: &[&str]) -> Vec<Override> {
    s.iter().map(|x| parse(x).unwrap()).collect()
}

const FILE: &str = r#"
name = "x"
[workload]
duration = "4s"
clients = 4
[matrix]
"settings.synchronous_commit" = ["on", "off"]
repetitions = 3
"#;

#[test]
fn keys_values_and_bare_strings() {
    let o = parse("workload.transactions=40").unwrap();
    assert_eq!(o.path, ["workload", "transactions"]);
    assert_eq!(o.value, Value::Integer(40));
    let o = parse("workload.duration = 1s").unwrap();
    assert_eq!(o.value, Value::String("1s".into()));
    let o = parse(r#"matrix."settings.synchronous_commit"=["off"]"#).unwrap();
    assert_eq!(o.path, ["matrix", "settings.synchronous_commit"]);
    assert_eq!(o.value, Value::Array(vec![Value::String("off".into())]));
    let o = parse("target.settings={ work_mem = \"8MB\" }").unwrap();
    assert_eq!(o.path, ["target", "settings"]);
    assert!(o.value.is_table());
    let o = parse("workload.isolation=repeatable read").unwrap();
    assert_eq!(o.value, Value::String("repeatable read".into()));
}

#[test]
fn bad_overrides_say_what_is_expected() {
    for s in ["transactions", "=4", "a..b=1"] {
        let e = parse(s).unwrap_err().to_string();
        assert!(e.contains("--set") && e.contains("KEY=VALUE"), "{e}");
    }
    let e = apply("f.toml", FILE, &sets(&["name.x=1"]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`name` is not a table"), "{e}");
}

#[test]
fn apply_merges_replaces_alternatives_and_names_the_overrides() {
    let text = apply(
        "f.toml",
        FILE,
        &sets(&[
            "workload.transactions=40",
            "repetitions=1",
            "matrix.clients=[1]",
        ]),
    )
    .unwrap();
    assert!(text.starts_with(
        "# f.toml, overridden on the command line:\n#   --set workload.transactions=40\n"
    ));
    let doc: Table = text.parse().unwrap();
    let w = doc["workload"].as_table().unwrap();
    assert_eq!(w.get("transactions"), Some(&Value::Integer(40)));
    assert!(
        w.get("duration").is_none(),
        "duration replaced by transactions"
    );
    assert_eq!(w.get("clients"), Some(&Value::Integer(4)));
    let m = doc["matrix"].as_table().unwrap();
    assert!(m.get("repetitions").is_none(), "top-level repetitions wins");
    assert_eq!(doc["repetitions"], Value::Integer(1));
    assert!(m.contains_key("settings.synchronous_commit"));
    // the result is a valid study with the same meaning
    let study = crate::spec::parse("f.toml (with --set)", &text).unwrap();
    assert_eq!(study.spec.repetitions, Some(1));
}

#[test]
fn same_overrides_same_text() {
    let a = apply("f.toml", FILE, &sets(&["workload.clients=2"])).unwrap();
    let b = apply("f.toml", FILE, &sets(&["workload.clients=2"])).unwrap();
    assert_eq!(a, b);
}

#[test]
fn misspelt_keys_are_named_by_themselves() {
    let e = parse("workload.duraton=2s").unwrap_err().to_string();
    assert!(
        e.starts_with(
            "--set workload.duraton=2s: unknown workload key `duraton` (did you mean `duration`?)"
        ),
        "{e}"
    );
    let e = parse("matrix.clinets=[1]").unwrap_err().to_string();
    assert!(
        e.contains("unknown matrix key `clinets` (did you mean `clients`?)"),
        "{e}"
    );
    let e = parse("repetitons=1").unwrap_err().to_string();
    assert!(
        e.contains("unknown key `repetitons` (did you mean `repetitions`?)"),
        "{e}"
    );
    assert!(parse("matrix.\"settings.work_mem\"=[\"1MB\"]").is_ok());
    assert!(parse("dataset.scale=2").is_ok());
}

#[test]
fn zip_can_be_set_from_the_command_line() {
    let text = apply("s.toml", FILE, &sets(&["zip.threads=clients"])).unwrap();
    let p = crate::plan::expand(&crate::spec::parse("s.toml", &text).unwrap());
    // clients is not swept: the zip is refused by the plan with its reason
    let e = p.unwrap_err().to_string();
    assert!(
        e.contains("`clients` is neither a [matrix] key nor set by a step"),
        "{e}"
    );
    let text = apply(
        "s.toml",
        FILE,
        &sets(&["zip.threads=clients", "matrix.clients=[1, 3]"]),
    )
    .unwrap();
    let p = crate::plan::expand(&crate::spec::parse("s.toml", &text).unwrap()).unwrap();
    let t: Vec<u32> = p.points.iter().map(|pt| pt.workload.threads).collect();
    assert_eq!(t, [1, 3, 1, 3], "clients is added after synchronous_commit");
}
