//! Where threads run: pinning the calling thread to one CPU (`-A`), its kernel thread id, and
//! the CPU a thread last ran on (for reporting placement, which decides request/response
//! latency on small hosts: DESIGN.md §9).

use std::io;

/// The calling thread's kernel id (gettid).
pub fn current_tid() -> u32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    let tid = unsafe { libc::gettid() };
    u32::try_from(tid).unwrap_or(0)
}

/// Pins the calling thread to `cpu`. Fails with the OS error when the CPU is offline or not
/// allowed for this process (cgroup cpuset, taskset).
pub fn pin_current_thread(cpu: u32) -> io::Result<()> {
    let index = usize::try_from(cpu).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    if index >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("CPU {cpu} is out of range")));
    }
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `index` was checked against CPU_SETSIZE above.
    unsafe { libc::CPU_SET(index, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t and its exact size is passed; pid 0 = calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID): user and system, including
/// softirq work the kernel did in its context.
pub fn thread_cpu_time() -> io::Result<std::time::Duration> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(ts.tv_nsec).unwrap_or(0);
    Ok(std::time::Duration::new(secs, nanos))
}

/// The CPUs this process may run on (its affinity mask), ascending.
pub fn allowed_cpus() -> io::Result<Vec<u32>> {
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t and its exact size is passed.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: CPU_ISSET reads the valid set at an index below CPU_SETSIZE.
    let allowed = (0..libc::CPU_SETSIZE as usize).filter(|&i| unsafe { libc::CPU_ISSET(i, &set) });
    Ok(allowed.map(|i| i as u32).collect())
}

/// The CPU thread `tid` of this process last ran on (field 39 of /proc/self/task/TID/stat).
pub fn thread_last_cpu(tid: u32) -> io::Result<u32> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat"))?;
    parse_processor(&text).ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "bad /proc stat line"))
}

/// Field 39 ("processor") of a /proc stat line; the command name in parentheses may contain
/// spaces and parentheses, so fields are counted after the last ')'.
fn parse_processor(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // After ')' come fields 3, 4, …; "processor" is field 39.
    rest.split_ascii_whitespace().nth(39 - 3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processor_field_is_found_after_a_tricky_name() {
        let line = "1234 (a) b (c) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 \
                    100 1000 50 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        assert_eq!(parse_processor(line), Some(1));
        assert_eq!(parse_processor("garbage"), None);
        assert_eq!(parse_processor("1 (x) S 1"), None);
    }

    #[test]
    fn this_thread_reports_a_cpu_it_may_run_on() {
        let cpu = thread_last_cpu(current_tid()).unwrap();
        assert!(cpu < 4096);
    }

    #[test]
    fn a_spinning_thread_accumulates_cpu_time() {
        let (t0, wall) = (thread_cpu_time().unwrap(), std::time::Instant::now());
        while thread_cpu_time().unwrap() < t0 + std::time::Duration::from_millis(5) {
            assert!(
                wall.elapsed() < std::time::Duration::from_secs(5),
                "the thread's CPU clock does not advance"
            );
            std::hint::spin_loop();
        }
    }

    #[test]
    fn the_current_cpu_is_allowed() {
        let allowed = allowed_cpus().unwrap();
        assert!(allowed.contains(&thread_last_cpu(current_tid()).unwrap()));
    }

    #[test]
    fn pinning_moves_the_thread() {
        let cpu = std::thread::spawn(|| {
            pin_current_thread(0).unwrap();
            std::thread::yield_now();
            thread_last_cpu(current_tid()).unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(cpu, 0);
        assert!(std::thread::spawn(|| pin_current_thread(100_000)).join().unwrap().is_err());
    }
}
