//! The two places where pgbench's option parsing touches the system: resolving a random seed
//! (`time` = the monotonic clock in µs like `pg_time_now()`, `rand` = the OS's strong random
//! source) and raising `RLIMIT_NOFILE` for `-c` (with pgbench's int arithmetic and messages).

/// `pg_time_now()`: `CLOCK_MONOTONIC` in microseconds.
pub fn monotonic_micros() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000)
        .wrapping_add(ts.tv_nsec as u64 / 1000)
}

/// `pg_strong_random()` for 8 bytes; `None` if the OS source fails.
pub fn strong_random_u64() -> Option<u64> {
    use std::io::Read;
    let mut buf = [0u8; 8];
    let mut f = std::fs::File::open("/dev/urandom").ok()?;
    f.read_exact(&mut buf).ok()?;
    Some(u64::from_ne_bytes(buf))
}

/// Why the open-files limit is too low for `-c N` (messages without the program prefix).
#[derive(Clone, Debug, PartialEq)]
pub struct FdLimitError {
    pub message: String,
    pub hint: String,
}

/// `rlim_t` as `u64` (it is `u64` on Linux/glibc, not on every platform).
#[allow(clippy::unnecessary_cast)]
fn rlim_u64(v: libc::rlim_t) -> u64 {
    v as u64
}

/// pgbench's `-c` check: needs `nclients + 3` descriptors (C `int` arithmetic, so it wraps for
/// huge N); fails if the hard limit is lower, else raises the soft limit when needed.
pub fn ensure_fd_limit(nclients: i32) -> Result<(), FdLimitError> {
    let hint = "Reduce number of clients, or use limit/ulimit to increase the system limit.";
    let need = nclients.wrapping_add(3);
    // C compares the int with an unsigned rlim_t: a negative value becomes huge.
    let need_unsigned = need as i64 as u64;
    let mut rlim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `rlim` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rlim) } == -1 {
        let e = std::io::Error::last_os_error();
        return Err(FdLimitError {
            message: format!("getrlimit failed: {}", super::scripts::strerror(&e)),
            hint: String::new(),
        });
    }
    if rlim_u64(rlim.rlim_max) < need_unsigned {
        return Err(FdLimitError {
            message: format!(
                "need at least {need} open files, but system limit is {}",
                rlim_u64(rlim.rlim_max) as i64
            ),
            hint: hint.to_string(),
        });
    }
    if rlim_u64(rlim.rlim_cur) < need_unsigned {
        rlim.rlim_cur = need_unsigned as libc::rlim_t;
        // SAFETY: `rlim` is a valid rlimit.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rlim) } == -1 {
            let e = std::io::Error::last_os_error();
            return Err(FdLimitError {
                message: format!(
                    "need at least {need} open files, but couldn't raise the limit: {}",
                    super::scripts::strerror(&e)
                ),
                hint: hint.to_string(),
            });
        }
    }
    Ok(())
}
