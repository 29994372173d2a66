//! Quantities for people, shared by every renderer of tcplab, in the units tcplab reads
//! (README "Units"): rates in decimal bits (`19.8 Gbit/s`, k/M/G = 1000), sizes in binary
//! bytes (`20.3 MiB`, K/M/G = 1024, named KiB/MiB/GiB so they cannot be misread), times in
//! µs, ms or s, all to three significant digits.

/// Three significant digits (at least the integer part): `941`, `21.2`, `7.00`.
/// Decided on the value as rounded, so 9.996 is `10.0`, not `10.00`, and 99.97 is `100`.
pub fn sig3(v: f64) -> String {
    if v >= 99.95 {
        format!("{v:.0}")
    } else if v >= 9.995 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `950 bit/s`, `339 kbit/s`, `941 Mbit/s`, `19.8 Gbit/s` (SI prefixes: k is lower case).
pub fn rate(bps: f64) -> String {
    scaled(bps, &["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"])
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
    // A value that would print as `1000` (or `1024`) moves up a unit: `1.00 Mbit/s`.
    while v >= step - 0.5 && i + 1 < units.len() {
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

    #[test]
    fn the_digits_are_chosen_after_rounding() {
        assert_eq!(sig3(9.996), "10.0", "three digits, not 10.00");
        assert_eq!(sig3(9.994), "9.99");
        assert_eq!(sig3(99.97), "100");
        assert_eq!(rate(9.996e6), "10.0 Mbit/s");
        assert_eq!(rate(999.7e3), "1.00 Mbit/s", "not 1000 kbit/s");
        assert_eq!(rate(339e3), "339 kbit/s");
        assert_eq!(size(1023.7 * 1024.0), "1.00 MiB");
    }
}
