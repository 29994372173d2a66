//! Statistics of time series of throughput: mean ± sd, consecutive windows (seed 003's
//! "over 1000 s" and "over 80 s" columns), nearest-rank percentiles, and how concurrent
//! flows share a path (Jain's fairness index and the time until it settles).

use results::cc::{CcWindow, MeanSd};

/// Mean and sample standard deviation of `xs`; `None` when empty.
pub fn mean_sd(xs: &[f64]) -> Option<MeanSd> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sd = if xs.len() < 2 {
        0.0
    } else {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    };
    Some(MeanSd { mean, sd, n: xs.len() as u32 })
}

/// σ/μ of `xs`; `None` when empty or the mean is 0.
pub fn variation(xs: &[f64]) -> Option<f64> {
    mean_sd(xs).filter(|m| m.mean != 0.0).map(|m| m.sd / m.mean)
}

/// One interval of a series: start and end (s) and its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Start, s.
    pub start_s: f64,
    /// End, s.
    pub end_s: f64,
    /// Value over the interval.
    pub value: f64,
}

/// Share of a window its intervals must cover for the window to count as full.
const FULL: f64 = 0.95;

/// Consecutive windows of `window_s` seconds from the first interval's start: each interval
/// belongs to the window holding its midpoint, a window's figure is the mean ± sd of its
/// intervals' values, and only windows its intervals cover for at least 95 % of their length
/// are kept (a last, partial window is left out).
pub fn windows(spans: &[Span], window_s: f64) -> Vec<CcWindow> {
    let Some(first) = spans.first() else { return Vec::new() };
    if window_s <= 0.0 {
        return Vec::new();
    }
    let t0 = first.start_s;
    let mut groups: Vec<(u64, Vec<&Span>)> = Vec::new();
    for s in spans {
        let k = (((s.start_s + s.end_s) / 2.0 - t0) / window_s).floor().max(0.0) as u64;
        match groups.last_mut() {
            Some((last, members)) if *last == k => members.push(s),
            _ => groups.push((k, vec![s])),
        }
    }
    groups
        .into_iter()
        .filter(|(_, members)| members.iter().map(|s| s.end_s - s.start_s).sum::<f64>() >= FULL * window_s)
        .filter_map(|(k, members)| {
            let values: Vec<f64> = members.iter().map(|s| s.value).collect();
            let start_s = t0 + k as f64 * window_s;
            Some(CcWindow { start_s, end_s: start_s + window_s, bps: mean_sd(&values)? })
        })
        .collect()
}

/// The nearest-rank `p`-th percentile (0 < p ≤ 100) of `xs`; `None` when empty.
pub fn nearest_rank(xs: &[f64], p: f64) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted.get(rank.min(sorted.len()) - 1).copied()
}

/// Jain's fairness index (Σx)² / (n·Σx²) of the flows' throughputs `xs`: 1 when all are
/// equal, 1/n when one flow has everything. `None` for no flows or nothing measured.
pub fn jain(xs: &[f64]) -> Option<f64> {
    let squares: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || squares <= 0.0 {
        return None;
    }
    let sum: f64 = xs.iter().sum();
    Some(sum * sum / (xs.len() as f64 * squares))
}

/// Each flow's fraction of the total; all 0 when nothing was measured.
pub fn shares(xs: &[f64]) -> Vec<f64> {
    let total: f64 = xs.iter().sum();
    xs.iter().map(|x| if total > 0.0 { x / total } else { 0.0 }).collect()
}

