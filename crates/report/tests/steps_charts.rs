//! A steps study's charts (model → charts): one bar per step in step order, each labelled with
//! what its step added (recomputed here from the runs), the metric against the other swept key
//! with one line per step, and no per-key matrix charts of `step` or that key; relation sizes
//! show TOAST apart when the runs recorded the parts.

mod fixtures;

use pgrig_report::choose::sections;
use pgrig_report::metric;
use pgrig_report::model::{Model, SizeParts, Sizes, Study};
use serde_json::json;

/// 3 steps × server_cpus [1, 2] × 2 repetitions; the step order differs from the name order.
fn steps_study() -> Study {
    let mut runs = Vec::new();
    let mut id = 1;
    let steps = ["single", "multi", "prepared"];
    for (si, step) in steps.iter().enumerate() {
        for cpus in [1, 2] {
            for rep in 1..=2u32 {
                let tps = 1000.0 * (si + 1) as f64 * cpus as f64 + rep as f64;
                let mut r = fixtures::run(
                    id,
                    &[("step", json!(step)), ("server_cpus", json!(cpus))],
                    rep,
                    1,
                    tps,
                );
                r.step = Some((si, step.to_string()));
                runs.push(r);
                id += 1;
            }
        }
    }
    Study {
        name: "steps".into(),
        text: String::new(),
        runs,
        query: Vec::new(),
    }
}

#[test]
fn a_steps_study_gets_one_bar_per_step_in_order_labelled_with_its_gain() {
    let m = Model {
        studies: vec![steps_study()],
        ..Model::default()
    };
    let s = &sections(&m, &metric::METRICS[0])[0];
    let ids: Vec<&str> = s.charts.iter().map(|c| c.id.as_str()).collect();
    assert!(ids.contains(&"steps-tps-by-step"), "{ids:?}");
    assert!(ids.contains(&"steps-tps-steps-by-server-cpus"), "{ids:?}");
    assert!(!ids.contains(&"steps-tps-by-server-cpus"), "{ids:?}");
    let w = s
        .charts
        .iter()
        .find(|c| c.id == "steps-tps-by-step")
        .unwrap();
    // best point of each step: server_cpus = 2, median of reps 1 and 2 (+1.5)
    let best = |step: f64| 2000.0 * step + 1.5;
    assert_eq!(
        w.x.categories,
        [
            "1. single".to_string(),
            format!("2. multi +{} (+100%)", best(2.0) - best(1.0)),
            format!("3. prepared +{} (+50%)", best(3.0) - best(2.0)),
        ]
    );
    let ys: Vec<f64> = w.series[0].points.iter().map(|p| p.y).collect();
    assert_eq!(ys, [best(1.0), best(2.0), best(3.0)]);
    assert_eq!(w.table.rows.len(), 3);
    assert_eq!(w.table.rows[0][2], "server_cpus=2");
    let l = s
        .charts
        .iter()
        .find(|c| c.id == "steps-tps-steps-by-server-cpus")
        .unwrap();
    let names: Vec<&str> = l.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["1. single", "2. multi", "3. prepared"]);
    assert!(l.series.iter().all(|s| s.points.len() == 2));
    assert_eq!(l.series[2].points[0].y, 3000.0 + 1.5);
}

#[test]
fn a_study_without_steps_keeps_its_matrix_charts() {
    let mut st = steps_study();
    for r in &mut st.runs {
        r.step = None;
    }
    let m = Model {
        studies: vec![st],
        ..Model::default()
    };
    let s = &sections(&m, &metric::METRICS[0])[0];
    let ids: Vec<&str> = s.charts.iter().map(|c| c.id.as_str()).collect();
    assert!(ids.contains(&"steps-tps-by-server-cpus"), "{ids:?}");
    assert!(!ids.contains(&"steps-tps-steps-by-server-cpus"), "{ids:?}");
}

#[test]
fn relation_sizes_show_toast_apart_when_recorded() {
    let mut st = fixtures::rounds_study();
    for r in &mut st.runs {
        r.relation_sizes = vec![(
            "hist".into(),
            Sizes {
                heap: 8192.0 + 40960.0 * r.round as f64,
                indexes: 16384.0,
                total: 8192.0 + 40960.0 * r.round as f64 + 16384.0 + 49152.0,
            },
        )];
        r.relation_parts = vec![(
            "hist".into(),
            SizeParts {
                main: 8192.0,
                maps: 49152.0,
                toast: 40960.0 * r.round as f64,
            },
        )];
    }
    let m = Model {
        studies: vec![st],
        ..Model::default()
    };
    let s = &sections(&m, &metric::METRICS[0])[0];
    let c = s
        .charts
        .iter()
        .find(|c| c.id.ends_with("relation-sizes"))
        .expect("a sizes chart");
    let names: Vec<&str> = c.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["hist total", "hist main fork", "hist TOAST", "hist indexes"]
    );
    assert_eq!(c.table.headers[4], "TOAST");
    assert_eq!(c.table.rows[1][4], "80 kB");
    assert_eq!(c.table.rows[1][3], "8 kB");
}
