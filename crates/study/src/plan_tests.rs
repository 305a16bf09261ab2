//! Unit tests of plan expansion.

use super::*;
use crate::spec::parse;

fn plan(text: &str) -> Result<Plan, StudyError> {
    expand(&parse("s.toml", text).unwrap())
}

#[test]
fn cartesian_product_first_dimension_outermost() {
    assert_eq!(cartesian(&[2, 3]).len(), 6);
    assert_eq!(
        cartesian(&[2, 2]),
        vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]
    );
    assert_eq!(cartesian(&[]), vec![Vec::<usize>::new()]);
}

#[test]
fn isolation_example_expands_points_repetitions_rounds() {
    let p = plan(
        "name = \"isolation\"\n[dataset]\nreinit = \"per-run\"\n[workload]\ntransactions = 10\nrounds = 2\n\
         [matrix]\nclients = [1, 4]\nisolation = [\"read committed\", \"serializable\"]\nrepetitions = 3\n",
    )
    .unwrap();
    assert_eq!(p.points.len(), 4);
    assert_eq!(p.repetitions, 3);
    assert_eq!(p.runs.len(), 4 * 3 * 2);
    assert_eq!(
        p.points[1].values[0],
        ("clients".to_string(), toml::Value::Integer(1))
    );
    assert_eq!(
        p.points[1].workload.isolation.as_deref(),
        Some("serializable")
    );
    assert_eq!(p.points[2].workload.clients, 4);
    // per-run: every first round re-initialises
    assert!(p.runs.iter().all(|r| r.reinit == (r.round == 1)));
    let idx: Vec<usize> = p.runs.iter().map(|r| r.index).collect();
    assert_eq!(idx, (0..24).collect::<Vec<_>>());
}

#[test]
fn reinit_policies() {
    let base = "name = \"x\"\n[workload]\nrounds = 2\n[matrix]\nclients = [1, 2]\nrepetitions = 2\n[dataset]\nreinit = ";
    let count = |policy: &str| {
        plan(&format!("{base}\"{policy}\"\n"))
            .unwrap()
            .runs
            .iter()
            .filter(|r| r.reinit)
            .count()
    };
    assert_eq!(count("per-run"), 4);
    assert_eq!(count("per-point"), 2);
    assert_eq!(count("once"), 1);
}

#[test]
fn settings_dimensions_and_scripts_lists() {
    let p = plan(
        "name = \"x\"\n[matrix]\n\"settings.synchronous_commit\" = [\"on\", false]\n\
         scripts = [[\"a.sql\"], \"b.sql\"]\n",
    )
    .unwrap();
    assert_eq!(p.points.len(), 4);
    assert_eq!(
        p.points[2].settings,
        vec![("synchronous_commit".to_string(), "off".to_string())]
    );
    assert_eq!(
        p.points[1].workload.scripts.as_deref(),
        Some(&["b.sql".to_string()][..])
    );
}

#[test]
fn unknown_matrix_key_names_line_and_key() {
    let e = plan("name = \"x\"\n[matrix]\nclients = [1]\nclinets = [2]\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("s.toml:4:1: unknown matrix key `clinets`"),
        "{e}"
    );
}

#[test]
fn bad_matrix_value_points_at_its_key() {
    let e = plan("name = \"x\"\n[matrix]\nisolation = [\"snapshot\"]\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("s.toml:3:13: matrix `isolation` value \"snapshot\": unknown isolation"),
        "{e}"
    );
    let e = plan("name = \"x\"\n[matrix]\nclients = 4\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("must be a list"), "{e}");
    let e = plan("name = \"x\"\n[matrix]\nclients = [\"x\"]\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("s.toml:3:11: matrix `clients` value \"x\": invalid type"),
        "{e}"
    );
}