/// When concurrent flows converged: the end of the first interval from which the
/// per-interval Jain's index stays at or above `threshold` to the end. `flows` are per-flow
/// interval series aligned by index (the shortest sets the length). `None`: it never did.
pub fn convergence(flows: &[Vec<Span>], threshold: f64) -> Option<f64> {
    let len = flows.iter().map(Vec::len).min()?;
    let index = |i: usize| jain(&flows.iter().map(|f| f[i].value).collect::<Vec<_>>());
    let mut settled = None;
    for i in (0..len).rev() {
        if index(i).is_some_and(|j| j >= threshold) {
            settled = Some(i);
        } else {
            break;
        }
    }
    settled.map(|i| flows[0][i].end_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(values: &[f64], len_s: f64) -> Vec<Span> {
        values
            .iter()
            .enumerate()
            .map(|(i, &value)| Span { start_s: i as f64 * len_s, end_s: (i + 1) as f64 * len_s, value })
            .collect()
    }

    #[test]
    fn mean_and_sample_sd_known_answer() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squares 32, sample sd √(32/7).
        let m = mean_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(m.mean, 5.0);
        assert!((m.sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(m.n, 8);
        assert_eq!(mean_sd(&[3.0]).unwrap().sd, 0.0);
        assert!(mean_sd(&[]).is_none());
        assert!(
            (variation(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap() - (32.0f64 / 7.0).sqrt() / 5.0)
                .abs()
                < 1e-12
        );
    }

    #[test]
    fn windows_group_consecutive_intervals_and_drop_a_partial_one() {
        // 7 one-second intervals in 2 s windows: [1,3] [5,7] [9,11] and a partial [13].
        let w = windows(&spans(&[1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0], 1.0), 2.0);
        assert_eq!(w.len(), 3);
        assert_eq!((w[0].start_s, w[0].end_s), (0.0, 2.0));
        assert_eq!(w[1].bps.mean, 6.0);
        assert!((w[2].bps.sd - 2f64.sqrt()).abs() < 1e-12);
        // The window means 2, 6, 10: mean 6, sd 4.
        let means: Vec<f64> = w.iter().map(|w| w.bps.mean).collect();
        let across = mean_sd(&means).unwrap();
        assert_eq!((across.mean, across.sd), (6.0, 4.0));
    }

    #[test]
    fn windows_start_at_the_first_measured_interval_and_tolerate_timing_noise() {
        // Omitted warm-up: intervals start at 3 s; measured lengths wobble around 1 s.
        let s = [
            Span { start_s: 3.0, end_s: 4.001, value: 1.0 },
            Span { start_s: 4.001, end_s: 4.999, value: 2.0 },
            Span { start_s: 4.999, end_s: 6.0, value: 3.0 },
            Span { start_s: 6.0, end_s: 7.002, value: 4.0 },
        ];
        let w = windows(&s, 2.0);
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].start_s, 3.0);
        assert_eq!(w[0].bps.mean, 1.5);
        assert_eq!(w[1].bps.mean, 3.5);
        assert!(windows(&s, 0.0).is_empty());
    }

    #[test]
    fn jain_known_answers() {
        assert_eq!(jain(&[5.0, 5.0, 5.0]), Some(1.0));
        // One flow with everything: 1/n.
        assert_eq!(jain(&[9.0, 0.0, 0.0]), Some(1.0 / 3.0));
        // (1+2+3)² / (3 · 14) = 36/42.
        assert!((jain(&[1.0, 2.0, 3.0]).unwrap() - 36.0 / 42.0).abs() < 1e-12);
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
    }

    #[test]
    fn shares_sum_to_one() {
        let s = shares(&[1.0, 3.0]);
        assert_eq!(s, vec![0.25, 0.75]);
        assert_eq!(shares(&[0.0, 0.0]), vec![0.0, 0.0]);
    }

    #[test]
    fn convergence_is_where_the_index_settles_for_good() {
        // Flow a starts alone, b catches up from the fourth interval; a dip at 2 s is
        // forgiven because it is followed by more unfairness before settling.
        let a = spans(&[10.0, 9.0, 5.0, 6.0, 5.0, 5.0], 1.0);
        let b = spans(&[0.0, 1.0, 5.0, 1.0, 5.0, 5.0], 1.0);
        assert_eq!(convergence(&[a.clone(), b.clone()], 0.9), Some(5.0));
        let never = spans(&[0.0; 6], 1.0);
        assert_eq!(convergence(&[a, never], 0.9), None);
        assert_eq!(convergence(&[], 0.9), None);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let xs: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(nearest_rank(&xs, 50.0), Some(10.0));
        assert_eq!(nearest_rank(&xs, 95.0), Some(19.0));
        assert_eq!(nearest_rank(&xs, 100.0), Some(20.0));
        assert_eq!(nearest_rank(&[7.0], 1.0), Some(7.0));
        assert_eq!(nearest_rank(&[], 50.0), None);
    }
}
