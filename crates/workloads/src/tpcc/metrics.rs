//! TPC-C's figures from a run document (a pure function): New-Orders per minute — called
//! tpmC-like in terminal mode and NOPM in no-wait mode, never tpmC (an unaudited kit's number)
//! — database transactions per minute (TPM: what `pg_stat_database` counts, so a deferred
//! Delivery's queuing, which runs no statement, is not one), each type's count, share, latency
//! percentiles and the 90th-percentile response-time limit of clause 5.2.5.3 (5 s; Stock-Level
//! 20 s; deferred Delivery 80 s) marked pass/fail (no verdict for a type that never ran),
//! retries, the districts Delivery skipped, and in terminal mode the efficiency against the
//! ceiling pgrig's card deck implies ([`ceiling_per_warehouse`]). The headline is over the
//! steady-state window after the ramp-up ([`figures_steady`]), counted from the per-type
//! per-second series (the New-Orders that committed inside the window). Rendered by
//! [`super::report`].

use pgrig_engine::document::RunDocument;

use super::client::{KEYING_S, SKIPPED_DISTRICTS, THINK_S};
use super::sql::{DECK, DELIVERY, DELIVERY_DEFERRED, NEW_ORDER, TX_NAMES};
use super::{Config, Mode};

/// The New-Orders that roll back on the unused item (clause 2.4.1.4: 1 %); they enter no order.
pub const ROLLBACK_SHARE: f64 = 0.01;

/// 90th-percentile response-time limits in seconds, by transaction type (Delivery's is its
/// queuing's when deferred; the deferred business transaction must complete within 80 s,
/// clause 2.7.2.2).
pub const P90_LIMIT_S: [f64; 6] = [5.0, 5.0, 5.0, 5.0, 20.0, 80.0];

/// Terminals per warehouse in terminal mode (clause 4.2.2).
pub const TERMINALS_PER_WAREHOUSE: i64 = 10;

/// The most New-Orders per minute a warehouse's ten terminals can enter with the
/// specification's keying and mean think times and pgrig's card deck (10 New-Orders in 23
/// cards): a deck takes Σ cards × (keying + think) = 476 s per terminal, so 60 × 10 / 476 ×
/// 10 ≈ 12.61 (the 12.86 often quoted assumes 45 % New-Orders). Response times and the think
/// time's cap at 10 × its mean (which shortens the mean by 0.005 %) are left out.
pub fn ceiling_per_warehouse() -> f64 {
    let deck_s: f64 = (0..DECK.len())
        .map(|i| f64::from(DECK[i]) * (KEYING_S[i] + THINK_S[i]))
        .sum();
    60.0 * f64::from(DECK[NEW_ORDER]) / deck_s * TERMINALS_PER_WAREHOUSE as f64
}

/// A terminal's first cycle in seconds: the longest keying time plus its mean think time (a
/// New-Order's 18 + 12 s), × `think_scale`. Every terminal starts keying at the run's start, so
/// no New-Order completes before second 19, and then those of every New-Order terminal at once; the
/// terminals' phases spread only after this. `None` in no-wait mode.
pub fn first_cycle_s(cfg: &Config) -> Option<f64> {
    (cfg.mode == Mode::Terminals).then(|| {
        let longest = (0..KEYING_S.len())
            .max_by(|&a, &b| KEYING_S[a].total_cmp(&KEYING_S[b]))
            .unwrap_or(0);
        (KEYING_S[longest] + THINK_S[longest]) * cfg.think_scale
    })
}

/// The ramp-up left out of the headline: option `rampup`; else a tenth of a run of
/// `duration_s`, and in terminal mode at least the terminals' first cycle ([`first_cycle_s`])
/// when the run goes on after it.
pub fn rampup_s(cfg: &Config, duration_s: f64) -> u64 {
    let tenth = (duration_s / 10.0).floor() as u64;
    match (cfg.rampup_s, first_cycle_s(cfg)) {
        (Some(r), _) => r,
        (None, Some(cycle)) if cycle.ceil() < duration_s => tenth.max(cycle.ceil() as u64),
        _ => tenth,
    }
}

/// [`ceiling_per_warehouse`] for committed New-Orders (what NOPM counts): less the 1 % that roll
/// back (≈ 12.48).
pub fn committed_ceiling_per_warehouse() -> f64 {
    ceiling_per_warehouse() * (1.0 - ROLLBACK_SHARE)
}

