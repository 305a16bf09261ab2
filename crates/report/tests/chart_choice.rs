//! Snapshot tests of the chart choice (model → charts, before drawing): which charts a matrix
//! study, a study with rounds, one run and several runs get, with their axes, series, flags and
//! notes. `UPDATE_SNAPSHOTS=1` rewrites `tests/snapshots/*.txt` after a deliberate change.

mod fixtures;

use std::fmt::Write;

use pgrig_report::choose::{sections, Section};
use pgrig_report::metric;

fn describe(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections {
        let _ = writeln!(out, "section {} \"{}\"", s.id, s.title);
        for c in &s.charts {
            let axis = |a: &pgrig_report::chart::Axis| {
                let mut t = format!("{} {:?}", a.label, a.scale);
                if !a.categories.is_empty() {
                    t.push_str(&format!(" categories={:?}", a.categories));
                }
                if !a.marks.is_empty() {
                    t.push_str(&format!(" marks={:?}", a.marks));
                }
                t
            };
            let _ = writeln!(out, "  chart {} {:?} zoom={}", c.id, c.kind, c.zoomable);
            let _ = writeln!(out, "    x: {}", axis(&c.x));
            let _ = writeln!(out, "    y: {}", axis(&c.y));
            for se in &c.series {
                let flagged = se.points.iter().filter(|p| p.flagged).count();
                let spread = se.points.iter().filter(|p| p.lo.is_some()).count();
                let _ = writeln!(
                    out,
                    "    series \"{}\": {} points, {spread} with spread, {flagged} flagged",
                    se.name,
                    se.points.len()
                );
            }
            for b in &c.bands {
                let _ = writeln!(out, "    band {} {}..{}", b.label, b.x0, b.x1);
            }
            for n in &c.notes {
                let _ = writeln!(out, "    note: {n}");
            }
            let _ = writeln!(
                out,
                "    table: {} rows x {} columns",
                c.table.rows.len(),
                c.table.headers.len()
            );
        }
    }
    out
}

fn snapshot(name: &str, actual: &str) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    pgrig_testkit::snapshot::check(&dir, &format!("{name}.txt"), actual);
}

#[test]
fn matrix_study_gets_the_metric_against_each_swept_key_with_spread_and_flags() {
    let m = fixtures::model(vec![fixtures::matrix_study()], vec![]);
    snapshot(
        "matrix_study",
        &describe(&sections(&m, &metric::METRICS[0])),
    );
}

#[test]
fn selected_metric_replaces_tps_on_the_matrix_charts() {
    let m = fixtures::model(vec![fixtures::matrix_study()], vec![]);
    let p99 = metric::find("p99").unwrap();
    let s = sections(&m, &p99);
    let ids: Vec<&str> = s[0].charts.iter().map(|c| c.id.as_str()).collect();
    assert!(ids.contains(&"isolation-p99-by-clients"), "{ids:?}");
    assert!(metric::find("nope")
        .unwrap_err()
        .contains("expected one of: tps"));
}

#[test]
fn rounds_study_gets_metric_sizes_and_statements_per_round() {
    let m = fixtures::model(vec![fixtures::rounds_study()], vec![]);
    snapshot(
        "rounds_study",
        &describe(&sections(&m, &metric::METRICS[0])),
    );
}

#[test]
fn single_run_gets_time_charts_with_ramp_up_tail_and_steady_window() {
    let m = fixtures::model(vec![], vec![fixtures::single_run()]);
    snapshot("single_run", &describe(&sections(&m, &metric::METRICS[0])));
}

#[test]
fn several_runs_are_overlaid() {
    let mut a = fixtures::single_run();
    a.id = "small.json".into();
    let mut b = fixtures::single_run();
    b.id = "roomy.json".into();
    b.tps *= 1.5;
    let m = fixtures::model(vec![], vec![a, b]);
    snapshot("two_runs", &describe(&sections(&m, &metric::METRICS[0])));
}

#[test]
fn the_same_study_exported_from_two_stores_lines_up_point_by_point() {
    let dir = tempfile::tempdir().unwrap();
    let export = |name: &str, scale: f64| {
        let runs: Vec<_> = [1, 4]
            .iter()
            .flat_map(|c| {
                (1..=2).map(move |rep| {
                    serde_json::json!({"study": "iso", "point": {"clients": c}, "repetition": rep, "round": 1,
                        "tps": scale * *c as f64 * (1.0 + 0.01 * rep as f64), "transactions": {"ok": 100}})
                })
            })
            .collect();
        let p = dir.path().join(name);
        std::fs::write(&p, serde_json::Value::Array(runs).to_string()).unwrap();
        p.display().to_string()
    };
    let a = export("host-a.json", 1000.0);
    let b = export("host-b.json", 1500.0);
    let m = pgrig_report::input::load("unused.db", &[a, b]).unwrap();
    let names: Vec<&str> = m.studies.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["iso", "iso (host-b.json)"]);
    snapshot("two_exports", &describe(&sections(&m, &metric::METRICS[0])));
}

