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
    #[test]
    fn busy_loop_consumes_user_time() {
        let (u0, _) = super::thread_cpu_seconds();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_millis() < 50 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        let (u1, _) = super::thread_cpu_seconds();
        assert!(x > 0);
        assert!(u1 - u0 > 0.02, "user time grew by {}", u1 - u0);
    }
}
