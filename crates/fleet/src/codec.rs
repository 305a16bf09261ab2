//! A worker's final statistics as text for the coordination schema, and back: counters and
//! latency moments as JSON, HDR histograms in hdrhistogram's V2 serialisation (base64), so the
//! coordinator's merge is exact.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use pgrig_engine::config::BenchConfig;
use pgrig_engine::result::{ClientTally, RunResult, ScriptInfo, ThreadCpu};
use pgrig_engine::stats::{
    CommandStats, Counts, Moments, Replies, ScriptStats, Snapshot, ThreadStats,
};
use serde_json::{json, Value};

use crate::json_read::{bad, count, f_at, list, num, u_at};
use crate::FleetError;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Longest serialised histogram read (base64 characters).
pub const MAX_HISTOGRAM_TEXT: usize = 4 << 20;

/// A histogram in V2 serialisation, base64.
pub fn histogram_text(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2Serializer::new()
        .serialize(h, &mut buf)
        .expect("serialising into memory");
    B64.encode(buf)
}

/// The histogram of [`histogram_text`].
pub fn histogram_of(text: &str) -> Result<Histogram<u64>, FleetError> {
    if text.len() > MAX_HISTOGRAM_TEXT {
        return Err(FleetError::new(format!(
            "a serialised histogram is too long ({} bytes, at most {MAX_HISTOGRAM_TEXT})",
            text.len()
        )));
    }
    let bytes = B64
        .decode(text.trim())
        .map_err(|e| FleetError::new(format!("a serialised histogram is not base64: {e}")))?;
    let mut h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| FleetError::new(format!("a serialised histogram is damaged: {e:?}")))?;
    if h.sigfig() != 3 || h.low() != 1 {
        return Err(FleetError::new(format!(
            "a serialised histogram is not pgrig's (lowest value {}, {} significant digits)",
            h.low(),
            h.sigfig()
        )));
    }
    h.auto(true);
    Ok(h)
}

fn moments(m: &Moments) -> Value {
    json!([m.count, m.sum, m.sum2, m.min, m.max])
}

fn counts(c: &Counts) -> Value {
    json!([
        c.ok,
        c.skipped,
        c.serialization_failures,
        c.deadlock_failures,
        c.other_failures,
        c.retried,
        c.retries,
        c.late,
        c.rollbacks,
        c.replies.rows,
        c.replies.changed,
        c.replies.neither
    ])
}

fn snapshot(s: &Snapshot) -> Value {
    json!({"counts": counts(&s.counts), "latency": moments(&s.latency), "lag": moments(&s.lag)})
}

