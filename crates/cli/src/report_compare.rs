//! The compare view of `pgrig report`: `--compare A B` (selections as `pgrig compare` takes
//! them), or, when a report shows one study that sweeps exactly one key over two values (or
//! runs on two targets), the comparison of those two points. Rendered by `pgrig-compare` as its
//! HTML table fragment for the report's compare section.

use pgrig_compare::render::{self, Format};
use pgrig_compare::CompareError;
use pgrig_report::model::Model;
use pgrig_report::ReportError;

/// `--compare A B`: the comparison's HTML, or the compare error as a usage error.
pub fn explicit(store: &str, a: &str, b: &str) -> Result<String, ReportError> {
    html(store, a, b).map_err(|e| ReportError::Usage(format!("--compare: {e}")))
}

/// The automatic comparison of a study's two points, when the model calls for one: the
/// comparison's HTML, or a paragraph saying why it could not be made (too few runs, ...).
pub fn automatic(store: &str, model: &Model) -> Option<String> {
    let [study] = model.studies.as_slice() else {
        return None;
    };
    if !model.loose.is_empty() || study.name.contains(" (version ") {
        return None;
    }
    let (a, b) = two_points(&study.name, &study.runs)?;
    Some(match html(store, &a, &b) {
        Ok(h) => h,
        Err(e) => format!(
            "<p>{} against {}: no comparison ({})</p>",
            pgrig_report::html::esc(&a),
            pgrig_report::html::esc(&b),
            pgrig_report::html::esc(&e.to_string())
        ),
    })
}

/// Selectors of the two points of a study that sweeps one key over two values (or two targets).
fn two_points(name: &str, runs: &[pgrig_report::model::Run]) -> Option<(String, String)> {
    let keys = pgrig_report::choose::swept_keys(runs);
    let (key, mut values): (String, Vec<String>) = match keys.as_slice() {
        [k] => (
            k.clone(),
            runs.iter()
                .filter_map(|r| r.value(k).map(|v| v.text.clone()))
                .collect(),
        ),
        [] => (
            "target".into(),
            runs.iter().map(|r| r.target.clone()).collect(),
        ),
        _ => return None,
    };
    let mut seen = Vec::new();
    values.retain(|v| {
        let new = !seen.contains(v);
        seen.push(v.clone());
        new
    });
    match values.as_slice() {
        [x, y] => Some((format!("{name}[{key}={x}]"), format!("{name}[{key}={y}]"))),
        _ => None,
    }
}

fn html(store: &str, a: &str, b: &str) -> Result<String, CompareError> {
    let c = pgrig_compare::run(&pgrig_compare::Options {
        store: store.to_string(),
        a: a.to_string(),
        b: b.to_string(),
        metrics: None,
        force: false,
    })?;
    Ok(render::render(&c, Format::Html))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgrig_report::model::Run;

    fn run(target: &str, point: &[(&str, f64)]) -> Run {
        Run {
            target: target.into(),
            point: point
                .iter()
                .map(|(k, v)| {
                    let value = pgrig_report::input::doc::point_value(&serde_json::json!(v));
                    (k.to_string(), value)
                })
                .collect(),
            ..Run::default()
        }
    }

    #[test]
    fn only_one_key_over_two_values_or_two_targets_is_compared() {
        let two = [run("a", &[("clients", 1.0)]), run("a", &[("clients", 4.0)])];
        assert_eq!(
            two_points("s", &two),
            Some(("s[clients=1.0]".into(), "s[clients=4.0]".into()))
        );
        let targets = [run("a", &[]), run("b", &[]), run("a", &[])];
        assert_eq!(
            two_points("s", &targets),
            Some(("s[target=a]".into(), "s[target=b]".into()))
        );
        let three = [
            run("a", &[("clients", 1.0)]),
            run("a", &[("clients", 2.0)]),
            run("a", &[("clients", 4.0)]),
        ];
        assert_eq!(two_points("s", &three), None);
        let keys = [
            run("a", &[("clients", 1.0), ("jobs", 1.0)]),
            run("a", &[("clients", 4.0), ("jobs", 2.0)]),
        ];
        assert_eq!(two_points("s", &keys), None);
        assert_eq!(two_points("s", &[run("a", &[])]), None);
    }
}
