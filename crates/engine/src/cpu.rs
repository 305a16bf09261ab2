//! The client's own CPU use: user and system time of the calling thread (`RUSAGE_THREAD`).

/// (user seconds, system seconds) consumed so far by the calling thread.
pub fn thread_cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

#[cfg(test)]
mod tests {
    /// Spins until the thread's user time has grown by 20 ms (a loaded machine only makes that
    /// take longer; it fails only when no growth shows within 20 s).
    #[test]
    fn busy_loop_consumes_user_time() {
        let (u0, _) = super::thread_cpu_seconds();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        let mut grown = 0.0;
        while grown < 0.02 && t.elapsed().as_secs() < 20 {
            for _ in 0..100_000 {
                x = x.wrapping_add(std::hint::black_box(1));
            }
            grown = super::thread_cpu_seconds().0 - u0;
        }
        assert!(x > 0);
        assert!(
            grown >= 0.02,
            "user time grew by {grown} in {:?}",
            t.elapsed()
        );
    }
}
