//! Difference of two means with a Welch confidence interval (unequal variances,
//! Welch–Satterthwaite degrees of freedom), for `tcplab compare`.

use crate::student;

/// B − A for one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// Mean of A.
    pub mean_a: f64,
    /// Mean of B.
    pub mean_b: f64,
    /// mean_b − mean_a.
    pub diff: f64,
    /// Half-width of the interval of `diff` at the level asked; `None` when either side has
    /// fewer than two values (no spread known).
    pub half_width: Option<f64>,
    /// `diff` in % of mean_a (0 when mean_a is 0).
    pub diff_pct: f64,
}

impl Difference {
    /// Whether the interval excludes 0 (a significant difference); false without an interval.
    pub fn significant(&self) -> bool {
        self.half_width.is_some_and(|h| self.diff.abs() > h)
    }
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = if v.len() < 2 { 0.0 } else { v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0) };
    (m, var)
}

/// The difference of the means of `b` and `a` with its `level_pct` interval; `None` if
/// either is empty.
pub fn difference(a: &[f64], b: &[f64], level_pct: f64) -> Option<Difference> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_var(a), mean_var(b));
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let diff = mb - ma;
    let half_width = if a.len() < 2 || b.len() < 2 {
        None
    } else {
        let (sa, sb) = (va / na, vb / nb);
        let se = (sa + sb).sqrt();
        if se == 0.0 {
            Some(0.0)
        } else {
            let df = (sa + sb).powi(2) / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
            student::two_sided(level_pct / 100.0, df).map(|t| t * se)
        }
    };
    let diff_pct = if ma == 0.0 { 0.0 } else { 100.0 * diff / ma };
    Some(Difference { mean_a: ma, mean_b: mb, diff, half_width, diff_pct })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_answer() {
        // a: mean 10, var 1 (n 3); b: mean 14, var 4 (n 3). SE = √(1/3 + 4/3) = 1.291,
        // df = (5/3)² / ((1/9)/2 + (16/9)/2) = 2.941; t(95 %, 2.941) ≈ 3.206 → ±4.14.
        let d = difference(&[9.0, 10.0, 11.0], &[12.0, 14.0, 16.0], 95.0).unwrap_or_else(|| unreachable!());
        assert_eq!(d.diff, 4.0);
        let h = d.half_width.unwrap_or(0.0);
        assert!((h - 4.14).abs() < 0.02, "{h}");
        assert!(!d.significant());
        assert!((d.diff_pct - 40.0).abs() < 1e-9);
        let d = difference(&[9.0, 10.0, 11.0], &[19.0, 20.0, 21.0], 95.0).unwrap_or_else(|| unreachable!());
        assert!(d.significant());
        assert_eq!(difference(&[1.0], &[2.0], 95.0).map(|d| d.half_width), Some(None));
        assert!(difference(&[], &[2.0], 95.0).is_none());
    }

    proptest! {
        #[test]
        fn swapping_negates(a in prop::collection::vec(0.0f64..100.0, 2..10), b in prop::collection::vec(0.0f64..100.0, 2..10)) {
            let x = difference(&a, &b, 95.0);
            let y = difference(&b, &a, 95.0);
            let (Some(x), Some(y)) = (x, y) else { return Err(TestCaseError::fail("none")) };
            prop_assert!((x.diff + y.diff).abs() < 1e-9);
            prop_assert_eq!(x.significant(), y.significant());
        }

        #[test]
        fn identical_samples_never_differ(a in prop::collection::vec(0.0f64..100.0, 2..10)) {
            let d = difference(&a, &a, 99.0);
            prop_assert!(d.is_some_and(|d| !d.significant()));
        }
    }
}
