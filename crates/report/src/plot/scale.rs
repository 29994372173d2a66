//! Axes: map data to pixels, choose "nice" ticks (1, 2, 5 × 10ⁿ on linear axes, powers of
//! two on log-2 axes) and label them.

/// How values are spaced along an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleKind {
    /// Evenly.
    Linear,
    /// By powers of two (sizes: message, buffer, window); values ≤ 0 cannot be shown.
    Log2,
    /// By powers of ten (latencies with long tails); values ≤ 0 cannot be shown.
    Log10,
}

/// How tick labels are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickFormat {
    /// Decimal numbers, `k`/`M` past ten thousand.
    Number,
    /// Byte sizes in binary multiples: `512`, `1K`, `64K`, `1M`.
    Bytes,
    /// Fractions 0–1 shown as percent.
    Percent,
}

/// One axis: its kind, data range after rounding to ticks, and the ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Scale {
    /// Spacing.
    pub kind: ScaleKind,
    /// Smallest value on the axis.
    pub lo: f64,
    /// Largest value on the axis.
    pub hi: f64,
    /// Tick positions (data units) and labels.
    pub ticks: Vec<(f64, String)>,
}

impl Scale {
    /// An axis covering `values` (non-finite values and, on log axes, values ≤ 0 ignored);
    /// `zero` forces a linear axis to include 0.
    pub fn fit(kind: ScaleKind, values: &[f64], zero: bool, format: TickFormat) -> Scale {
        let usable: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && (kind == ScaleKind::Linear || *v > 0.0))
            .collect();
        let lo = usable.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = usable.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        match kind {
            ScaleKind::Linear => linear(lo, hi, zero, format),
            ScaleKind::Log2 => log2(lo, hi, format),
            ScaleKind::Log10 => log10(lo, hi, format),
        }
    }

    /// Position of `v` in 0–1 along the axis (outside 0–1 when outside the range).
    pub fn frac(&self, v: f64) -> f64 {
        let (a, b, x) = match self.kind {
            ScaleKind::Linear => (self.lo, self.hi, v),
            ScaleKind::Log2 => (self.lo.log2(), self.hi.log2(), v.max(f64::MIN_POSITIVE).log2()),
            ScaleKind::Log10 => (self.lo.log10(), self.hi.log10(), v.max(f64::MIN_POSITIVE).log10()),
        };
        if b > a {
            (x - a) / (b - a)
        } else {
            0.5
        }
    }

    /// Whether `v` can be drawn on this axis.
    pub fn shows(&self, v: f64) -> bool {
        v.is_finite() && (self.kind == ScaleKind::Linear || v > 0.0)
    }
}

fn linear(lo: f64, hi: f64, zero: bool, format: TickFormat) -> Scale {
    let (mut lo, mut hi) = if lo.is_finite() && hi.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    if zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
        lo = if zero && lo >= 0.0 { 0.0 } else { lo - pad };
        hi += pad;
    }
    let step = nice_step((hi - lo) / 5.0);
    let lo = (lo / step).floor() * step;
    let hi = (hi / step).ceil() * step;
    let n = ((hi - lo) / step).round() as i64;
    let ticks = (0..=n.clamp(0, 50))
        .map(|i| {
            let v = lo + i as f64 * step;
            (v, label(v, step, format))
        })
        .collect();
    Scale { kind: ScaleKind::Linear, lo, hi, ticks }
}

fn log2(lo: f64, hi: f64, format: TickFormat) -> Scale {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() { (lo, hi) } else { (1.0, 2.0) };
    let (mut a, mut b) = (lo.log2().floor() as i32, hi.log2().ceil() as i32);
    if a == b {
        a -= 1;
        b += 1;
    }
    let every = ((b - a) as f64 / 10.0).ceil().max(1.0) as i32;
    let ticks = (a..=b)
        .filter(|e| (e - a) % every == 0)
        .map(|e| {
            let v = 2f64.powi(e);
            (v, label(v, v, format))
        })
        .collect();
    Scale { kind: ScaleKind::Log2, lo: 2f64.powi(a), hi: 2f64.powi(b), ticks }
}

