//! The machine the study ran on: CPU model, cores, memory (from /proc, best effort).

use serde_json::{json, Value};

pub fn host_info() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let mem_kb: Option<u64> = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    });
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok();
    json!({
        "hostname": hostname,
        "cpu_model": model,
        "cpus": cores,
        "memory_bytes": mem_kb.map(|k| k * 1024),
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_info_has_cpus() {
        let h = super::host_info();
        assert!(h["cpus"].as_u64().unwrap() >= 1);
    }
}
