//! A worker's clock offset to the coordination database: samples of the server's
//! `clock_timestamp()` bracketed by this host's clock before and after the round trip; the
//! sample with the shortest round trip wins, its offset taken at the round trip's midpoint and
//! its error bound half the round trip (NTP's reasoning, without its filtering).

use std::time::{SystemTime, UNIX_EPOCH};

use crate::db::{parse, Db};
use crate::FleetError;

/// `server clock - this host's clock`, and how far from the truth it can be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Offset {
    pub offset_ms: f64,
    /// half the shortest round trip
    pub error_ms: f64,
}

/// This host's clock, milliseconds since the Unix epoch.
pub fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// Measures the offset over `samples` round trips.
pub fn measure(db: &mut Db, samples: usize) -> Result<Offset, FleetError> {
    let mut best: Option<Offset> = None;
    for _ in 0..samples.max(1) {
        let t0 = now_ms();
        let server = db.value("SELECT extract(epoch FROM clock_timestamp()) * 1000")?;
        let t1 = now_ms();
        let server: f64 = parse(server.as_deref(), "clock_timestamp()")?;
        let o = Offset {
            offset_ms: server - (t0 + t1) / 2.0,
            error_ms: (t1 - t0) / 2.0,
        };
        if best.is_none_or(|b| o.error_ms < b.error_ms) {
            best = Some(o);
        }
    }
    Ok(best.expect("at least one sample"))
}

/// Refuses an offset that cannot be trusted to start together within `max_ms`: the clocks
/// disagree by more (no time synchronisation on one of them) or the measurement's own error is
/// larger (a slow or congested path).
pub fn check(o: Offset, max_ms: f64) -> Result<(), FleetError> {
    if o.offset_ms.abs() > max_ms || o.error_ms > max_ms {
        return Err(FleetError::new(format!(
            "clock offset to the coordinator is {:+.3} ms (± {:.3} ms), beyond \
             --max-clock-offset {max_ms} ms: synchronise this host's clock (chrony/NTP) or \
             allow a larger offset",
            o.offset_ms, o.error_ms
        )));
    }
    Ok(())
}