fn log10(lo: f64, hi: f64, format: TickFormat) -> Scale {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() { (lo, hi) } else { (1.0, 10.0) };
    let (mut a, mut b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    if a == b {
        a -= 1;
        b += 1;
    }
    // With few decades, 2 and 5 times each power of ten are ticked too.
    let mults: &[f64] = if b - a <= 3 { &[1.0, 2.0, 5.0] } else { &[1.0] };
    let mut ticks = Vec::new();
    for e in a..=b {
        for m in mults {
            let v = m * 10f64.powi(e);
            if v <= 10f64.powi(b) * 1.0001 {
                ticks.push((v, label(v, v, format)));
            }
        }
    }
    Scale { kind: ScaleKind::Log10, lo: 10f64.powi(a), hi: 10f64.powi(b), ticks }
}

/// The 1, 2, 5 × 10ⁿ step nearest above `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if !raw.is_finite() || raw <= 0.0 {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let r = raw / mag;
    let nice = if r <= 1.0 {
        1.0
    } else if r <= 2.0 {
        2.0
    } else if r <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// A tick label for `v` on an axis whose ticks are `step` apart.
pub fn label(v: f64, step: f64, format: TickFormat) -> String {
    match format {
        TickFormat::Bytes => size(v),
        TickFormat::Percent => number(v * 100.0, step * 100.0) + "%",
        TickFormat::Number if v.abs() >= 1e4 && step >= 100.0 => {
            let (d, suffix) = if v.abs() >= 1e6 { (1e6, "M") } else { (1e3, "k") };
            number(v / d, step / d) + suffix
        }
        TickFormat::Number => number(v, step),
    }
}

fn number(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 { 0 } else { (-step.log10().floor()) as usize };
    let s = format!("{:.*}", decimals.min(6), v);
    if s.starts_with('-') && s.trim_start_matches(['-', '0', '.']).is_empty() {
        s.trim_start_matches('-').to_string()
    } else {
        s
    }
}

/// A byte size in binary multiples: `0`, `512`, `1K`, `1.5K`, `64K`, `1M`, `2G`.
pub fn size(v: f64) -> String {
    const UNITS: [&str; 4] = ["", "K", "M", "G"];
    let mut x = v;
    let mut i = 0;
    while x.abs() >= 1024.0 && i + 1 < UNITS.len() {
        x /= 1024.0;
        i += 1;
    }
    let s = if (x - x.round()).abs() < 1e-9 { format!("{}", x.round()) } else { format!("{x:.1}") };
    format!("{s}{}", UNITS[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(0.9), 1.0);
        assert_eq!(nice_step(1.3), 2.0);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(7.0), 10.0);
        assert_eq!(nice_step(230.0), 500.0);
        assert_eq!(nice_step(0.0), 1.0);
    }

    #[test]
    fn linear_axis_rounds_out_and_includes_zero() {
        let s = Scale::fit(ScaleKind::Linear, &[3.2, 17.9], true, TickFormat::Number);
        assert_eq!((s.lo, s.hi), (0.0, 20.0));
        let labels: Vec<&str> = s.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0", "5", "10", "15", "20"]);
    }

    #[test]
    fn small_and_large_numbers_label_compactly() {
        let s = Scale::fit(ScaleKind::Linear, &[0.0, 0.42], true, TickFormat::Number);
        assert_eq!(s.ticks[1].1, "0.1");
        let s = Scale::fit(ScaleKind::Linear, &[0.0, 180_000.0], true, TickFormat::Number);
        assert_eq!(s.ticks.last().map(|t| t.1.as_str()), Some("200k"));
        let s = Scale::fit(ScaleKind::Linear, &[0.0, 1.0], true, TickFormat::Percent);
        assert_eq!(s.ticks.last().map(|t| t.1.as_str()), Some("100%"));
    }

    #[test]
    fn degenerate_ranges_still_make_an_axis() {
        for values in [&[][..], &[5.0][..], &[f64::NAN][..], &[0.0, 0.0][..]] {
            let s = Scale::fit(ScaleKind::Linear, values, false, TickFormat::Number);
            assert!(s.hi > s.lo && s.ticks.len() >= 2, "{values:?} -> {s:?}");
        }
        let s = Scale::fit(ScaleKind::Log2, &[0.0, -1.0], false, TickFormat::Bytes);
        assert!(s.hi > s.lo);
    }

    #[test]
    fn log2_axis_uses_powers_of_two_and_thins_them() {
        let s = Scale::fit(ScaleKind::Log2, &[1.0, 65536.0], false, TickFormat::Bytes);
        assert_eq!((s.lo, s.hi), (1.0, 65536.0));
        let labels: Vec<&str> = s.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["1", "4", "16", "64", "256", "1K", "4K", "16K", "64K"]);
        assert!((s.frac(256.0) - 0.5).abs() < 1e-12);
        let s = Scale::fit(ScaleKind::Log2, &[4096.0, 52428.0], false, TickFormat::Bytes);
        assert_eq!(s.ticks.first().map(|t| t.1.as_str()), Some("4K"));
        assert_eq!(s.ticks.last().map(|t| t.1.as_str()), Some("64K"));
    }

    #[test]
    fn log10_axis_ticks_decades_and_their_halves() {
        let s = Scale::fit(ScaleKind::Log10, &[4.6, 137_000.0], false, TickFormat::Number);
        let labels: Vec<&str> = s.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["1", "10", "100", "1000", "10k", "100k", "1M"]);
        let s = Scale::fit(ScaleKind::Log10, &[20.0, 300.0], false, TickFormat::Number);
        let labels: Vec<&str> = s.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["10", "20", "50", "100", "200", "500", "1000"]);
        assert!((s.frac(100.0) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn sizes() {
        assert_eq!(size(0.0), "0");
        assert_eq!(size(1536.0), "1.5K");
        assert_eq!(size(65536.0), "64K");
        assert_eq!(size(1048576.0), "1M");
    }
}