#[test]
fn query_study_gets_speedup_efficiency_plan_nodes_and_plan_tree() {
    let m = fixtures::model(vec![fixtures::query_study()], vec![]);
    let s = sections(&m, &metric::METRICS[0]);
    snapshot("query_study", &describe(&s));
    // the figures are the study summary's: the median client time at degree 0 (82 ms) over
    // degree 4's (26 ms) = 3.154,
    // efficiency ÷ (4 + the leader)
    let speedup = s[0]
        .charts
        .iter()
        .find(|c| c.id == "parallel-speedup")
        .unwrap();
    let row = speedup.table.rows.iter().find(|r| r[0] == "4").unwrap();
    assert_eq!(row[3..], ["3.154", "5", "0.6308"]);
}

#[test]
fn a_five_key_study_opens_with_its_main_effects_strongest_first() {
    let m = fixtures::model(vec![fixtures::five_key_study()], vec![]);
    let s = sections(&m, &metric::METRICS[0]);
    let first = &s[0].charts[0];
    assert_eq!(first.id, "five-tps-effects");
    // the order of the effects as the fixture made them: 400, 200, 100, 50, 0
    let ranked: Vec<&str> = first
        .notes
        .iter()
        .map(|n| n.split(". ").nth(1).unwrap().split(':').next().unwrap())
        .collect();
    assert_eq!(
        ranked,
        [
            "scripts",
            "settings.synchronous_commit",
            "protocol",
            "server_cpus",
            "fillfactor"
        ]
    );
    assert!(first.notes[0].contains("effect 400"), "{:?}", first.notes);
    assert!(first.notes[4].contains("effect 0"), "{:?}", first.notes);
    // the interaction of the two strongest, then every point ranked best first
    assert_eq!(s[0].charts[1].id, "five-tps-interaction");
    let ranking = &s[0].charts[2];
    assert_eq!(ranking.id, "five-tps-ranking");
    assert_eq!(ranking.table.rows.len(), 32);
    assert_eq!(
        ranking.table.rows[0][1..5],
        ["multi", "prepared", "off", "2"]
    );
    assert_eq!(ranking.table.headers[1], "scripts");
}

/// The text of an SVG's `<text>` elements, entities decoded as the page's reader sees them.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            t.split_once('>')
                .and_then(|(_, r)| r.split("</text>").next())
        })
        .map(|t| {
            t.trim()
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&amp;", "&")
        })
        .collect()
}

#[test]
fn every_drawn_series_has_its_legend_entry_inside_the_svg() {
    // eight series whose names each take three legend lines: the entries must all be drawn
    let m = fixtures::model(vec![fixtures::five_key_study()], vec![]);
    let s = sections(&m, &metric::METRICS[0]);
    let mut checked = 0;
    for c in s.iter().flat_map(|s| &s.charts) {
        let mut c = c.clone();
        if c.series.len() < 2 {
            continue;
        }
        for (i, ser) in c.series.iter_mut().enumerate() {
            ser.name = format!(
                "alpha{i} beta{i} gamma{i} delta{i} epsilon{i} zeta{i} eta{i} theta{i} iota{i} kappa{i} lambda{i} mu{i}"
            );
        }
        let svg = pgrig_report::chart::render::render(&c).unwrap().svg;
        let texts = svg_texts(&svg);
        let labels = pgrig_report::chart::render::legend_labels(&c);
        assert_eq!(labels.len(), c.series.len(), "{}", c.id);
        for l in &labels {
            assert!(
                l.iter().all(|line| texts.contains(line)),
                "{}: legend entry {l:?} not drawn in the SVG: {texts:?}",
                c.id
            );
        }
        checked += 1;
    }
    assert!(checked > 0, "no chart with several series");
}

