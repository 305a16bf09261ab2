//! The client's own CPU: user and system time of the calling thread (`RUSAGE_THREAD`), the time
//! it was ready to run but waited for a CPU (`/proc/thread-self/schedstat`), and the CPUs a
//! worker thread may run on (`BenchConfig::client_cpus`).

use nix::sched::{sched_setaffinity, CpuSet};
use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::time::TimeVal;
use nix::unistd::Pid;

use crate::result::ThreadCpu;

/// Lets the calling thread run only on `cpus`.
pub fn pin_thread(cpus: &[usize]) -> Result<(), String> {
    let fail = |why: String| format!("could not set the client's CPU affinity: {why}");
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c)
            .map_err(|_| fail(format!("CPU {c} is out of range")))?;
    }
    // pid 0 is the calling thread
    sched_setaffinity(Pid::from_raw(0), &set)
        .map_err(|e| fail(pgrig_wire::strerror(&std::io::Error::from(e))))
}

/// (user seconds, system seconds) consumed so far by the calling thread.
pub fn thread_cpu_seconds() -> (f64, f64) {
    match getrusage(UsageWho::RUSAGE_THREAD) {
        Ok(ru) => {
            let tv = |t: TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
            (tv(ru.user_time()), tv(ru.system_time()))
        }
        Err(_) => (0.0, 0.0),
    }
}

/// The calling thread's CPU time and run-queue wait so far, with `wall_s` the time since
/// `origin`; subtract two readings ([`ThreadCpu::since`]) for what a stretch of the run spent.
pub fn thread_reading(origin: std::time::Instant) -> ThreadCpu {
    let (user_s, sys_s) = thread_cpu_seconds();
    ThreadCpu {
        user_s,
        sys_s,
        wait_s: thread_wait_seconds(),
        wall_s: origin.elapsed().as_secs_f64(),
    }
}

/// Thread `task`'s (a kernel thread id of this process) CPU time and run-queue wait so far, read
/// from `/proc/self/task/TASK/` by another thread (clock-tick resolution), with `wall_s` the
/// time since `origin`; `None` when the thread is gone or the files cannot be read.
pub fn task_reading(task: i32, origin: std::time::Instant) -> Option<ThreadCpu> {
    let dir = format!("/proc/self/task/{task}");
    let stat = std::fs::read_to_string(format!("{dir}/stat")).ok()?;
    // the fields after the command name (which may hold spaces) in parentheses
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let hz = match nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK) {
        Ok(Some(t)) if t > 0 => t as f64,
        _ => 100.0,
    };
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok().map(|t| t as f64 / hz);
    // utime and stime are stat's 14th and 15th fields, the 12th and 13th after the name
    let (user_s, sys_s) = (ticks(11)?, ticks(12)?);
    let wait_s = std::fs::read_to_string(format!("{dir}/schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0.0, |ns| ns as f64 / 1e9);
    Some(ThreadCpu {
        user_s,
        sys_s,
        wait_s,
        wall_s: origin.elapsed().as_secs_f64(),
    })
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
    /// The CPUs the calling thread may run on.
    fn affinity() -> Vec<usize> {
        let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
        (0..nix::sched::CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect()
    }

    #[test]
    fn a_pinned_thread_runs_only_on_its_cpus_and_others_keep_theirs() {
        let before = affinity();
        let last = *before.last().unwrap();
        let pinned = std::thread::spawn(move || {
            super::pin_thread(&[last]).unwrap();
            affinity()
        })
        .join()
        .unwrap();
        assert_eq!(pinned, vec![last]);
        assert_eq!(affinity(), before);
    }

    #[test]
    fn cpus_that_cannot_be_used_are_an_error() {
        let e = std::thread::spawn(|| super::pin_thread(&[nix::sched::CpuSet::count() - 1]))
            .join()
            .unwrap()
            .unwrap_err();
        assert!(
            e.starts_with("could not set the client's CPU affinity: "),
            "{e}"
        );
        let e = super::pin_thread(&[1 << 20]).unwrap_err();
        assert!(e.contains("CPU 1048576 is out of range"), "{e}");
    }

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
            super::pin_thread(&[0]).unwrap();
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
