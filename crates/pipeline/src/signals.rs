//! Ctrl-C and termination: SIGINT, SIGTERM and SIGHUP all ask the run to stop and keep what
//! it measured. `timeout -s INT` and some terminals deliver two SIGINTs microseconds apart;
//! a second signal within [`SAME_INTERRUPT`] is the same request. A later one (the user
//! pressing Ctrl-C again because the stop takes too long) exits at once.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use engine::StopFlag;

/// Signals closer together than this are one request.
pub const SAME_INTERRUPT: Duration = Duration::from_millis(500);

/// What to do with a signal that arrived at `now`, given when the first one arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Ask the run to stop.
    Stop,
    /// A repeat of the request under way: nothing more.
    Ignore,
    /// The user insists: exit now.
    ExitNow,
}

/// The decision for a signal at `now` when the first arrived at `first` (`None`: this is it).
pub fn decide(first: Option<Instant>, now: Instant) -> Action {
    match first {
        None => Action::Stop,
        Some(t) if now.saturating_duration_since(t) < SAME_INTERRUPT => Action::Ignore,
        Some(_) => Action::ExitNow,
    }
}

/// Installs the handler: the first signal sets `stop`.
pub fn install(stop: &StopFlag) {
    let flag = stop.clone();
    let first: Mutex<Option<Instant>> = Mutex::new(None);
    let _ = ctrlc::set_handler(move || {
        let now = Instant::now();
        let mut first = match first.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        match decide(*first, now) {
            Action::Stop => {
                *first = Some(now);
                flag.set();
            }
            Action::Ignore => {}
            Action::ExitNow => {
                eprintln!("error: interrupted twice; exiting now (results of the test under way are lost)");
                std::process::exit(2);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_one_interrupt_and_a_later_one_exits() {
        let t0 = Instant::now();
        assert_eq!(decide(None, t0), Action::Stop);
        assert_eq!(decide(Some(t0), t0 + Duration::from_micros(30)), Action::Ignore);
        assert_eq!(decide(Some(t0), t0 + Duration::from_millis(499)), Action::Ignore);
        assert_eq!(decide(Some(t0), t0 + Duration::from_millis(500)), Action::ExitNow);
    }
}
