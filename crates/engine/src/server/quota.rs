//! What the server counts across tests: tests running per class, and tests per minute per
//! source address (a token bucket per class and address, in bounded memory). Time is passed
//! in, so the buckets are tested without sleeping.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Most addresses tracked at once; past it, full buckets and then the least recently used
/// are forgotten (an address forgotten early gets a fresh bucket: lenient, never unbounded).
pub const MAX_TRACKED: usize = 4096;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Token buckets keyed by (class, address).
#[derive(Debug, Default)]
pub struct PerMinute {
    buckets: Mutex<HashMap<(String, IpAddr), Bucket>>,
}

impl PerMinute {
    /// Takes one test from `ip`'s bucket in `class` (capacity and refill `per_minute` a
    /// minute); on refusal, how long until the next token.
    pub fn take(&self, class: &str, ip: IpAddr, per_minute: u32, now: Instant) -> Result<(), Duration> {
        let rate = f64::from(per_minute.max(1)) / 60.0;
        let cap = f64::from(per_minute.max(1));
        let mut map = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let key = (class.to_string(), ip);
        if !map.contains_key(&key) && map.len() >= MAX_TRACKED {
            forget(&mut map, rate, cap, now);
        }
        let b = map.entry(key).or_insert(Bucket { tokens: cap, at: now });
        b.tokens = (b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rate).min(cap);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            return Ok(());
        }
        Err(Duration::from_secs_f64((1.0 - b.tokens) / rate))
    }

    /// Addresses tracked now.
    pub fn tracked(&self) -> usize {
        self.buckets.lock().map(|m| m.len()).unwrap_or(0)
    }
}

/// Drops the buckets that have refilled; if none has, the least recently used one.
fn forget(map: &mut HashMap<(String, IpAddr), Bucket>, rate: f64, cap: f64, now: Instant) {
    let full = |b: &Bucket| b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rate >= cap;
    map.retain(|_, b| !full(b));
    if map.len() >= MAX_TRACKED {
        if let Some(oldest) = map.iter().min_by_key(|(_, b)| b.at).map(|(k, _)| k.clone()) {
            map.remove(&oldest);
        }
    }
}

/// Tests running per class.
#[derive(Debug, Default, Clone)]
pub struct Running(Arc<Mutex<HashMap<String, u32>>>);

/// One running test of a class; counted until dropped.
#[derive(Debug)]
pub struct RunningSlot {
    running: Running,
    class: String,
}

impl Running {
    /// Counts a test of `class` unless `max` are running.
    pub fn try_start(&self, class: &str, max: Option<u32>) -> Option<RunningSlot> {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = map.entry(class.to_string()).or_insert(0);
        if max.is_some_and(|m| *n >= m) {
            return None;
        }
        *n += 1;
        Some(RunningSlot { running: self.clone(), class: class.to_string() })
    }
}

impl Drop for RunningSlot {
    fn drop(&mut self) {
        let mut map = self.running.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = map.get_mut(&self.class) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                map.remove(&self.class);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u32) -> IpAddr {
        IpAddr::from(std::net::Ipv4Addr::from(0xC612_0000 + n))
    }

    #[test]
    fn a_bucket_allows_its_rate_then_refills() {
        let q = PerMinute::default();
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(q.take("lab", ip(1), 3, t0).is_ok());
        }
        let wait = q.take("lab", ip(1), 3, t0).unwrap_err();
        assert!((wait.as_secs_f64() - 20.0).abs() < 1e-6, "{wait:?}");
        assert!(q.take("lab", ip(2), 3, t0).is_ok(), "another address has its own bucket");
        assert!(q.take("ops", ip(1), 3, t0).is_ok(), "and another class");
        assert!(q.take("lab", ip(1), 3, t0 + Duration::from_secs(20)).is_ok(), "one token after 20 s");
        assert!(q.take("lab", ip(1), 3, t0 + Duration::from_secs(21)).is_err());
    }

    #[test]
    fn memory_stays_bounded_under_many_addresses() {
        let q = PerMinute::default();
        let t0 = Instant::now();
        for n in 0..(MAX_TRACKED as u32 + 500) {
            let _ = q.take("anonymous", ip(n), 1, t0 + Duration::from_millis(u64::from(n)));
            assert!(q.tracked() <= MAX_TRACKED);
        }
        assert_eq!(q.tracked(), MAX_TRACKED);
    }

    #[test]
    fn running_tests_are_counted_per_class_until_dropped() {
        let r = Running::default();
        let a = r.try_start("lab", Some(2));
        let b = r.try_start("lab", Some(2));
        assert!(a.is_some() && b.is_some());
        assert!(r.try_start("lab", Some(2)).is_none());
        assert!(r.try_start("ops", Some(1)).is_some());
        drop(a);
        assert!(r.try_start("lab", Some(2)).is_some());
        assert!(r.try_start("x", None).is_some());
    }
}
