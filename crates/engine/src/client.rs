//! One client's life: choose a script, wait for its throttled slot, run it (retrying serialization
//! failures and deadlocks the way pgbench 15+ does), record the outcome. One state machine for
//! every query mode; the mode only changes how `sql` encodes a command.

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::client_state::{Client, FailKind};
use crate::exec::{run_script_once, Attempt};
use crate::shared::{RunShared, ThreadCtx};
use crate::sink::Level;

/// How a client ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClientEnd {
    Finished,
    Aborted,
}

fn choose_script(sh: &RunShared, th: &ThreadCtx, c: &mut Client) -> usize {
    if let Some(tx) = c.program.as_mut().and_then(|p| p.choose()) {
        return tx.min(sh.scripts.len() - 1);
    }
    if sh.scripts.len() == 1 || sh.total_weight <= 0 {
        return 0;
    }
    let mut w = th
        .choose_rng
        .borrow_mut()
        .uint64_range(0, (sh.total_weight - 1) as u64) as i64;
    for (i, s) in sh.scripts.iter().enumerate() {
        w -= s.weight;
        if w < 0 {
            return i;
        }
    }
    sh.scripts.len() - 1
}

fn done(sh: &RunShared, c: &Client, now: i64) -> bool {
    if let Some(n) = sh.nxacts {
        if c.cnt >= n {
            return true;
        }
    }
    if let Some(left) = &sh.transactions_left {
        if left.load(Ordering::Relaxed) == 0 {
            return true;
        }
    }
    sh.stopped() || sh.timer_exceeded(now)
}

/// Takes one of the run's transactions left (`total_transactions`); false when none is.
fn claim_transaction(sh: &RunShared) -> bool {
    sh.transactions_left.as_ref().is_none_or(|left| {
        left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    })
}

async fn sleep_until_us(sh: &RunShared, at_us: i64) {
    let now = sh.now_us();
    if at_us > now {
        pgrig_wire::rt::sleep(Duration::from_micros((at_us - now) as u64)).await;
    }
}

/// Runs one client to its end.
pub(crate) async fn run_client(sh: &RunShared, th: &ThreadCtx, c: &mut Client) -> ClientEnd {
    let end = run_transactions(sh, th, c).await;
    if end == ClientEnd::Finished && !crate::native::run_native_finish(sh, th, c).await {
        return ClientEnd::Aborted;
    }
    end
}

/// The client's transactions, to its limit, the run's end or its abort.
async fn run_transactions(sh: &RunShared, th: &ThreadCtx, c: &mut Client) -> ClientEnd {
    // The end of the last transaction, when nothing took time since: the next one's start, as
    // pgbench's lazily read clock makes it (one clock read per transaction fewer).
    let mut carried: Option<i64> = None;
    loop {
        let now = carried.take().unwrap_or_else(|| sh.now_us());
        if done(sh, c, now) {
            return ClientEnd::Finished;
        }
        let script = choose_script(sh, th, c);
        if sh.cfg.debug {
            let desc = &sh.scripts[script].desc;
            sh.debug_client(c.id, format_args!("executing script \"{desc}\""));
        }
        let Some(after_think) = think(sh, c, script, now).await else {
            return ClientEnd::Finished;
        };
        let mut scheduled = after_think;
        if let Some(delay) = sh.throttle_delay_us {
            match throttle(sh, th, c, script, delay).await {
                Some(at) => scheduled = at,
                None => return ClientEnd::Finished,
            }
        }
        if !claim_transaction(sh) {
            return ClientEnd::Finished;
        }
        // -C: a new connection for every transaction.
        let connecting = c.conn.is_none();
        if connecting && !connect(sh, th, c) {
            return ClientEnd::Aborted;
        }
        let waited = after_think != now || sh.throttle_delay_us.is_some() || connecting;
        let tx_begin = if waited { sh.now_us() } else { now };
        c.tx_begin_us = Some(tx_begin);
        let (outcome, tries) = match run_with_retries(sh, th, c, script, scheduled).await {
            Ok(done) => done,
            Err(end) => return end,
        };
        c.tx_begin_us = None;
        let end = sh.now_us();
        c.cnt += 1;
        let times = TxTimes {
            scheduled,
            begin: tx_begin,
            end,
        };
        record_tx(sh, th, c, script, outcome, tries - 1, times);
        // a script that never waits for the server (meta-commands only) would keep the thread
        // and starve its once-a-second ticker (progress lines, series, CPU readings): it yields
        // every 10 ms unless the thread's reactor turned meanwhile (which fires due timers)
        let mut yielded = false;
        if end - c.yielded_us >= 10_000 {
            c.yielded_us = end;
            if pgrig_wire::rt::turns() == c.turns_seen {
                pgrig_wire::rt::yield_now().await;
                yielded = true;
            }
            c.turns_seen = pgrig_wire::rt::turns();
        }

        // pgbench's end of transaction: recorded first, then a transaction block still open
        // aborts the client.
        if c.conn
            .as_ref()
            .is_some_and(|conn| conn.transaction_status() != pgrig_wire::TransactionStatus::Idle)
        {
            sh.msg(
                Level::Error,
                &format!(
                    "client {} aborted: end of script reached without completing the last transaction",
                    c.id
                ),
            );
            return ClientEnd::Aborted;
        }
        let reconnect = c.program.as_mut().is_some_and(|p| p.reconnect());
        if sh.cfg.connect_per_tx || reconnect {
            let t0 = sh.now_us();
            if let Some(conn) = c.conn.take() {
                conn.close().await;
            }
            let mut st = th.stats.borrow_mut();
            st.conn_time_us += (sh.now_us() - t0) as f64;
            st.reconnects += u64::from(reconnect);
        } else if !yielded {
            carried = Some(end);
        }
    }
}