#[test]
fn workload_errors_point_at_the_key_not_the_header() {
    let text = "name = \"x\"\n[workload]\nclients = 2\nisolation = \"snapshot\"\n";
    let e = plan(text).unwrap_err().to_string();
    assert!(e.starts_with("s.toml:4:13: workload `isolation`"), "{e}");
    let e = plan("name = \"x\"\n[workload]\nclients = 2\nduraton = \"2s\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("s.toml:4:1: unknown workload key `duraton` (did you mean `duration`?)"),
        "{e}"
    );
    // a combination: blamed on the key that completes it
    let e = plan("name = \"x\"\n[workload]\ntransactions = 2\nduration = 2\n")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("s.toml:4:12: workload `duration`"), "{e}");
}

#[test]
fn workload_keys_are_type_checked_even_when_the_matrix_overrides_them() {
    let e = plan("name = \"x\"\n[workload]\nclients = \"four\"\n[matrix]\nclients = [1, 2]\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("s.toml:3:11: workload `clients`: invalid type"),
        "{e}"
    );
    let e = plan("name = \"x\"\n[matrix]\nclinets = [1]\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("(did you mean `clients`?)"), "{e}");
}

#[test]
fn malformed_target_urls_are_refused_at_their_line() {
    let e = plan("name = \"x\"\n[target]\nurl = \"postgresql://bob:pw@[::1/db\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("s.toml:3:7: target url: "), "{e}");
    assert!(e.contains("bob:****@"), "{e}");
}

#[test]
fn targets_are_the_outermost_dimension() {
    let p = plan(
        "name = \"x\"\n[[targets]]\nname = \"a\"\n[[targets]]\nname = \"b\"\nsettings = { work_mem = \"8MB\" }\n\
         [matrix]\nclients = [1, 2]\n",
    )
    .unwrap();
    assert_eq!(p.targets.len(), 2);
    assert_eq!(p.points.len(), 4);
    assert_eq!(p.points[2].target, 1);
    assert_eq!(
        p.points[2].values[0],
        ("target".to_string(), toml::Value::String("b".into()))
    );
    assert_eq!(
        p.targets[1].settings,
        vec![("work_mem".to_string(), "8MB".to_string())]
    );
    // a new target starts on fresh data even with reinit = once
    assert_eq!(p.runs.iter().filter(|r| r.reinit).count(), 2);
}

#[test]
fn server_cpus_refused_for_external_targets() {
    let e =
        plan("name = \"x\"\n[target]\nurl = \"postgresql://h/db\"\n[matrix]\nserver_cpus = [1]\n")
            .unwrap_err()
            .to_string();
    assert!(
        e.contains("server_cpus needs a throwaway local server"),
        "{e}"
    );
}

#[test]
fn study_settings_merge_with_target_settings() {
    let p =
        plan("name = \"x\"\nsettings = { a = 1, b = \"x\" }\n[target]\nsettings = { b = \"y\" }\n")
            .unwrap();
    assert_eq!(
        p.targets[0].settings,
        vec![
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "y".to_string())
        ]
    );
}

#[test]
fn interleaved_order_alternates_the_points_in_every_repetition() {
    let text = "name = \"x\"\norder = \"interleaved\"\n[workload]\nrounds = 2\n\
                [matrix]\nclients = [1, 2]\nrepetitions = 3\n[dataset]\nreinit = \"per-point\"\n";
    let p = plan(text).unwrap();
    let order: Vec<(usize, u32, u32)> = p
        .runs
        .iter()
        .map(|r| (r.point, r.repetition, r.round))
        .collect();
    assert_eq!(
        &order[..6],
        &[
            (0, 1, 1),
            (0, 1, 2),
            (1, 1, 1),
            (1, 1, 2),
            (0, 2, 1),
            (0, 2, 2)
        ]
    );
    assert_eq!(p.runs.len(), 2 * 3 * 2);
    // per-point: fresh data whenever the point changes, which is every repetition here
    assert!(p.runs.iter().all(|r| r.reinit == (r.round == 1)));
    let default = plan(&text.replace("order = \"interleaved\"\n", "")).unwrap();
    assert_eq!(
        default.runs.iter().map(|r| r.point).collect::<Vec<_>>(),
        [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    );
    let e = parse("s.toml", &text.replace("interleaved", "random"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("s.toml:2") && e.contains("interleaved"), "{e}");
}
