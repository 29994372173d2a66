//! Quantities for people, shared by every renderer of tcplab, in the units tcplab reads
//! (README "Units"): rates in decimal bits (`19.8 Gbit/s`, k/M/G = 1000), sizes in binary
//! bytes (`20.3 MiB`, K/M/G = 1024, named KiB/MiB/GiB so they cannot be misread), times in
//! µs, ms or s, all to three significant digits.

/// Three significant digits (at least the integer part): `941`, `21.2`, `7.00`.
pub fn sig3(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `950 bit/s`, `941 Mbit/s`, `19.8 Gbit/s`.
pub fn rate(bps: f64) -> String {
    scaled(bps, &["bit/s", "Kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"])
}

/// `512 B`, `4.00 KiB`, `20.3 MiB` (powers of 1024); whole bytes below 1 KiB.
pub fn size(bytes: f64) -> String {
    let b = if bytes.is_finite() { bytes.max(0.0) } else { 0.0 };
    if b < 1024.0 {
        return format!("{b:.0} B");
    }
    scaled_by(b, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB"])
}

/// `45.2 µs`, `1.20 ms`, `2.50 s`; `0 µs` for anything not positive.
pub fn micros(us: f64) -> String {
    if !us.is_finite() || us <= 0.0 {
        return "0 µs".into();
    }
    if us < 1000.0 {
        format!("{} µs", sig3(us))
    } else if us < 1.0e6 {
        format!("{} ms", sig3(us / 1000.0))
    } else {
        format!("{} s", sig3(us / 1.0e6))
    }
}

fn scaled(v: f64, units: &[&str]) -> String {
    scaled_by(v, 1000.0, units)
}

fn scaled_by(v: f64, step: f64, units: &[&str]) -> String {
    let mut v = if v.is_finite() { v.max(0.0) } else { 0.0 };
    let mut i = 0;
    while v >= step && i + 1 < units.len() {
        v /= step;
        i += 1;
    }
    format!("{} {}", sig3(v), units.get(i).copied().unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales() {
        assert_eq!(rate(941.48e6), "941 Mbit/s");
        assert_eq!(rate(19_800_000_000.0), "19.8 Gbit/s");
        assert_eq!(rate(950.0), "950 bit/s");
        assert_eq!(rate(f64::NAN), "0.00 bit/s");
        assert_eq!(size(21.25e6), "20.3 MiB");
        assert_eq!(size(4096.0), "4.00 KiB");
        assert_eq!(size(512.0), "512 B");
        assert_eq!(size(512.0), "512 B");
        assert_eq!(micros(170_000.0), "170 ms");
        assert_eq!(micros(45.0), "45.0 µs");
        assert_eq!(micros(2.5e6), "2.50 s");
        assert_eq!(micros(-1.0), "0 µs");
        assert_eq!(sig3(7.0), "7.00");
    }
}