/// A native program's keying and think time before transaction `script`: outside the
/// transaction's latency, cut at -T's end and by a stop request. The time after it, or `None`
/// when the client is done.
async fn think(sh: &RunShared, c: &mut Client, script: usize, now: i64) -> Option<i64> {
    let delay = c.program.as_mut().map_or(0, |p| p.delay_us(script));
    if delay == 0 {
        return Some(now);
    }
    let until = now + delay as i64;
    let until = sh.end_us().map_or(until, |end| until.min(end));
    while sh.now_us() < until && !sh.stopped() {
        sleep_until_us(sh, (sh.now_us() + 100_000).min(until)).await;
    }
    let now = sh.now_us();
    (!done(sh, c, now)).then_some(now)
}

/// Throttling (-R): the thread's Poisson schedule; -L skips slots already too late. Waits for
/// the slot and returns it, or None when the run ends first.
async fn throttle(
    sh: &RunShared,
    th: &ThreadCtx,
    c: &mut Client,
    script: usize,
    delay: f64,
) -> Option<i64> {
    let scheduled = loop {
        let wait = pgrig_script::random::poisson(&mut th.throttle_rng.borrow_mut(), delay);
        let trigger = th.throttle_trigger.get() + wait;
        th.throttle_trigger.set(trigger);
        let now = sh.now_us();
        if let Some(limit) = sh.latency_limit_us {
            if trigger < now - limit && !sh.timer_exceeded(now) {
                record_skipped(th, c, script, trigger, now);
                if done(sh, c, now) {
                    return None;
                }
                continue;
            }
        }
        break trigger;
    };
    if sh.end_us().is_some_and(|end| scheduled >= end) {
        return None;
    }
    sleep_until_us(sh, scheduled).await;
    (!sh.stopped()).then_some(scheduled)
}

/// Opens the client's connection (blocking, like pgbench's PQconnectdb under -C); false after
/// pgbench's abort messages.
fn connect(sh: &RunShared, th: &ThreadCtx, c: &mut Client) -> bool {
    let t0 = sh.now_us();
    match sh.connect() {
        Ok(conn) => {
            sh.register_cancel(c.id, &conn);
            c.conn = Some(conn)
        }
        Err(e) => {
            sh.msg(Level::Error, &e.to_string());
            sh.msg(
                Level::Error,
                &format!("client {} aborted while establishing connection", c.id),
            );
            return false;
        }
    }
    c.prepared.iter_mut().for_each(|p| *p = false);
    th.stats.borrow_mut().conn_time_us += (sh.now_us() - t0) as f64;
    true
}

