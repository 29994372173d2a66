//! Value parsers for the command line: sizes with K/M/G suffixes (binary, as iperf3) and
//! durations in seconds.

/// `128K` → 131072; `1M`, `2G`, `64KiB`, plain bytes. Must fit in a u32.
pub fn size_u32(s: &str) -> Result<u32, String> {
    let v = size_u64(s)?;
    u32::try_from(v).map_err(|_| format!("'{s}' is too large (at most 4G)"))
}

/// Like [`size_u32`] but up to u64.
pub fn size_u64(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits);
    let mult: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => return Err(format!("unknown size suffix '{other}' in '{s}' (use K, M, G)")),
    };
    let n: f64 = num.parse().map_err(|_| format!("'{s}' is not a size (e.g. 128K, 1M)"))?;
    let v = n * mult as f64;
    if !v.is_finite() || v < 0.0 || v > u64::MAX as f64 {
        return Err(format!("'{s}' is out of range"));
    }
    Ok(v.round() as u64)
}

/// Seconds (fractions allowed) → milliseconds.
pub fn seconds_ms(s: &str) -> Result<u64, String> {
    let v: f64 =
        s.trim().trim_end_matches('s').parse().map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(0.0..=1.0e7).contains(&v) {
        return Err(format!("'{s}' is out of range"));
    }
    Ok((v * 1000.0).round() as u64)
}

/// Bit rates, decimal as iperf3's `-b`: `100M` → 10⁸ bit/s, `1.5G`, `64k`, `0` (unlimited).
pub fn rate_bps(s: &str) -> Result<u64, String> {
    let t = s.trim().trim_end_matches("bit/s").trim_end_matches("bps");
    let digits = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits);
    let mult = match suffix.trim().to_ascii_lowercase().as_str() {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        other => return Err(format!("unknown rate suffix '{other}' in '{s}' (use K, M, G: bit/s)")),
    };
    let n: f64 = num.parse().map_err(|_| format!("'{s}' is not a bit rate (e.g. 100M, 1G, 0)"))?;
    let v = n * mult;
    if !v.is_finite() || !(0.0..=1e15).contains(&v) {
        return Err(format!("'{s}' is out of range"));
    }
    Ok(v.round() as u64)
}

/// `REQ,RESP` sizes for rr tests.
pub fn rr_sizes(s: &str) -> Result<(u32, u32), String> {
    let (a, b) = s.split_once(',').unwrap_or((s, s));
    Ok((size_u32(a)?, size_u32(b)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_decimal() {
        assert_eq!(rate_bps("100M"), Ok(100_000_000));
        assert_eq!(rate_bps("1.5g"), Ok(1_500_000_000));
        assert_eq!(rate_bps("0"), Ok(0));
        assert_eq!(rate_bps("64k"), Ok(64_000));
        assert!(rate_bps("fast").is_err());
        assert!(rate_bps("10X").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(size_u32("128K"), Ok(131_072));
        assert_eq!(size_u32("1m"), Ok(1 << 20));
        assert_eq!(size_u32("64KiB"), Ok(65_536));
        assert_eq!(size_u32("1.5K"), Ok(1536));
        assert_eq!(size_u32("100"), Ok(100));
        assert!(size_u32("5G").is_err());
        assert!(size_u32("12Q").is_err());
        assert!(size_u32("").is_err());
        assert!(size_u32("-1").is_err());
        assert_eq!(size_u64("5G"), Ok(5 << 30));
    }

    #[test]
    fn seconds_and_pairs() {
        assert_eq!(seconds_ms("10"), Ok(10_000));
        assert_eq!(seconds_ms("0.5"), Ok(500));
        assert!(seconds_ms("ten").is_err());
        assert!(seconds_ms("-3").is_err());
        assert_eq!(rr_sizes("64,128"), Ok((64, 128)));
        assert_eq!(rr_sizes("100"), Ok((100, 100)));
        assert!(rr_sizes("1,x").is_err());
    }
}