/// One transaction type's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeFigures {
    pub name: &'static str,
    pub count: u64,
    /// share of the terminals' completed transactions, %
    pub percent: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub p90_limit_s: f64,
    /// `None` when the type never completed (no verdict)
    pub p90_pass: Option<bool>,
    pub retries: u64,
    pub failed: u64,
}

/// A TPC-C run's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    pub mode: Mode,
    pub warehouses: i64,
    pub clients: u32,
    pub think_scale: f64,
    pub minutes: f64,
    /// committed New-Orders per minute over the whole run
    pub new_orders_per_min: f64,
    /// database transactions (commits and rollbacks) per minute over the whole run
    pub tpm: f64,
    pub types: Vec<TypeFigures>,
    /// New-Orders that ended on the unused item (their intended rollback)
    pub rollbacks: u64,
    pub retries: u64,
    pub failed: u64,
    /// districts committed Deliveries found without an undelivered order (`None` in documents
    /// without the counter)
    pub skipped_districts: Option<u64>,
    /// terminal mode with the specification's times: the headline / (committed ceiling ×
    /// warehouses); `None` otherwise
    pub efficiency: Option<f64>,
    /// why the efficiency is above 100 %, when it is
    pub efficiency_note: Option<String>,
    /// the steady-state window after the ramp-up, when the run has one
    pub steady: Option<Steady>,
    /// `pg_stat_database`'s transactions per minute, when the front end sampled them
    pub server_tpm: Option<ServerTpm>,
    /// what makes a figure not what its label says (printed as warnings)
    pub warnings: Vec<String>,
}

/// New-Orders and database transactions per minute over the seconds after the ramp-up.
#[derive(Clone, Debug, PartialEq)]
pub struct Steady {
    /// the window: seconds `from..=to` of the run (1 = the first)
    pub from: u64,
    pub to: u64,
    /// committed New-Orders that completed inside the window, per minute
    pub new_orders_per_min: f64,
    pub tpm: f64,
    /// the document has no per-type series: New-Orders estimated from the run's share
    pub estimated: bool,
}

/// The run database's commits + rollbacks (`pg_stat_database`) per minute between two
/// readings, less pgrig's own readings in between.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServerTpm {
    pub from_s: f64,
    pub to_s: f64,
    pub tpm: f64,
    /// pgrig's own readings taken out (`None`: an older document, every database's count)
    pub pgrig_readings: Option<u64>,
}

impl Figures {
    /// The headline New-Orders per minute: the steady window's, else the whole run's.
    pub fn headline(&self) -> f64 {
        self.steady
            .as_ref()
            .map_or(self.new_orders_per_min, |s| s.new_orders_per_min)
    }
}

/// [`figures`] with the steady-state window after `rampup_s` seconds; the headline
/// (tpmC-like / NOPM, efficiency) is the window's. Without whole seconds after the ramp-up,
/// the whole run's.
pub fn figures_steady(doc: &RunDocument, cfg: &Config, rampup_s: u64) -> Figures {
    let mut f = figures(doc, cfg);
    f.warnings.extend(first_cycle_warning(cfg, rampup_s));
    let window: Vec<usize> = (0..doc.series.len())
        .filter(|&i| doc.series[i].second > rampup_s)
        .collect();
    let (Some(&first), Some(&last)) = (window.first(), window.last()) else {
        f.efficiency_note = efficiency_note(&f, cfg, rampup_s, f.minutes);
        return f;
    };
    let minutes = window.len() as f64 / 60.0;
    let queued = deferred_queue_index(doc);
    let typed = |name: &str| doc.type_series.iter().find(|t| script_is(&t.desc, name));
    let mut db_xacts = 0u64;
    for &i in &window {
        let s = &doc.series[i];
        let queue = queued
            .and_then(|_| typed(TX_NAMES[DELIVERY]))
            .map_or(0, |t| t.ok.get(i).copied().unwrap_or(0));
        db_xacts += s.tps - queue.min(s.tps) + s.retries + s.failed;
    }
    let (new_orders, estimated) = match typed(TX_NAMES[NEW_ORDER]) {
        Some(t) => {
            let at = |v: &Vec<u64>, i: usize| v.get(i).copied().unwrap_or(0);
            let n: u64 = window
                .iter()
                .map(|&i| at(&t.ok, i).saturating_sub(at(&t.rollbacks, i)))
                .sum();
            (n as f64, false)
        }
        None => {
            // older documents: the window's transactions times the run's New-Order share
            let all: u64 = window.iter().map(|&i| doc.series[i].tps).sum();
            let share = if doc.transactions.ok > 0 {
                f.new_orders_per_min * f.minutes / doc.transactions.ok as f64
            } else {
                0.0
            };
            (all as f64 * share, true)
        }
    };
    f.steady = Some(Steady {
        from: doc.series[first].second,
        to: doc.series[last].second,
        new_orders_per_min: new_orders / minutes,
        tpm: db_xacts as f64 / minutes,
        estimated,
    });
    f.efficiency = efficiency(&f);
    f.efficiency_note = efficiency_note(&f, cfg, rampup_s, minutes);
    f
}

