//! Helpers shared by the known-answer tests.
#![allow(dead_code, reason = "each test binary uses a subset of the helpers")]

use model::{goodput, Link, Stack};

/// Asserts that `actual` rounds to `printed`, a number as theory.md prints it: the tolerance
/// is half a unit of its last digit.
#[track_caller]
pub fn assert_printed(actual: f64, printed: &str) {
    let expected: f64 = printed.parse().expect("printed value is a number");
    let decimals = printed.split_once('.').map_or(0, |(_, frac)| frac.len());
    let tolerance = 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9;
    assert!((actual - expected).abs() <= tolerance, "{actual} does not round to {printed} (±{tolerance})");
}

/// Parses a link and a stack spec.
pub fn setup(link: &str, stack: &str) -> (Link, Stack) {
    (link.parse().expect("valid link spec"), stack.parse().expect("valid stack spec"))
}

/// The full-size goodput of `link` and `stack` specs.
pub fn max(link: &str, stack: &str) -> goodput::Goodput {
    let (link, stack) = setup(link, stack);
    goodput::max_goodput(&link, &stack).expect("computable")
}
