//! Pre-flight checks of the configuration a run is about to measure (`config.*`): connections
//! against `max_connections`, TPC-B clients against branch rows, where the dataset lives
//! (shared_buffers, the OS cache, storage), and settings that make the result not durable.

use crate::finding::{Finding, Severity};

/// What pre-flight knows of the server and the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Preflight {
    pub clients: u64,
    pub max_connections: u64,
    /// `superuser_reserved_connections` (+ `reserved_connections` on 16+)
    pub reserved_connections: u64,
    /// pgbench scale when the workload is TPC-B-like (its branch rows)
    pub tpcb_scale: Option<u64>,
    pub dataset_bytes: Option<u64>,
    pub shared_buffers_bytes: u64,
    /// the server host's memory, when the server is local
    pub ram_bytes: Option<u64>,
    pub fsync: bool,
    pub synchronous_commit: String,
    pub full_page_writes: bool,
}

/// The pre-flight findings, in the order a reader should see them.
pub fn preflight(p: &Preflight) -> Vec<Finding> {
    let mut out = Vec::new();
    let usable = p.max_connections.saturating_sub(p.reserved_connections);
    if p.clients > usable {
        out.push(
            Finding::new(
                "config.max_connections",
                Severity::Invalid,
                format!(
                    "{} clients, but the server takes {usable} connections (max_connections {} \
                     less {} reserved)",
                    p.clients, p.max_connections, p.reserved_connections
                ),
                "raise max_connections (restart) or run fewer clients",
            )
            .with("clients", p.clients as f64, "", "the options")
            .with(
                "max_connections",
                p.max_connections as f64,
                "",
                "pg_settings",
            ),
        );
    }
    if let Some(scale) = p.tpcb_scale {
        if p.clients > scale {
            out.push(
                Finding::new(
                    "config.branches",
                    Severity::Warning,
                    format!(
                        "{} clients update {scale} branch rows: they queue on each other's row \
                         locks, so the run measures lock waits",
                        p.clients
                    ),
                    "initialise a scale of at least the clients (pgbench's documentation)",
                )
                .with("clients", p.clients as f64, "", "the options")
                .with("scale", scale as f64, "", "pgbench_branches"),
            );
        }
    }
    out.extend(dataset(p));
    out.extend(durability(p));
    out
}

/// Where the dataset is read from.
fn dataset(p: &Preflight) -> Option<Finding> {
    let bytes = p.dataset_bytes?;
    let mib = |b: u64| b as f64 / 1_048_576.0;
    let (summary, severity) = if bytes <= p.shared_buffers_bytes {
        (
            format!(
                "the dataset ({:.0} MiB) fits in shared_buffers ({:.0} MiB): a cached, \
                 in-memory result",
                mib(bytes),
                mib(p.shared_buffers_bytes)
            ),
            Severity::Info,
        )
    } else if p.ram_bytes.is_some_and(|r| bytes > r) {
        (
            format!(
                "the dataset ({:.0} MiB) is larger than the host's memory: reads reach storage",
                mib(bytes)
            ),
            Severity::Info,
        )
    } else {
        (
            format!(
                "the dataset ({:.0} MiB) is larger than shared_buffers ({:.0} MiB): the \
                 operating system's cache serves the rest, and a cold cache changes the result",
                mib(bytes),
                mib(p.shared_buffers_bytes)
            ),
            Severity::Info,
        )
    };
    let mut f = Finding::new(
        "config.dataset",
        severity,
        summary,
        "state which case the result stands for",
    )
    .with("dataset", bytes as f64, "bytes", "pg_database_size")
    .with(
        "shared_buffers",
        p.shared_buffers_bytes as f64,
        "bytes",
        "pg_settings",
    );
    if let Some(r) = p.ram_bytes {
        f = f.with("memory", r as f64, "bytes", "/proc/meminfo");
    }
    Some(f)
}

/// Settings that trade durability for speed.
fn durability(p: &Preflight) -> Vec<Finding> {
    let mut off = Vec::new();
    if !p.fsync {
        off.push("fsync=off");
    }
    if p.synchronous_commit == "off" {
        off.push("synchronous_commit=off");
    }
    if !p.full_page_writes {
        off.push("full_page_writes=off");
    }
    if off.is_empty() {
        return Vec::new();
    }
    vec![Finding::new(
        "config.durability",
        Severity::Warning,
        format!(
            "not durable: {} — the result is not comparable with a durable configuration",
            off.join(", ")
        ),
        "compare only with runs of the same settings, and say so beside the figure",
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sound() -> Preflight {
        Preflight {
            clients: 16,
            max_connections: 100,
            reserved_connections: 3,
            tpcb_scale: Some(100),
            dataset_bytes: None,
            shared_buffers_bytes: 128 << 20,
            ram_bytes: Some(8 << 30),
            fsync: true,
            synchronous_commit: "on".into(),
            full_page_writes: true,
        }
    }

    #[test]
    fn a_sound_configuration_finds_nothing() {
        assert!(preflight(&sound()).is_empty());
    }

    #[test]
    fn too_many_clients_and_too_few_branches_are_named() {
        let p = Preflight {
            clients: 120,
            tpcb_scale: Some(10),
            ..sound()
        };
        let f = preflight(&p);
        assert_eq!(f[0].check, "config.max_connections");
        assert!(f[0].summary.contains("takes 97 connections"), "{:?}", f[0]);
        assert_eq!(f[1].check, "config.branches");
    }

    #[test]
    fn the_dataset_is_placed_in_shared_buffers_the_os_cache_or_storage() {
        let at = |bytes: u64| {
            let p = Preflight {
                dataset_bytes: Some(bytes),
                ..sound()
            };
            preflight(&p)[0].summary.clone()
        };
        assert!(at(16 << 20).contains("fits in shared_buffers"));
        assert!(at(1 << 30).contains("operating system's cache"));
        assert!(at(16 << 30).contains("larger than the host's memory"));
    }

    #[test]
    fn settings_that_are_not_durable_are_one_warning() {
        let p = Preflight {
            fsync: false,
            synchronous_commit: "off".into(),
            ..sound()
        };
        let f = preflight(&p);
        assert_eq!(f.len(), 1);
        assert!(f[0]
            .summary
            .starts_with("not durable: fsync=off, synchronous_commit=off"));
    }
}
