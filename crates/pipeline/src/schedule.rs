//! Scheduled rounds (`tcplab mesh … --every 1h [--jitter 5m] [--rounds N]`): one round on each
//! slot of a fixed grid (start + k · every), each moved later by a random share of the jitter so
//! that a fleet's schedulers do not start together. Rounds never overlap: a round that runs past
//! the next slot says so, and the next round starts at once on the first slot not yet begun
//! (the slots it overran are skipped, never run back to back). A round that fails is reported
//! and the schedule goes on. Ctrl-C or SIGTERM end it: between rounds at once, during a round
//! once that round has stopped (it keeps what it measured).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use engine::StopFlag;

/// When rounds run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Time between the starts of rounds.
    pub every: Duration,
    /// Each round starts up to this much after its slot (uniformly at random).
    pub jitter: Duration,
    /// Stop after this many rounds (`None`: until stopped).
    pub rounds: Option<u32>,
}

/// What to do after a round that ended `elapsed` after the schedule began, in slot `slot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Next {
    /// The slot of the next round.
    pub slot: u64,
    /// Slots skipped because the round overran them.
    pub skipped: u64,
    /// Whether the round ran past the start of the next slot.
    pub overran: bool,
}

/// The next round's slot (pure: time passed in). The next slot is `slot + 1` unless the round
/// ended after it began; then the first slot whose start (without jitter) is still ahead, or
/// the one under way when the round ended — started at once.
pub fn next(every: Duration, slot: u64, elapsed: Duration) -> Next {
    let want = slot + 1;
    let every_ns = every.as_nanos().max(1);
    let current = (elapsed.as_nanos() / every_ns) as u64;
    if current < want {
        return Next { slot: want, skipped: 0, overran: false };
    }
    Next { slot: current, skipped: current - want, overran: true }
}

/// A random offset in `[0, jitter]` (no offset when the system gives no random bytes).
fn jitter_offset(jitter: Duration) -> Duration {
    let mut b = [0u8; 8];
    if jitter.is_zero() || getrandom::fill(&mut b).is_err() {
        return Duration::ZERO;
    }
    let share = u64::from_le_bytes(b) as f64 / u64::MAX as f64;
    jitter.mul_f64(share)
}

/// Sleeps until `at` or until `stop` is set; whether it was stopped.
fn wait_until(at: Instant, stop: &StopFlag) -> bool {
    loop {
        if stop.is_set() {
            return true;
        }
        let now = Instant::now();
        if now >= at {
            return false;
        }
        std::thread::sleep((at - now).min(Duration::from_millis(100)));
    }
}

/// Runs `round(n)` (n from 1) on the schedule until stopped or `s.rounds` have run. Exit
/// status: 0 when every round succeeded (or the schedule was stopped with all finished rounds
/// succeeding), else that of the last round that did not.
pub fn run(
    s: &Schedule,
    stop: &StopFlag,
    mut round: impl FnMut(u32) -> anyhow::Result<ExitCode>,
) -> ExitCode {
    let began = Instant::now();
    let mut slot = 0u64;
    let mut status = ExitCode::SUCCESS;
    for n in 1u32.. {
        let at =
            began + s.every.saturating_mul(u32::try_from(slot).unwrap_or(u32::MAX)) + jitter_offset(s.jitter);
        if wait_until(at, stop) {
            break;
        }
        eprintln!("round {n}: starting");
        let t = Instant::now();
        match round(n) {
            Ok(code) if code == ExitCode::SUCCESS => {
                eprintln!("round {n}: done in {:.1} s", t.elapsed().as_secs_f64())
            }
            Ok(code) => {
                status = code;
                if stop.is_set() {
                    eprintln!("round {n}: stopped before it ended (it keeps what it measured)");
                } else {
                    eprintln!("round {n}: ended with a failure (see above); the schedule goes on");
                }
            }
            Err(e) => {
                eprintln!("round {n}: failed: {e:#}; the schedule goes on");
                status = ExitCode::from(2);
            }
        }
        if stop.is_set() || s.rounds.is_some_and(|max| n >= max) {
            break;
        }
        let next = next(s.every, slot, began.elapsed());
        if next.overran {
            // Milliseconds: a round a few ms over a 1 s interval must not read "1.0 s, longer than 1.0 s".
            let skipped = match next.skipped {
                0 => String::new(),
                k => format!(" ({k} slot(s) skipped)"),
            };
            eprintln!(
                "round {n}: took {:.3} s, longer than the {:.1} s interval; round {} starts now{skipped}",
                t.elapsed().as_secs_f64(),
                s.every.as_secs_f64(),
                n + 1,
            );
        }
        slot = next.slot;
    }
    if stop.is_set() {
        eprintln!("schedule stopped");
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: Duration = Duration::from_secs(3600);

    #[test]
    fn rounds_keep_to_their_slots_and_an_overrun_skips_the_missed_ones() {
        assert_eq!(next(H, 0, H / 2), Next { slot: 1, skipped: 0, overran: false });
        assert_eq!(next(H, 4, H * 5 - Duration::from_secs(1)), Next { slot: 5, skipped: 0, overran: false });
        // Ran 10 s into slot 5: slot 5 starts at once.
        assert_eq!(next(H, 4, H * 5 + Duration::from_secs(10)), Next { slot: 5, skipped: 0, overran: true });
        // Ran 2.5 h: slots 1 and 2 are skipped, slot 2's time is under way, so it starts now.
        assert_eq!(next(H, 0, H * 5 / 2), Next { slot: 2, skipped: 1, overran: true });
    }

    #[test]
    fn jitter_stays_within_its_bound() {
        for _ in 0..100 {
            assert!(jitter_offset(Duration::from_secs(300)) <= Duration::from_secs(300));
        }
        assert_eq!(jitter_offset(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn a_failed_round_does_not_end_the_schedule_and_a_stop_does() {
        let s = Schedule { every: Duration::from_millis(1), jitter: Duration::ZERO, rounds: Some(4) };
        let stop = StopFlag::new();
        let mut seen = Vec::new();
        let code = run(&s, &stop, |n| {
            seen.push(n);
            if n == 2 {
                anyhow::bail!("archive refused");
            }
            Ok(ExitCode::SUCCESS)
        });
        assert_eq!((seen, code), (vec![1, 2, 3, 4], ExitCode::from(2)));
        let s = Schedule { rounds: None, ..s };
        let mut n_seen = 0;
        let code = run(&s, &stop.clone(), |n| {
            n_seen = n;
            if n == 3 {
                stop.set();
            }
            Ok(ExitCode::SUCCESS)
        });
        assert_eq!((n_seen, code), (3, ExitCode::SUCCESS));
    }
}