/// Terminal mode with a ramp-up shorter than the terminals' first cycle: the window holds the
/// New-Orders every terminal keyed at once.
fn first_cycle_warning(cfg: &Config, rampup_s: u64) -> Option<String> {
    let cycle = first_cycle_s(cfg)?;
    ((rampup_s as f64) < cycle).then(|| {
        let keying = KEYING_S[NEW_ORDER] * cfg.think_scale;
        format!(
            "the steady window starts at second {}, inside the terminals' first cycle ({:.0} s: a New-Order's {:.0} s keying and {:.0} s mean think time): every terminal starts keying at once, so the first New-Orders arrive together after {keying:.0} s and the window's rate is not the steady one; use -o rampup={} or more",
            rampup_s + 1,
            cycle,
            keying,
            THINK_S[NEW_ORDER] * cfg.think_scale,
            cycle.ceil() as u64
        )
    })
}

/// Why an efficiency is above 100 %: a window inside the terminals' first cycle, or a count
/// small enough for chance (within 3 standard deviations of a Poisson count at the ceiling),
/// or neither (then a defect to report). `minutes`: the headline's window.
fn efficiency_note(f: &Figures, cfg: &Config, rampup_s: u64, minutes: f64) -> Option<String> {
    let e = f.efficiency.filter(|e| *e > 1.0)?;
    let ceiling = committed_ceiling_per_warehouse() * f.warehouses as f64 * minutes;
    let counted = f.headline() * minutes;
    let pct = 100.0 * e;
    if first_cycle_s(cfg).is_some_and(|c| (rampup_s as f64) < c) {
        return Some(format!(
            "above the ceiling ({pct:.1} %) because the window starts inside the terminals' first cycle (see the warning): it holds {counted:.0} committed New-Orders where the ceiling allows {ceiling:.1}"
        ));
    }
    let sd = ceiling.sqrt();
    Some(if counted - ceiling <= 3.0 * sd {
        format!(
            "above the ceiling ({pct:.1} %) by chance: {counted:.0} committed New-Orders in the window where the ceiling allows {ceiling:.1} on average, and a count this small varies by about ±{sd:.1} (a longer run narrows it)"
        )
    } else {
        format!(
            "above the ceiling ({pct:.1} %) by more than chance explains: {counted:.0} committed New-Orders in the window where the ceiling allows {ceiling:.1} ± {sd:.1}; the terminals ran faster than the specification's keying and think times allow (a defect: please report it)"
        )
    })
}

/// The figures of `doc`, a run of TPC-C with `cfg`, over the whole run.
pub fn figures(doc: &RunDocument, cfg: &Config) -> Figures {
    let minutes = doc.duration_s / 60.0;
    let per_min = |n: u64| {
        if minutes > 0.0 {
            n as f64 / minutes
        } else {
            0.0
        }
    };
    let types = type_figures(doc);
    // committed New-Orders: the intended rollbacks entered no order (HammerDB's NOPM, from
    // D_NEXT_O_ID, does not count them either)
    let new_orders = types
        .iter()
        .find(|t| t.name == TX_NAMES[NEW_ORDER])
        .map_or(0, |t| t.count)
        .saturating_sub(doc.transactions.rollbacks);
    let mut f = Figures {
        mode: cfg.mode,
        warehouses: cfg.warehouses,
        clients: doc.options.clients,
        think_scale: cfg.think_scale,
        minutes,
        new_orders_per_min: per_min(new_orders),
        tpm: per_min(database_transactions(doc)),
        types,
        rollbacks: doc.transactions.rollbacks,
        retries: doc.transactions.retries,
        failed: doc.transactions.failed,
        skipped_districts: doc.workload_counters.get(SKIPPED_DISTRICTS).copied(),
        efficiency: None,
        efficiency_note: None,
        steady: None,
        server_tpm: doc.server_xacts.and_then(|x| {
            let m = (x.to_s - x.from_s) / 60.0;
            (m > 0.0).then(|| ServerTpm {
                from_s: x.from_s,
                to_s: x.to_s,
                tpm: x.transactions as f64 / m,
                pgrig_readings: x.pgrig_readings,
            })
        }),
        warnings: warnings(doc, cfg),
    };
    f.efficiency = efficiency(&f);
    f
}