/// A worker's run result as JSON text (its configuration stays behind: the coordinator has the
/// whole run's).
pub fn encode(r: &RunResult) -> String {
    let scripts: Vec<Value> = r
        .scripts
        .iter()
        .zip(&r.stats.scripts)
        .map(|(info, st)| {
            json!({
                "desc": info.desc, "weight": info.weight, "command_texts": info.command_texts,
                "snap": snapshot(&st.snap), "histogram": histogram_text(&st.histogram),
                "command_histograms": st.command_histograms.iter().map(histogram_text)
                    .collect::<Vec<_>>(),
                "commands": st.commands.iter()
                    .map(|c| json!([moments(&c.latency), c.failures, c.retries]))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    let cpu: Vec<Value> = (r.threads_cpu.iter())
        .map(|c| json!([c.user_s, c.sys_s, c.wait_s, c.wall_s]))
        .collect();
    json!({
        "server_version": r.server_version, "scale": r.scale, "partitions": r.partitions,
        "scripts": scripts, "conn_time_us": r.stats.conn_time_us,
        "reconnects": r.stats.reconnects,
        "clients": r.clients.iter().map(|c| json!([c.id, c.transactions, c.busy_s]))
            .collect::<Vec<_>>(),
        "bench_duration_s": r.bench_duration_s, "initial_conn_ms": r.initial_conn_ms,
        "threads_cpu": cpu, "series": r.series.iter().map(snapshot).collect::<Vec<_>>(),
        "aborted_clients": r.aborted_clients, "seed": r.seed.to_string(),
        "interrupted": r.interrupted,
    })
    .to_string()
}

fn moments_of(v: &Value, what: &str) -> Result<Moments, FleetError> {
    Ok(Moments {
        count: u_at(v, 0, what)?,
        sum: f_at(v, 1, what)?,
        sum2: f_at(v, 2, what)?,
        min: f_at(v, 3, what)?,
        max: f_at(v, 4, what)?,
    })
}

fn counts_of(v: &Value) -> Result<Counts, FleetError> {
    let c = |i| u_at(v, i, "counts");
    Ok(Counts {
        ok: c(0)?,
        skipped: c(1)?,
        serialization_failures: c(2)?,
        deadlock_failures: c(3)?,
        other_failures: c(4)?,
        retried: c(5)?,
        retries: c(6)?,
        late: c(7)?,
        rollbacks: c(8)?,
        replies: Replies {
            rows: c(9)?,
            changed: c(10)?,
            neither: c(11)?,
        },
    })
}

fn snapshot_of(v: &Value) -> Result<Snapshot, FleetError> {
    Ok(Snapshot {
        counts: counts_of(&v["counts"])?,
        latency: moments_of(&v["latency"], "latency")?,
        lag: moments_of(&v["lag"], "lag")?,
    })
}

fn script_of(v: &Value) -> Result<(ScriptInfo, ScriptStats), FleetError> {
    let texts = list(v, "command_texts")?;
    let info = ScriptInfo {
        desc: v["desc"].as_str().ok_or_else(|| bad("desc"))?.to_string(),
        weight: v["weight"].as_i64().ok_or_else(|| bad("weight"))?,
        command_texts: (texts.iter())
            .map(|t| {
                t.as_str()
                    .map(String::from)
                    .ok_or_else(|| bad("command_texts"))
            })
            .collect::<Result<_, _>>()?,
    };
    let commands = (list(v, "commands")?.iter())
        .map(|c| {
            Ok(CommandStats {
                latency: moments_of(&c[0], "command latency")?,
                failures: u_at(c, 1, "command")?,
                retries: u_at(c, 2, "command")?,
            })
        })
        .collect::<Result<_, FleetError>>()?;
    let hist = histogram_of(v["histogram"].as_str().ok_or_else(|| bad("histogram"))?)?;
    let command_histograms = (list(v, "command_histograms")?.iter())
        .map(|h| histogram_of(h.as_str().ok_or_else(|| bad("command_histograms"))?))
        .collect::<Result<Vec<_>, _>>()?;
    let stats = ScriptStats {
        snap: snapshot_of(&v["snap"])?,
        histogram: hist,
        commands,
        command_histograms,
    };
    Ok((info, stats))
}

fn thread_cpu_of(c: &Value) -> Result<ThreadCpu, FleetError> {
    Ok(ThreadCpu {
        user_s: f_at(c, 0, "threads_cpu")?,
        sys_s: f_at(c, 1, "threads_cpu")?,
        wait_s: f_at(c, 2, "threads_cpu")?,
        wall_s: f_at(c, 3, "threads_cpu")?,
    })
}

fn client_of(c: &Value) -> Result<ClientTally, FleetError> {
    let id = u_at(c, 0, "clients")?;
    Ok(ClientTally {
        id: u32::try_from(id).map_err(|_| bad(&format!("client id {id} is out of range")))?,
        transactions: u_at(c, 1, "clients")?,
        busy_s: f_at(c, 2, "clients")?,
        // the forced shutdown of sysbench's command line has no multi-host form
        unfinished_s: None,
    })
}

/// The run result of [`encode`], with a default configuration. Every figure must be there with
/// its type (counts non-negative integers, other figures finite numbers); ranges are
/// [`crate::check`]'s.
pub fn decode(text: &str) -> Result<RunResult, FleetError> {
    let v: Value = serde_json::from_str(text).map_err(|e| bad(&e.to_string()))?;
    let mut scripts = Vec::new();
    let mut stats = Vec::new();
    for s in list(&v, "scripts")? {
        let (i, st) = script_of(s)?;
        scripts.push(i);
        stats.push(st);
    }
    let partitions = v["partitions"].as_array().map(|p| {
        (
            p.first().and_then(Value::as_str).unwrap_or("").to_string(),
            p.get(1).and_then(Value::as_i64).unwrap_or(0),
        )
    });
    let aborted = count(&v, "aborted_clients")?;
    Ok(RunResult {
        config: BenchConfig::default(),
        scripts,
        server_version: v["server_version"].as_str().unwrap_or("").to_string(),
        scale: v["scale"].as_i64().unwrap_or(1),
        partitions,
        stats: ThreadStats {
            scripts: stats,
            conn_time_us: num(&v, "conn_time_us")?,
            reconnects: count(&v, "reconnects")?,
        },
        bench_duration_s: num(&v, "bench_duration_s")?,
        initial_conn_ms: num(&v, "initial_conn_ms")?,
        threads_cpu: (list(&v, "threads_cpu")?.iter())
            .map(thread_cpu_of)
            .collect::<Result<_, _>>()?,
        series: (list(&v, "series")?.iter())
            .map(snapshot_of)
            .collect::<Result<_, _>>()?,
        aborted_clients: u32::try_from(aborted)
            .map_err(|_| bad(&format!("aborted_clients {aborted} is out of range")))?,
        clients: (list(&v, "clients")?.iter())
            .map(client_of)
            .collect::<Result<_, _>>()?,
        seed: v["seed"].as_str().and_then(|s| s.parse().ok()).unwrap_or(0),
        interrupted: v["interrupted"].as_bool().unwrap_or(false),
        extras: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result() -> RunResult {
        let mut st = ScriptStats::new(2);
        for us in [120u64, 450, 451, 9_000, 2_500_000] {
            st.histogram.record(us).unwrap();
            st.snap.latency.add(us as f64);
            st.snap.counts.ok += 1;
            st.record_command(1, us as f64 / 2.0);
        }
        st.snap.counts.deadlock_failures = 2;
        st.snap.counts.rollbacks = 1;
        st.snap.counts.replies = Replies {
            rows: 7,
            changed: 3,
            neither: 2,
        };
        RunResult {
            config: BenchConfig::default(),
            scripts: vec![ScriptInfo {
                desc: "<builtin: select only>".into(),
                weight: 1,
                command_texts: vec!["\\set aid".into(), "SELECT 1".into()],
            }],
            server_version: "15.18".into(),
            scale: 4,
            partitions: Some(("range".into(), 3)),
            stats: ThreadStats {
                scripts: vec![st],
                conn_time_us: 12.5,
                reconnects: 3,
            },
            bench_duration_s: 2.5,
            initial_conn_ms: 4.25,
            threads_cpu: vec![ThreadCpu {
                user_s: 0.5,
                sys_s: 0.25,
                wait_s: 0.125,
                wall_s: 2.5,
            }],
            series: vec![Snapshot::default(); 3],
            aborted_clients: 1,
            clients: vec![ClientTally {
                id: 7,
                transactions: 5,
                busy_s: 0.5,
                unfinished_s: None,
            }],
            seed: u64::MAX - 1,
            interrupted: true,
            extras: Default::default(),
        }
    }

    #[test]
    fn a_result_survives_the_round_trip() {
        let r = result();
        let back = decode(&encode(&r)).unwrap();
        let (a, b) = (&r.stats.scripts[0], &back.stats.scripts[0]);
        assert_eq!(a.snap, b.snap);
        assert_eq!(a.histogram, b.histogram);
        assert_eq!(a.commands, b.commands);
        assert_eq!(a.command_histograms, b.command_histograms);
        assert_eq!(back.scripts[0].command_texts, r.scripts[0].command_texts);
        assert_eq!(back.threads_cpu, r.threads_cpu);
        assert_eq!(back.clients, r.clients);
        assert_eq!(back.series, r.series);
        assert_eq!(
            (
                back.seed,
                back.interrupted,
                back.aborted_clients,
                back.partitions
            ),
            (
                r.seed,
                r.interrupted,
                r.aborted_clients,
                r.partitions.clone()
            )
        );
        assert_eq!(back.stats.reconnects, 3);
    }

    #[test]
    fn a_negative_missing_or_non_finite_figure_is_an_error() {
        let good: Value = serde_json::from_str(&encode(&result())).unwrap();
        let mut v = good.clone();
        v["scripts"][0]["snap"]["counts"][0] = json!(-5);
        assert!(decode(&v.to_string()).unwrap_err().0.contains("-5"));
        let mut v = good.clone();
        v.as_object_mut().unwrap().remove("bench_duration_s");
        assert!(decode(&v.to_string()).is_err());
        let mut v = good;
        v["clients"][0][0] = json!(u64::from(u32::MAX) + 1);
        assert!(decode(&v.to_string()).is_err());
        assert!(decode(&encode(&result()).replace("2.5", "1e999")).is_err());
    }

    #[test]
    fn a_damaged_histogram_is_an_error() {
        assert!(histogram_of("not base64!").is_err());
        assert!(histogram_of("AAAA").is_err());
    }
}
