//! Runs over time: TPS and latency per second, with the seconds in which the server counted a
//! checkpoint shaded (for overlaid runs, named by run). For one run the ramp-up (leading seconds below 90 %
//! of the median) and the tail (the trailing seconds that end after the run's known end — its
//! measured duration — never a dip in the figures: a stall inside the run is part of it; a
//! stored run document's partial last second never gets here, `input::doc` leaves it out) are
//! shaded, and the steady window's TPS is given beside the whole run's when they differ by more
//! than 10 %. Several runs are overlaid on one time axis.

use crate::chart::{fmt, Axis, Band, Chart, Kind, Pt, Series, Table};
use crate::metric::Metric;
use crate::model::{Run, Second};

use super::overlay;

/// Fewer seconds than this make no time chart (a point or two is not a course over time).
const MIN_SECONDS: usize = 3;

/// The steady window: (last ramp-up second, first tail second, mean TPS in between).
pub fn steady(series: &[Second], duration_s: f64) -> Option<(usize, usize, f64)> {
    if series.len() < 3 {
        return None;
    }
    let mut tps: Vec<f64> = series.iter().map(|s| s.tps).collect();
    tps.sort_by(f64::total_cmp);
    let median = tps[tps.len() / 2];
    let low = |s: &Second| s.tps < 0.9 * median;
    let ramp = series.iter().take_while(|s| low(s)).count();
    // a second `t` covers (t-1, t]: it is past the end when it ends after the measured duration
    let past_end = |s: &Second| duration_s > 0.0 && s.t > duration_s + 1e-3;
    let mut tail = series.len();
    while tail > ramp && past_end(&series[tail - 1]) {
        tail -= 1;
    }
    if tail <= ramp {
        return None;
    }
    let window = &series[ramp..tail];
    Some((
        ramp,
        tail,
        window.iter().map(|s| s.tps).sum::<f64>() / window.len() as f64,
    ))
}

fn time_chart(id: String, title: String, y: &str, series: Vec<Series>, table: Table) -> Chart {
    Chart {
        desc: format!("{title}, one value per second of the run"),
        id,
        title,
        kind: Kind::Lines,
        x: Axis::linear("seconds since the start"),
        y: Axis::linear(y),
        series,
        bands: Vec::new(),
        notes: Vec::new(),
        table,
        zoomable: true,
        colors: Vec::new(),
    }
}