/// The database transactions the run made: every completed transaction (the intended
/// rollbacks too) and every attempt rolled back (retried or failed), less the deferred
/// Deliveries' queuing, which runs no statement.
pub fn database_transactions(doc: &RunDocument) -> u64 {
    let t = &doc.transactions;
    let queued = deferred_queue_index(doc).map_or(0, |i| doc.scripts[i].transactions.ok);
    t.ok - queued.min(t.ok) + t.retries + t.failed
}

/// With deferred Delivery, the index of the terminals' Delivery (the queuing) in `scripts`.
fn deferred_queue_index(doc: &RunDocument) -> Option<usize> {
    doc.scripts
        .iter()
        .any(|s| script_is(&s.desc, TX_NAMES[DELIVERY_DEFERRED]))
        .then(|| {
            doc.scripts
                .iter()
                .position(|s| script_is(&s.desc, TX_NAMES[DELIVERY]))
        })
        .flatten()
}

fn type_figures(doc: &RunDocument) -> Vec<TypeFigures> {
    // shares are of the terminals' transactions: a deferred Delivery is part of its queuing one
    let deferred = doc
        .scripts
        .iter()
        .find(|s| script_is(&s.desc, TX_NAMES[DELIVERY_DEFERRED]))
        .map_or(0, |s| s.transactions.ok);
    let terminal_total = doc.transactions.ok - deferred.min(doc.transactions.ok);
    let mut types = Vec::new();
    for (i, name) in TX_NAMES.iter().enumerate() {
        let Some(s) = doc.scripts.iter().find(|s| script_is(&s.desc, name)) else {
            continue;
        };
        let count = s.transactions.ok;
        types.push(TypeFigures {
            name,
            count,
            percent: if terminal_total > 0 {
                100.0 * count as f64 / terminal_total as f64
            } else {
                0.0
            },
            p50_ms: s.latency_ms.p50,
            p90_ms: s.latency_ms.p90,
            p99_ms: s.latency_ms.p99,
            max_ms: s.latency_ms.max,
            p90_limit_s: P90_LIMIT_S[i],
            p90_pass: (count > 0).then(|| s.latency_ms.p90 <= P90_LIMIT_S[i] * 1000.0),
            retries: s.transactions.retries,
            failed: s.transactions.failed,
        });
    }
    types
}

/// Terminal mode with the specification's keying and think times only: the headline over the
/// committed ceiling of the run's warehouses.
fn efficiency(f: &Figures) -> Option<f64> {
    (f.mode == Mode::Terminals && f.think_scale == 1.0 && f.warehouses > 0)
        .then(|| f.headline() / (committed_ceiling_per_warehouse() * f.warehouses as f64))
}

/// What makes the figures differ from the specification's.
fn warnings(doc: &RunDocument, cfg: &Config) -> Vec<String> {
    let mut out = Vec::new();
    let terminals = TERMINALS_PER_WAREHOUSE * cfg.warehouses;
    let clients = i64::from(doc.options.clients);
    if cfg.mode == Mode::Terminals && clients != terminals {
        let served =
            ((clients + TERMINALS_PER_WAREHOUSE - 1) / TERMINALS_PER_WAREHOUSE).min(cfg.warehouses);
        let why = if clients > terminals {
            "some warehouses get more than 10 terminals".to_string()
        } else if served < cfg.warehouses {
            format!(
                "{} of {} warehouses get no terminal",
                cfg.warehouses - served,
                cfg.warehouses
            )
        } else {
            "a warehouse gets fewer than 10 terminals".to_string()
        };
        out.push(format!(
            "terminal mode with {clients} clients on {} warehouses: {why}; the specification runs 10 terminals per warehouse (use -c {terminals})",
            cfg.warehouses
        ));
    }
    out
}

/// Whether a script description names transaction type `name` (`new_order`, `tpcc:new_order`,
/// `<native: tpcc new_order>`).
pub(super) fn script_is(desc: &str, name: &str) -> bool {
    desc == name
        || desc
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| w == name)
}
