//! Numbers in evidence and advice lines: rates in decimal bits, sizes in decimal bytes (the
//! units of the BDP tables in theory.md), times in µs or ms.

/// `941 Mbit/s`, `19.8 Gbit/s`.
pub(crate) fn rate(bps: f64) -> String {
    scaled(bps, &["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"])
}

/// `2.13 MB`, `4.10 kB`.
pub(crate) fn size(bytes: f64) -> String {
    scaled(bytes, &["B", "kB", "MB", "GB", "TB"])
}

/// `45 µs`, `170 ms`.
pub(crate) fn micros(us: f64) -> String {
    if us >= 1000.0 {
        format!("{} ms", sig3(us / 1000.0))
    } else {
        format!("{} µs", sig3(us))
    }
}

/// `93%`.
pub(crate) fn pct(frac: f64) -> String {
    format!("{:.0}%", frac * 100.0)
}

fn scaled(v: f64, units: &[&str]) -> String {
    let mut v = if v.is_finite() { v.max(0.0) } else { 0.0 };
    let mut i = 0;
    while v >= 1000.0 && i + 1 < units.len() {
        v /= 1000.0;
        i += 1;
    }
    format!("{} {}", sig3(v), units.get(i).copied().unwrap_or(""))
}

fn sig3(v: f64) -> String {
    if v >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales() {
        assert_eq!(rate(941.48e6), "941 Mbit/s");
        assert_eq!(size(21.25e6), "21.2 MB");
        assert_eq!(micros(170_000.0), "170 ms");
        assert_eq!(micros(45.0), "45 µs");
        assert_eq!(pct(0.934), "93%");
    }
}
