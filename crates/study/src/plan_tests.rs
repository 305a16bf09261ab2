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

fn list(n: usize) -> String {
    format!(
        "[{}]",
        (1..=n)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[test]
fn a_200_cubed_matrix_is_refused_naming_the_count() {
    let text = format!(
        "name = \"big\"\n[matrix]\nclients = {l}\nmax_tries = {l}\nrate = {l}\n",
        l = list(200)
    );
    let err = plan(&text).unwrap_err().to_string();
    assert!(err.starts_with("s.toml:2:"), "{err}");
    assert!(err.contains("8000000 points"), "{err}");
    assert!(err.contains("at most 10000"), "{err}");
}

#[test]
fn repetitions_and_rounds_count_against_the_run_limit() {
    let err = plan("name = \"r\"\n[workload]\nrounds = 4000000000\n[matrix]\nclients = [1, 2]\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("8000000000 runs"), "{err}");
    let err = plan("name = \"r\"\n[matrix]\nclients = [1, 2]\nrepetitions = 4000000000\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("8000000000 runs"), "{err}");
}

#[test]
fn a_matrix_at_the_point_limit_expands() {
    let text = format!(
        "name = \"ok\"\n[matrix]\nclients = {l}\nrate = {l}\n",
        l = list(100)
    );
    assert_eq!(plan(&text).unwrap().points.len(), 10_000);
}

const STEPS: &str = "name = \"s\"\n[workload]\nclients = 2\nthreads = 1\n\
[matrix]\nserver_cpus = [1, 2]\n\
[[steps]]\nname = \"base\"\n\
[[steps]]\nname = \"prepared\"\nset = { protocol = \"prepared\" }\n\
[[steps]]\nname = \"more\"\nset = { clients = 4, \"settings.synchronous_commit\" = \"off\" }\n";

#[test]
fn steps_apply_on_top_of_each_other_times_the_matrix() {
    let p = plan(STEPS).unwrap();
    assert_eq!(p.points.len(), 6, "3 steps x 2 server_cpus");
    let named: Vec<(usize, &str, Option<u32>)> = p
        .points
        .iter()
        .map(|pt| {
            let s = pt.step.as_ref().unwrap();
            (s.index, s.name.as_str(), pt.workload.server_cpus)
        })
        .collect();
    assert_eq!(
        named,
        [
            (0, "base", Some(1)),
            (0, "base", Some(2)),
            (1, "prepared", Some(1)),
            (1, "prepared", Some(2)),
            (2, "more", Some(1)),
            (2, "more", Some(2))
        ]
    );
    assert_eq!(
        p.points[2].values[0],
        ("step".to_string(), toml::Value::String("prepared".into()))
    );
    assert_eq!(p.points[1].workload.protocol, "simple");
    // the last step keeps the prepared protocol and adds its own changes
    let last = &p.points[5];
    assert_eq!(last.workload.protocol, "prepared");
    assert_eq!(last.workload.clients, 4);
    assert_eq!(last.settings, [("synchronous_commit".into(), "off".into())]);
    assert!(p.points[3].settings.is_empty());
}

#[test]
fn zipped_key_follows_its_leader_at_every_point() {
    let p = plan(&format!("{STEPS}[zip]\nthreads = \"clients\"\n")).unwrap();
    let threads: Vec<(u32, u32)> = p
        .points
        .iter()
        .map(|pt| (pt.workload.clients, pt.workload.threads))
        .collect();
    assert_eq!(threads, [(2, 2), (2, 2), (2, 2), (2, 2), (4, 4), (4, 4)]);
    let m = plan("name = \"z\"\nzip = { threads = \"clients\" }\n[matrix]\nclients = [1, 3]\n")
        .unwrap();
    let t: Vec<u32> = m.points.iter().map(|pt| pt.workload.threads).collect();
    assert_eq!(t, [1, 3]);
    assert!(m.points.iter().all(|pt| pt.step.is_none()));
}

fn err(text: &str) -> String {
    plan(text).unwrap_err().to_string()
}

#[test]
fn bad_steps_and_zips_name_file_line_column() {
    let twice =
        "name = \"s\"\n[[steps]]\nname = \"a\"\n[[steps]]\nname = \"a\"\nset = { clients = 2 }\n";
    assert!(
        err(twice).starts_with("s.toml:5:8: step name \"a\" is used twice (steps 1 and 2)"),
        "{}",
        err(twice)
    );
    let swept = "name = \"s\"\n[matrix]\nclients = [1, 2]\n[[steps]]\nname = \"a\"\n[[steps]]\nname = \"b\"\nset = { clients = 4 }\n";
    assert!(
        err(swept).starts_with("s.toml:8:9: step \"b\" sets `clients`, which [matrix] also sweeps"),
        "{}",
        err(swept)
    );
    let bad = "name = \"s\"\n[[steps]]\nname = \"a\"\n[[steps]]\nname = \"b\"\nset = { protocol = \"fast\" }\n";
    assert!(
        err(bad).starts_with("s.toml:6:20: step \"b\" `protocol` = \"fast\":"),
        "{}",
        err(bad)
    );
    let unknown = "name = \"s\"\n[[steps]]\nname = \"a\"\nset = { clinets = 2 }\n";
    assert!(
        err(unknown).contains(
            "s.toml:4:9: step \"a\" sets `clinets`: unknown key (did you mean `clients`?)"
        ),
        "{}",
        err(unknown)
    );
    let empty = "name = \"s\"\n[[steps]]\nname = \"a\"\n[[steps]]\nname = \"b\"\n";
    assert!(
        err(empty).starts_with("s.toml:5:8: step \"b\" changes nothing"),
        "{}",
        err(empty)
    );
    let leader = "name = \"s\"\n[zip]\nthreads = \"client\"\n[matrix]\nclients = [1, 2]\n";
    assert!(
        err(leader).starts_with("s.toml:3:11: zip `threads = \"client\"`: `client` is neither a [matrix] key nor set by a step"),
        "{}",
        err(leader)
    );
    let follower =
        "name = \"s\"\n[zip]\nthreads = \"clients\"\n[matrix]\nclients = [1, 2]\nthreads = [1]\n";
    assert!(
        err(follower).starts_with("s.toml:3:1: zip `threads`: `threads` is swept"),
        "{}",
        err(follower)
    );
    let not_a_name = "name = \"s\"\n[zip]\nthreads = 4\n";
    assert!(
        err(not_a_name).starts_with("s.toml:3:11: zip `threads` must name the key it follows"),
        "{}",
        err(not_a_name)
    );
    // a value a follower cannot take is named at the zip
    let value =
        "name = \"s\"\n[zip]\nclients = \"isolation\"\n[matrix]\nisolation = [\"serializable\"]\n";
    assert!(
        err(value).starts_with("s.toml:3:11: zip `clients` = \"serializable\" (from `isolation`)"),
        "{}",
        err(value)
    );
}

#[test]
fn server_versions_are_targets_outermost_whatever_their_place_in_the_matrix() {
    let p = plan(
        "name = \"v\"\n[workload]\nquery = \"SELECT 1\"\n[matrix]\n\"settings.enable_nestloop\" = [\"on\", \"off\"]\n\
         server_version = [\"15\", 18]\n",
    )
    .unwrap();
    assert_eq!(p.targets.len(), 2);
    assert_eq!(p.targets[0].server_version.map(|v| v.0), Some(15));
    assert_eq!(p.targets[1].server_version.map(|v| v.0), Some(18));
    assert!(p.targets.iter().all(|t| t.name == "local"));
    let versions: Vec<(usize, String)> = p
        .points
        .iter()
        .map(|pt| (pt.target, pt.values[0].1.as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        versions,
        [
            (0, "15".into()),
            (0, "15".into()),
            (1, "18".into()),
            (1, "18".into())
        ]
    );
    assert_eq!(p.points[1].values[0].0, "server_version");
    assert_eq!(
        p.points[1].settings,
        [("enable_nestloop".to_string(), "off".to_string())]
    );
    // one server per version: the data is created when the target changes, not per point
    assert_eq!(p.runs.iter().filter(|r| r.reinit).count(), 2);
}

#[test]
fn server_version_values_and_targets_are_checked_where_written() {
    let e = plan("name = \"v\"\n[matrix]\nserver_version = [\"15\", \"15.4\"]\n").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("s.toml:3:25: matrix `server_version` value \"15.4\""),
        "{e}"
    );
    let e = plan("name = \"v\"\n[matrix]\nserver_version = [15, \"15\"]\n").unwrap_err();
    assert!(e.to_string().contains("version 15 is listed twice"), "{e}");
    let e = plan(
        "name = \"v\"\n[target]\nurl = \"postgresql://h/db\"\n[matrix]\nserver_version = [\"15\"]\n",
    )
    .unwrap_err();
    assert!(e.to_string().contains("is an external server"), "{e}");
    let e = plan("name = \"v\"\n[[steps]]\nname = \"a\"\nset = { server_version = \"18\" }\n")
        .unwrap_err();
    assert!(e.to_string().contains("server_version"), "{e}");
}
