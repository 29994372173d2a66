//! Student's t distribution for any (real, positive) degrees of freedom: the CDF through the
//! regularised incomplete beta function, quantiles by bisection on it. Replaces netperf's
//! 30-row, two-level table (measurement-methods.md §1.4), which the tests keep as known answers.

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, nine terms; ~15 digits).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + G + 0.5;
    let sum = C.iter().enumerate().skip(1).fold(C[0], |acc, (i, c)| acc + c / (x + i as f64));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// Continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    d = 1.0 / if d.abs() < TINY { TINY } else { d };
    let mut h = d;
    for m in 1..=2_000_000u32 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        for aa in
            [m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))]
        {
            d = 1.0 + aa * d;
            d = 1.0 / if d.abs() < TINY { TINY } else { d };
            c = 1.0 + aa / c;
            if c.abs() < TINY {
                c = TINY;
            }
            h *= d * c;
            if (d * c - 1.0).abs() < EPS && aa < 0.0 {
                return h;
            }
        }
    }
    h
}

/// Regularised incomplete beta function I_x(a, b), for a, b > 0 and 0 ≤ x ≤ 1.
pub fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// P(|T| > t) for t ≥ 0 and `df` degrees of freedom.
pub fn two_sided_tail(t: f64, df: f64) -> f64 {
    let t = t.abs();
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// P(T ≤ t).
pub fn cdf(t: f64, df: f64) -> f64 {
    let tail = two_sided_tail(t, df) / 2.0;
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The two-sided quantile: the t with P(|T| ≤ t) = `level` (0 < level < 1), e.g.
/// `two_sided(0.99, 2.0)` = 9.925. `None` for a level outside (0, 1) or df ≤ 0 / not finite.
pub fn two_sided(level: f64, df: f64) -> Option<f64> {
    if !(level > 0.0 && level < 1.0 && df > 0.0 && df.is_finite()) {
        return None;
    }
    let alpha = 1.0 - level;
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while two_sided_tail(hi, df) > alpha {
        lo = hi;
        hi *= 2.0;
        if hi > 1e300 {
            return None;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if two_sided_tail(mid, df) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-13 * hi {
            break;
        }
    }
    Some(0.5 * (lo + hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// netperf's `confid()` table (src/netlib.c), df 1…30, 95 % and 99 %, three decimals.
    const NETPERF: [(f64, f64); 30] = [
        (12.706, 63.657),
        (4.303, 9.925),
        (3.182, 5.841),
        (2.776, 4.604),
        (2.571, 4.032),
        (2.447, 3.707),
        (2.365, 3.499),
        (2.306, 3.355),
        (2.262, 3.250),
        (2.228, 3.169),
        (2.201, 3.106),
        (2.179, 3.055),
        (2.160, 3.012),
        (2.145, 2.977),
        (2.131, 2.947),
        (2.120, 2.921),
        (2.110, 2.898),
        (2.101, 2.878),
        (2.093, 2.861),
        (2.086, 2.845),
        (2.080, 2.831),
        (2.074, 2.819),
        (2.069, 2.807),
        (2.064, 2.797),
        (2.060, 2.787),
        (2.056, 2.779),
        (2.052, 2.771),
        (2.048, 2.763),
        (2.045, 2.756),
        (2.042, 2.750),
    ];

    fn q(level: f64, df: f64) -> f64 {
        two_sided(level, df).unwrap_or(f64::NAN)
    }

    #[test]
    fn matches_the_netperf_table() {
        for (i, (t95, t99)) in NETPERF.iter().enumerate() {
            let df = i as f64 + 1.0;
            assert!((q(0.95, df) - t95).abs() < 6e-4, "95% df {df}: {}", q(0.95, df));
            assert!((q(0.99, df) - t99).abs() < 6e-4, "99% df {df}: {}", q(0.99, df));
        }
    }

    #[test]
    fn matches_published_values_beyond_the_table() {
        // Standard t tables (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2) and the normal limit.
        let cases = [
            (0.90, 1.0, 6.314),
            (0.90, 10.0, 1.812),
            (0.95, 40.0, 2.021),
            (0.95, 60.0, 2.000),
            (0.95, 100.0, 1.984),
            (0.99, 100.0, 2.626),
            (0.999, 10.0, 4.587),
            (0.80, 5.0, 1.476),
            (0.95, 1e6, 1.960),
            (0.99, 1e6, 2.576),
        ];
        for (level, df, want) in cases {
            assert!((q(level, df) - want).abs() < 6e-4, "{level} df {df}: {}", q(level, df));
        }
        // Closed forms: df 1 is Cauchy, t = tan(π·level/2); df 2 gives t = p·√(2 / (1 − p²)).
        assert!((q(0.5, 1.0) - 1.0).abs() < 1e-9);
        let p: f64 = 0.9;
        assert!((q(p, 2.0) - (2.0 * p * p / (1.0 - p * p)).sqrt()).abs() < 1e-9);
    }

    #[test]
    fn rejects_nonsense() {
        assert_eq!(two_sided(1.0, 3.0), None);
        assert_eq!(two_sided(0.0, 3.0), None);
        assert_eq!(two_sided(0.95, 0.0), None);
        assert_eq!(two_sided(f64::NAN, 3.0), None);
        assert_eq!(two_sided(0.95, f64::INFINITY), None);
    }

    proptest! {
        #[test]
        fn quantile_inverts_the_cdf(level in 0.5f64..0.9999, df in 0.5f64..500.0) {
            let t = q(level, df);
            prop_assert!((cdf(t, df) - cdf(-t, df) - level).abs() < 1e-9);
        }

        #[test]
        fn quantile_grows_with_level_and_falls_with_df(level in 0.5f64..0.99, df in 1.0f64..200.0) {
            prop_assert!(q(level + 0.005, df) > q(level, df));
            prop_assert!(q(level, df + 1.0) < q(level, df));
        }

        #[test]
        fn cdf_is_symmetric_and_bounded(t in -50.0f64..50.0, df in 0.5f64..1000.0) {
            let (a, b) = (cdf(t, df), cdf(-t, df));
            prop_assert!((0.0..=1.0).contains(&a));
            prop_assert!((a + b - 1.0).abs() < 1e-12);
        }
    }
}