#[test]
fn failures_that_differ_between_points_sit_beside_the_throughput() {
    let mut s = fixtures::matrix_study();
    for r in &mut s.runs {
        if r.point_label().contains("serializable") {
            r.failed = 25.0;
            r.retries = 60.0;
        }
    }
    let m = fixtures::model(vec![s], vec![]);
    let sections = sections(&m, &metric::METRICS[0]);
    let ids: Vec<&str> = sections[0].charts.iter().map(|c| c.id.as_str()).collect();
    let at = |id: &str| ids.iter().position(|i| *i == id);
    let failures = at("isolation-failures-per-point").expect("failures in the study's section");
    let retries = at("isolation-retries-per-point").expect("retries in the study's section");
    let tps = at("isolation-tps-by-isolation").expect("the headline chart");
    let time = at("isolation-tps-over-time").expect("the time chart");
    assert!(
        tps < failures && failures < retries && retries < time,
        "{ids:?}"
    );
    // not a second time among the other figures
    let others: Vec<&str> = (sections.iter())
        .skip(1)
        .flat_map(|s| s.charts.iter().map(|c| c.id.as_str()))
        .collect();
    assert!(
        !others
            .iter()
            .any(|i| i.contains("failures") || i.contains("retries")),
        "{others:?}"
    );
    // the same study with equal failures everywhere keeps them among the other figures
    let m = fixtures::model(vec![fixtures::matrix_study()], vec![]);
    let equal = pgrig_report::choose::sections(&m, &metric::METRICS[0]);
    assert!(!equal[0].charts.iter().any(|c| c.id.contains("retries")));
}

#[test]
fn no_chart_draws_more_than_eight_series_and_no_two_legend_entries_read_alike() {
    let m = fixtures::model(vec![fixtures::five_key_study()], vec![]);
    let s = sections(&m, &metric::METRICS[0]);
    let mut panels = 0;
    for c in &s[0].charts {
        if c.id.contains("-by-") {
            assert!(c.series.len() <= 8, "{}: {} series", c.id, c.series.len());
            panels += c.title.contains(" — ") as usize;
        }
        let labels = pgrig_report::chart::render::legend_labels(c);
        for (i, l) in labels.iter().enumerate() {
            assert!(
                !labels[..i].contains(l),
                "{}: legend entry {l:?} twice",
                c.id
            );
        }
    }
    // 5 keys × 2^4 combinations of the others = 16 series per key: two panels of 8 each
    assert_eq!(panels, 10);
    // a series keeps its colour in every chart of the page
    let mut seen: std::collections::HashMap<&str, usize> = Default::default();
    for c in s.iter().flat_map(|s| &s.charts) {
        for (i, ser) in c.series.iter().enumerate() {
            let col = c.color(i);
            assert_eq!(
                *seen.entry(ser.name.as_str()).or_insert(col),
                col,
                "{}",
                ser.name
            );
        }
    }
}

#[test]
fn query_speedup_above_the_machines_cores_is_flagged_and_the_ideal_stops_there() {
    let mut s = fixtures::query_study();
    for r in &mut s.runs {
        r.provenance.push(("host.cpus".into(), "2".into()));
    }
    let m = fixtures::model(vec![s], vec![]);
    let sections = sections(&m, &metric::METRICS[0]);
    let speedup = &sections[0].charts[0];
    assert_eq!(speedup.id, "parallel-speedup");
    let ideal = speedup.series.last().unwrap();
    assert!(ideal.name.contains("at most the 2 cores"), "{}", ideal.name);
    assert!(ideal.points.iter().all(|p| p.y <= 2.0));
    // 80 ms serial against 29 and 24 ms: 2.8× and 3.3× on 2 cores
    let flagged: Vec<f64> = speedup.series[0]
        .points
        .iter()
        .filter(|p| p.flagged)
        .map(|p| p.x)
        .collect();
    assert_eq!(flagged, [2.0, 4.0]);
    assert_eq!(speedup.notes.len(), 2);
    assert!(speedup.notes[0].contains("more than the cores can give"));
}

#[test]
fn query_plans_show_cardinality_errors_and_where_the_plan_changed() {
    let m = fixtures::model(vec![fixtures::query_study()], vec![]);
    let s = sections(&m, &metric::METRICS[0]);
    let c = s[0]
        .charts
        .iter()
        .find(|c| c.id == "parallel-q-error")
        .expect("a q-error chart");
    // degree 0 estimated 400000 rows for 100000: its worst node is off by 4
    let worst = &c.series[2];
    assert_eq!(worst.points[0].y, 4.0);
    assert!(worst.points[1..].iter().all(|p| p.y == 1.0));
    assert_eq!(c.table.rows[0][2], "Seq Scan on public.pgbench_accounts");
    assert_eq!(c.table.rows[0][5], "4");
    // the serial plan becomes a parallel one between degree 0 and 1, then stays
    assert_eq!(c.notes.len(), 1, "{:?}", c.notes);
    assert!(
        c.notes[0].starts_with("query query: the plan changed from 0 to 1"),
        "{:?}",
        c.notes
    );
}
