//! The server and client profiles a stored run keeps (`[collect] profile`): their folded stacks
//! as `pgrig results flame` and compare's `--flame` read them, and `results show`'s short form.

use serde_json::{json, Value};

/// The folded stacks a stored run keeps for `which` (`server` or `client`), from
/// `Store::show`'s document.
pub fn stored<'a>(run: &'a Value, which: &str) -> Option<&'a str> {
    run["provenance"]["profiles"][which]["folded"].as_str()
}

/// `results show`'s form of a stored run: each profile's folded stacks replaced by their size
/// and the command that exports its flame graph.
pub fn summarise(run: &mut Value, id: i64) {
    let Some(profiles) = run["provenance"]["profiles"].as_object_mut() else {
        return;
    };
    for (which, p) in profiles.iter_mut() {
        let stacks = p["folded"].as_str().map_or(0, |f| f.lines().count());
        let flag = if which == "client" { " --client" } else { "" };
        p["folded"] = json!(format!(
            "{stacks} folded stacks: `pgrig results flame {id}{flag} -o {which}.svg` (--folded for the stacks)"
        ));
    }
}

/// Provenance with each profile's folded stacks left out (drawn as flame graphs instead):
/// their count stays.
pub fn without_stacks(provenance: &Value) -> Value {
    let mut p = provenance.clone();
    if let Some(profiles) = p.get_mut("profiles").and_then(Value::as_object_mut) {
        for prof in profiles.values_mut() {
            if let Some(o) = prof.as_object_mut() {
                if let Some(Value::String(f)) = o.remove("folded") {
                    o.insert("stacks".into(), Value::from(f.lines().count()));
                }
            }
        }
    }
    p
}
