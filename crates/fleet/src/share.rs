//! A segment's share of a run: segment `i` of `n` takes a contiguous block of the global client
//! ids (the first `clients % n` segments one client more) and the part of `-R` its clients make.

use pgrig_engine::config::{BenchConfig, Segment};

use crate::FleetError;

/// Segment `index` of `count` (`i/N` on the command line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentId {
    pub index: u32,
    pub count: u32,
}

impl std::str::FromStr for SegmentId {
    type Err = String;
    /// `I/N` with `0 <= I < N`.
    fn from_str(s: &str) -> Result<SegmentId, String> {
        let bad = || format!("invalid segment \"{s}\": expected I/N with 0 <= I < N (e.g. 0/4)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse::<u32>().map_err(|_| bad())?,
            n.trim().parse::<u32>().map_err(|_| bad())?,
        );
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(SegmentId { index, count })
    }
}

/// The global client ids `first..first + clients` of segment `seg` among `total` clients.
pub fn clients_of(seg: SegmentId, total: u32) -> (u32, u32) {
    let (base, extra) = (total / seg.count, total % seg.count);
    let clients = base + u32::from(seg.index < extra);
    let first = seg.index * base + seg.index.min(extra);
    (first, clients)
}

/// The whole run's configuration cut down to segment `seg`: its clients (ids and random streams
/// as in the whole run), `-j` clamped to them, its part of `-R`. Vacuum is the coordinator's.
pub fn segment_config(mut cfg: BenchConfig, seg: SegmentId) -> Result<BenchConfig, FleetError> {
    let total = cfg.clients;
    if total < seg.count {
        return Err(FleetError::new(format!(
            "{} segments need at least {} clients (-c {total})",
            seg.count, seg.count
        )));
    }
    let (first, clients) = clients_of(seg, total);
    cfg.rate = cfg.rate.map(|r| r * clients as f64 / total as f64);
    cfg.clients = clients;
    cfg.threads = pgrig_engine::config::clamp_threads(cfg.threads, clients);
    cfg.segment = Some(Segment {
        first_client: first,
        total_clients: total,
    });
    cfg.no_vacuum = true;
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_cover_every_client_once() {
        for total in [3u32, 4, 10, 11] {
            let mut next = 0;
            for index in 0..3 {
                let (first, n) = clients_of(SegmentId { index, count: 3 }, total);
                assert_eq!(first, next);
                next += n;
            }
            assert_eq!(next, total);
        }
    }

    #[test]
    fn segment_syntax_is_checked() {
        assert_eq!("1/4".parse(), Ok(SegmentId { index: 1, count: 4 }));
        assert!("4/4".parse::<SegmentId>().is_err());
        assert!("x".parse::<SegmentId>().is_err());
    }

    #[test]
    fn rate_is_split_by_clients() {
        let cfg = BenchConfig {
            clients: 4,
            rate: Some(100.0),
            ..Default::default()
        };
        let s = segment_config(cfg, SegmentId { index: 0, count: 3 }).unwrap();
        assert_eq!((s.clients, s.rate), (2, Some(50.0)));
    }
}