fn latency_series(r: &Run) -> Vec<Series> {
    type Get = fn(&Second) -> Option<f64>;
    let pick: [(&str, Get); 4] = [
        ("mean", |s| s.latency_mean_ms),
        ("p50", |s| s.latency_p50_ms),
        ("p99", |s| s.latency_p99_ms),
        ("max", |s| s.latency_max_ms),
    ];
    pick.iter()
        .map(|(name, get)| Series {
            name: name.to_string(),
            points: r
                .series
                .iter()
                .filter_map(|s| Some(Pt::new(s.t, get(s)?)))
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// The per-second table of one run.
fn seconds_table(r: &Run) -> Table {
    let mut table = Table::new(
        format!("{}: per second", r.id),
        &[
            "second",
            "tps",
            "latency mean ms",
            "p50 ms",
            "p99 ms",
            "max ms",
            "failed",
            "retries",
        ],
    );
    let o = |v: Option<f64>| v.map(fmt).unwrap_or_default();
    for s in &r.series {
        table.push(
            s.t,
            vec![
                fmt(s.t),
                fmt(s.tps),
                o(s.latency_mean_ms),
                o(s.latency_p50_ms),
                o(s.latency_p99_ms),
                o(s.latency_max_ms),
                fmt(s.failed),
                fmt(s.retries),
            ],
        );
    }
    table
}

/// Shades ramp-up and tail, and says the steady window's TPS when it differs from the whole run's.
fn mark_steady(c: &mut Chart, r: &Run) {
    if let Some((ramp, tail, steady_tps)) = steady(&r.series, r.duration_s) {
        if ramp > 0 {
            c.bands.push(Band {
                x0: 0.0,
                x1: r.series[ramp - 1].t,
                label: "ramp-up".into(),
            });
        }
        if tail < r.series.len() {
            c.bands.push(Band {
                x0: r.series[tail].t - 1.0,
                x1: r.series[r.series.len() - 1].t,
                label: "tail".into(),
            });
        }
        let whole = r.tps;
        if whole > 0.0 && ((steady_tps - whole) / whole).abs() > 0.10 {
            c.notes.push(format!(
                "steady window (seconds {}–{}): {} TPS; whole run: {} TPS ({:+.0} %)",
                ramp + 1,
                tail,
                fmt(steady_tps),
                fmt(whole),
                100.0 * (steady_tps - whole) / whole
            ));
        }
    }
}

/// Why runs get no chart over time, when none has [`MIN_SECONDS`] whole seconds.
pub fn too_short(runs: &[Run]) -> Option<String> {
    let longest = runs.iter().map(|r| r.series.len()).max()?;
    (longest < MIN_SECONDS).then(|| {
        format!(
            "No chart over time: the runs have at most {longest} whole second(s) of per-second figures, and a course over time needs {MIN_SECONDS} (run for longer)."
        )
    })
}

/// TPS and latency per second of one run, with its ramp-up and tail.
pub fn single(id: &str, r: &Run) -> Vec<Chart> {
    if r.series.len() < MIN_SECONDS {
        return Vec::new();
    }
    let table = seconds_table(r);
    let tps = Series {
        name: "TPS".into(),
        points: r.series.iter().map(|s| Pt::new(s.t, s.tps)).collect(),
    };
    let mut c = time_chart(
        format!("{id}-tps-over-time"),
        format!("TPS per second: {}", r.id),
        "transactions per second",
        vec![tps],
        table.clone(),
    );
    mark_steady(&mut c, r);
    let fl = crate::flags::of(&[r]);
    if !fl.is_empty() {
        c.notes.push(format!("this run: {}", fl.join(", ")));
    }
    let mut l = time_chart(
        format!("{id}-latency-over-time"),
        format!("Latency per second: {}", r.id),
        "latency (ms)",
        latency_series(r),
        table,
    );
    l.bands = c.bands.clone();
    for s in r.series.iter().filter(|s| s.checkpoints > 0.0) {
        for chart in [&mut c, &mut l] {
            chart.bands.push(Band {
                x0: s.t - 1.0,
                x1: s.t,
                label: "checkpoint".into(),
            });
        }
    }
    let mut out = vec![c, l];
    out.extend(server(id, r));
    if let Some(n) = totals(r) {
        out[0].notes.push(n);
    }
    if let Some(n) = client(r) {
        out[0].notes.push(n);
    }
    out
}

/// The client's two CPU figures over the run, and the flags they raise.
fn client(r: &Run) -> Option<String> {
    let c = r.client_cpu?;
    let flags = c.flags();
    let flagged = if flags.is_empty() {
        String::new()
    } else {
        format!(" — {}", flags.join(", "))
    };
    Some(format!(
        "client (busiest thread): CPU time {}% of the run, run-queue wait {}%{flagged}",
        fmt(100.0 * c.cpu_time),
        fmt(100.0 * c.run_queue_wait)
    ))
}

/// The server's totals over the run, said beside the time axis.
fn totals(r: &Run) -> Option<String> {
    let s = &r.server;
    let mut parts = Vec::new();
    if let Some(c) = s.checkpoints {
        parts.push(format!("{} checkpoint(s)", fmt(c)));
    }
    if let Some(w) = s.wal_bytes {
        parts.push(format!("{} of WAL", crate::chart::fmt_bytes(w)));
    }
    if let Some(c) = s.cpus_busy {
        parts.push(format!("server CPU {} CPUs busy on average", fmt(c)));
    }
    (!parts.is_empty()).then(|| format!("during the run (server totals): {}", parts.join(", ")))
}

/// WAL bytes and server CPU per second, where the series carries them.
fn server(id: &str, r: &Run) -> Option<Chart> {
    let wal: Vec<Pt> = r
        .series
        .iter()
        .filter_map(|s| Some(Pt::new(s.t, s.wal_bytes? / 1048576.0)))
        .collect();
    let cpu: Vec<Pt> = r
        .series
        .iter()
        .filter_map(|s| Some(Pt::new(s.t, s.server_cpu?)))
        .collect();
    if wal.is_empty() && cpu.is_empty() {
        return None;
    }
    let mut t = Table::new(
        format!("{}: server per second", r.id),
        &["second", "WAL MiB", "server CPUs busy", "checkpoints"],
    );
    for s in &r.series {
        let o = |v: Option<f64>| v.map(fmt).unwrap_or_default();
        t.push(
            s.t,
            vec![
                fmt(s.t),
                o(s.wal_bytes.map(|w| w / 1048576.0)),
                o(s.server_cpu),
                fmt(s.checkpoints),
            ],
        );
    }
    let series = [("WAL MiB/s", wal), ("server CPUs busy", cpu)]
        .into_iter()
        .filter(|s| !s.1.is_empty())
        .map(|(n, points)| Series {
            name: n.into(),
            points,
        })
        .collect();
    let mut c = time_chart(
        format!("{id}-server-over-time"),
        format!("Server per second: {}", r.id),
        "MiB/s · CPUs",
        series,
        t,
    );
    c.bands = r
        .series
        .iter()
        .filter(|s| s.checkpoints > 0.0)
        .map(|s| Band {
            x0: s.t - 1.0,
            x1: s.t,
            label: "checkpoint".into(),
        })
        .collect();
    Some(c)
}

fn overlay_charts(id: &str, runs: &[(String, &Run)], note: Option<String>) -> Vec<Chart> {
    let runs: Vec<&(String, &Run)> = runs
        .iter()
        .filter(|r| r.1.series.len() >= MIN_SECONDS)
        .collect();
    if runs.is_empty() {
        return Vec::new();
    }
    let len = runs.iter().map(|r| r.1.series.len()).max().unwrap_or(0);
    let mut headers = vec!["second".to_string()];
    headers.extend(runs.iter().map(|r| format!("{} tps", r.0)));
    let mut lat_headers = vec!["second".to_string()];
    lat_headers.extend(runs.iter().map(|r| format!("{} mean ms", r.0)));
    let mut t = Table::new("TPS per second of each run shown", &[]);
    t.headers = headers;
    let mut lt = Table::new("mean latency per second of each run shown (ms)", &[]);
    lt.headers = lat_headers;
    for i in 0..len {
        let cell = |r: &&(String, &Run), f: fn(&Second) -> Option<f64>| {
            r.1.series.get(i).and_then(f).map(fmt).unwrap_or_default()
        };
        let mut row = vec![(i + 1).to_string()];
        row.extend(runs.iter().map(|r| cell(r, |s| Some(s.tps))));
        t.push((i + 1) as f64, row);
        let mut row = vec![(i + 1).to_string()];
        row.extend(runs.iter().map(|r| cell(r, |s| s.latency_mean_ms)));
        lt.push((i + 1) as f64, row);
    }
    let tps = runs
        .iter()
        .map(|(l, r)| Series {
            name: l.clone(),
            points: r.series.iter().map(|s| Pt::new(s.t, s.tps)).collect(),
        })
        .collect();
    let lat = runs
        .iter()
        .map(|(l, r)| Series {
            name: l.clone(),
            points: r
                .series
                .iter()
                .filter_map(|s| Some(Pt::new(s.t, s.latency_mean_ms?)))
                .collect(),
        })
        .collect();
    let mut a = time_chart(
        format!("{id}-tps-over-time"),
        "TPS per second".into(),
        "transactions per second",
        tps,
        t,
    );
    let mut b = time_chart(
        format!("{id}-latency-over-time"),
        "Mean latency per second".into(),
        "latency (ms)",
        lat,
        lt,
    );
    a.notes.extend(note.clone());
    b.notes.extend(note);
    a.bands = overlay_checkpoints(&runs);
    b.bands = a.bands.clone();
    a.notes.extend(checkpoint_note(&runs));
    let mut charts = vec![a, b];
    charts.extend(server_multiples(id, &runs));
    charts
}

/// Small multiples of the server per second: one chart per overlaid run that carries the
/// server's series (a study over two targets gets each target's WAL, CPU and checkpoints on a
/// chart of its own), at most [`MAX_SERVER_MULTIPLES`].
fn server_multiples(id: &str, runs: &[&(String, &Run)]) -> Vec<Chart> {
    runs.iter()
        .filter_map(|(label, r)| {
            let mut c = server(&format!("{id}-{}", super::slug(label)), r)?;
            c.title = format!("Server per second: {label}");
            c.table.caption = format!("{label}: server per second");
            Some(c)
        })
        .take(MAX_SERVER_MULTIPLES)
        .collect()
}

/// Server charts drawn beside an overlay at most (one per run shown).
const MAX_SERVER_MULTIPLES: usize = 8;

/// Which run counted a checkpoint in which seconds (the shading of an overlay names its runs,
/// but labels are left out where they would overprint).
fn checkpoint_note(runs: &[&(String, &Run)]) -> Option<String> {
    let parts: Vec<String> = runs
        .iter()
        .filter_map(|(label, r)| {
            let at: Vec<String> = (r.series.iter())
                .filter(|s| s.checkpoints > 0.0)
                .map(|s| fmt(s.t))
                .collect();
            (!at.is_empty()).then(|| format!("{label} in second(s) {}", at.join(", ")))
        })
        .collect();
    (!parts.is_empty()).then(|| format!("checkpoints (shaded): {}", parts.join("; ")))
}

/// The seconds in which an overlaid run's server counted a checkpoint, each named by its runs.
fn overlay_checkpoints(runs: &[&(String, &Run)]) -> Vec<Band> {
    let mut seconds: Vec<(f64, Vec<&str>)> = Vec::new();
    for (label, r) in runs {
        for s in r.series.iter().filter(|s| s.checkpoints > 0.0) {
            match seconds.iter_mut().find(|c| c.0 == s.t) {
                Some(c) => c.1.push(label),
                None => seconds.push((s.t, vec![label])),
            }
        }
    }
    seconds.sort_by(|a, b| a.0.total_cmp(&b.0));
    seconds
        .into_iter()
        .map(|(t, labels)| Band {
            x0: t - 1.0,
            x1: t,
            label: format!("checkpoint ({})", labels.join(", ")),
        })
        .collect()
}

/// A study: the representative run of each point overlaid.
pub fn overlaid(id: &str, runs: &[Run], metric: &Metric) -> Vec<Chart> {
    let (reps, note) = overlay(runs, metric);
    let note = note.or_else(|| {
        (reps.len() > 1).then(|| "each point's median repetition is shown".to_string())
    });
    if reps.len() == 1 {
        return single(id, reps[0].1);
    }
    overlay_charts(id, &reps, note)
}

/// Runs given side by side.
pub fn side_by_side(id: &str, runs: &[Run]) -> Vec<Chart> {
    let reps: Vec<(String, &Run)> = runs.iter().map(|r| (r.id.clone(), r)).collect();
    overlay_charts(id, &reps, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(tps: &[f64]) -> Vec<Second> {
        tps.iter()
            .enumerate()
            .map(|(i, t)| Second {
                t: (i + 1) as f64,
                tps: *t,
                ..Second::default()
            })
            .collect()
    }

    #[test]
    fn steady_window_leaves_out_ramp_up_and_tail() {
        // the last second ends after the measured 6.4 s: the tail
        let s = secs(&[10.0, 50.0, 100.0, 100.0, 100.0, 100.0, 20.0]);
        assert_eq!(steady(&s, 6.4), Some((2, 6, 100.0)));
        // a run of 7 whole seconds has no tail, however its last second looks
        assert_eq!(steady(&s, 7.0), Some((2, 7, 84.0)));
        assert_eq!(steady(&secs(&[100.0; 5]), 5.0), Some((0, 5, 100.0)));
        assert_eq!(steady(&secs(&[1.0]), 1.0), None);
    }

    #[test]
    fn a_stall_inside_the_run_is_not_its_tail() {
        // a real stall in seconds 12..13 of a 15-second run, then recovery and a slow last second
        let mut tps = vec![100.0; 15];
        tps[11] = 5.0;
        tps[12] = 30.0;
        tps[14] = 40.0;
        let s = secs(&tps);
        let (ramp, tail, _) = steady(&s, 15.0).unwrap();
        assert_eq!(
            (ramp, tail),
            (0, 15),
            "no second of the run is shaded as tail"
        );
        // the same figures from a log whose last second ran past the end (14.3 s measured)
        assert_eq!(steady(&s, 14.3).map(|w| w.1), Some(14));
    }

    /// A run of 60 seconds with the server's series and a checkpoint every `every` seconds.
    fn server_run(id: &str, every: usize) -> Run {
        let series = (1..=60)
            .map(|t| Second {
                t: t as f64,
                tps: 1000.0,
                wal_bytes: Some(2e6),
                server_cpu: Some(1.5),
                checkpoints: if t % every == 0 { 1.0 } else { 0.0 },
                ..Second::default()
            })
            .collect();
        Run {
            id: id.into(),
            duration_s: 60.0,
            series,
            ..Run::default()
        }
    }

    #[test]
    fn two_targets_get_a_server_chart_each_and_checkpoints_named_by_target() {
        let (small, roomy) = (server_run("small", 2), server_run("roomy", 7));
        let runs = [
            ("target=small".to_string(), &small),
            ("target=roomy".to_string(), &roomy),
        ];
        let charts = overlay_charts("two", &runs, None);
        let servers: Vec<&Chart> = charts.iter().filter(|c| c.id.contains("server")).collect();
        let titles: Vec<&str> = servers.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "Server per second: target=small",
                "Server per second: target=roomy"
            ]
        );
        assert_eq!(servers[0].bands.len(), 30);
        assert_eq!(servers[1].bands.len(), 8);
        // the overlay's shading names the target of each checkpoint, and a note lists them
        let tps = &charts[0];
        assert!(tps.bands.iter().all(|b| b.label.contains("target=")));
        let note = tps.notes.iter().find(|n| n.starts_with("checkpoints"));
        let note = note.expect("a checkpoint note");
        assert!(note.contains("target=small in second(s) 2, 4, 6"), "{note}");
        assert!(note.contains("target=roomy in second(s) 7, 14"), "{note}");
        // drawn, the band labels never overprint each other nor leave the plot
        for c in servers.iter().copied().chain([tps]) {
            let svg = crate::chart::render::render(c).unwrap();
            let mut xs: Vec<(i32, usize)> = svg
                .svg
                .split("<text")
                .skip(1)
                .filter_map(|t| {
                    let (attrs, rest) = t.split_once('>')?;
                    let text = rest.split("</text>").next()?.trim();
                    if !text.starts_with("checkpoint") {
                        return None;
                    }
                    let x = attrs
                        .split("x=\"")
                        .nth(1)?
                        .split('"')
                        .next()?
                        .parse()
                        .ok()?;
                    Some((x, text.chars().count()))
                })
                .collect();
            xs.sort();
            assert!(!xs.is_empty(), "{}: no band label drawn", c.id);
            for w in xs.windows(2) {
                assert!(w[0].0 + 7 * w[0].1 as i32 <= w[1].0, "{}: {xs:?}", c.id);
            }
            let last = xs.last().unwrap();
            assert!(
                last.0 + 7 * last.1 as i32 <= svg.frame.px1 + 1,
                "{}: {xs:?}",
                c.id
            );
        }
    }
}