/// Runs the script, retrying serialization failures and deadlocks as pgbench 15+ does: the
/// outcome and the number of tries, or how the client ends.
async fn run_with_retries(
    sh: &RunShared,
    th: &ThreadCtx,
    c: &mut Client,
    script: usize,
    scheduled: i64,
) -> Result<(Outcome, u32), ClientEnd> {
    let rng_at_start = c.rng;
    let mut tries: u32 = 1;
    loop {
        let attempt = if sh.native.is_some() {
            crate::native::run_native_once(sh, th, c, script, tries > 1).await
        } else {
            run_script_once(sh, th, c, script).await
        };
        let (kind, cmd) = match attempt {
            Attempt::Ok => return Ok((Outcome::Ok, tries)),
            Attempt::Abort => return Err(ClientEnd::Aborted),
            Attempt::Failed { kind, cmd } => (kind, cmd),
        };
        let now = sh.now_us();
        let retryable = kind != FailKind::Other;
        if retryable && sh.timer_exceeded(now) {
            // pgbench: the client just finishes; counted neither way.
            return Err(ClientEnd::Finished);
        }
        let may_retry = retryable
            && (sh.cfg.max_tries == 0 || tries < sh.cfg.max_tries)
            && sh.latency_limit_us.is_none_or(|l| now - scheduled <= l)
            && !sh.stopped();
        let mut st = th.stats.borrow_mut();
        if !may_retry {
            st.scripts[script].commands[cmd].failures += 1;
            drop(st);
            verbose_try(sh, c.id, "ends the failed transaction", tries);
            return Ok((Outcome::Failed(kind), tries));
        }
        st.scripts[script].commands[cmd].retries += 1;
        drop(st);
        verbose_try(sh, c.id, "repeats the transaction after the error", tries);
        tries += 1;
        c.rng = rng_at_start;
    }
}

/// `--verbose-errors`: `client N <what> (try T[/MAX])`.
fn verbose_try(sh: &RunShared, id: u32, what: &str, tries: u32) {
    if !sh.cfg.verbose_errors {
        return;
    }
    let max = match sh.cfg.max_tries {
        0 => String::new(),
        m => format!("/{m}"),
    };
    sh.msg(
        Level::Info,
        &format!("client {id} {what} (try {tries}{max})"),
    );
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Ok,
    Failed(FailKind),
}

fn record_skipped(th: &ThreadCtx, c: &mut Client, script: usize, scheduled: i64, now: i64) {
    c.cnt += 1;
    th.stats.borrow_mut().scripts[script].snap.counts.skipped += 1;
    if let Some(log) = &th.log {
        log.borrow_mut().transaction(
            c.id,
            c.cnt,
            script,
            None,
            "skipped",
            now,
            now - scheduled,
            0,
        );
    }
}

/// When a transaction was scheduled (its throttled slot, else its start), began and ended (µs).
#[derive(Clone, Copy)]
struct TxTimes {
    scheduled: i64,
    begin: i64,
    end: i64,
}

fn record_tx(
    sh: &RunShared,
    th: &ThreadCtx,
    c: &mut Client,
    script: usize,
    outcome: Outcome,
    retries: u32,
    times: TxTimes,
) {
    let TxTimes {
        scheduled,
        begin: tx_begin,
        end,
    } = times;
    let latency = (end - scheduled) as f64;
    let lag = (tx_begin - scheduled) as f64;
    let mut guard = th.stats.borrow_mut();
    let ss = &mut guard.scripts[script];
    let k = &mut ss.snap.counts;
    match outcome {
        Outcome::Ok => {
            k.ok += 1;
            if sh.latency_limit_us.is_some_and(|l| latency > l as f64) {
                k.late += 1;
            }
            ss.snap.latency.add(latency);
            if sh.throttle_delay_us.is_some() {
                ss.snap.lag.add(lag);
            }
            let _ = ss.histogram.record((latency as u64).max(1));
            let _ = th
                .second_histogram
                .borrow_mut()
                .record((latency as u64).max(1));
            if std::mem::take(&mut c.rolled_back) {
                k.rollbacks += 1;
            }
            c.busy_us += latency;
        }
        Outcome::Failed(FailKind::Serialization) => k.serialization_failures += 1,
        Outcome::Failed(FailKind::Deadlock) => k.deadlock_failures += 1,
        Outcome::Failed(FailKind::Other) => k.other_failures += 1,
    }
    if retries > 0 {
        let k = &mut ss.snap.counts;
        k.retried += 1;
        k.retries += retries as u64;
    }
    drop(guard);
    if let Some(log) = &th.log {
        let what = match outcome {
            Outcome::Ok => "",
            Outcome::Failed(k) if sh.cfg.failures_detailed => k.log_name(),
            Outcome::Failed(_) => "failed",
        };
        let lat = if outcome == Outcome::Ok {
            Some(latency)
        } else {
            None
        };
        log.borrow_mut().transaction(
            c.id,
            c.cnt,
            script,
            lat,
            what,
            end,
            tx_begin - scheduled,
            retries,
        );
    }
}
