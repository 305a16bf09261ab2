//! The client's own CPU use: user and system time of the calling thread (`RUSAGE_THREAD`), and
//! the time it was ready to run but waited for a CPU (`/proc/thread-self/schedstat`).

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

/// Seconds the calling thread has spent runnable but waiting for a CPU (the scheduler's run
/// delay); 0 where the kernel does not keep schedstats.
pub fn thread_wait_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0.0, |ns| ns as f64 / 1e9)
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

    /// Two threads spinning on one CPU: each waits for the CPU while the other runs.
    #[test]
    fn waiting_for_the_cpu_is_measured() {
        let spin = || {
            // SAFETY: a zeroed cpu_set_t with one bit set is a valid affinity mask.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(0, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            let w0 = super::thread_wait_seconds();
            let t = std::time::Instant::now();
            let mut x = 0u64;
            while t.elapsed().as_millis() < 300 {
                x = x.wrapping_add(std::hint::black_box(1));
            }
            assert!(x > 0);
            super::thread_wait_seconds() - w0
        };
        let other = std::thread::spawn(spin);
        let mine = spin();
        let theirs = other.join().unwrap();
        if std::fs::metadata("/proc/thread-self/schedstat").is_err() {
            eprintln!("skipped: this kernel keeps no schedstats");
            return;
        }
        assert!(mine + theirs > 0.05, "waits {mine} + {theirs}");
    }
}
