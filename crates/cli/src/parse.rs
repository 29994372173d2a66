//! Value parsers for the command line: sizes with K/M/G suffixes (binary, as iperf3) and
//! durations in seconds.

/// `-A N[,M]`: the client's CPU and optionally the server's; `,M` pins the server only.
pub fn affinity(s: &str) -> Result<(Option<u32>, Option<u32>), String> {
    let cpu = |v: &str| -> Result<Option<u32>, String> {
        if v.is_empty() {
            return Ok(None);
        }
        v.parse::<u32>().map(Some).map_err(|_| format!("'{v}' is not a CPU number"))
    };
    let (local, remote) = match s.split_once(',') {
        Some((l, r)) => (cpu(l)?, cpu(r)?),
        None => (cpu(s)?, None),
    };
    if local.is_none() && remote.is_none() {
        return Err("expected N, N,M or ,M".into());
    }
    Ok((local, remote))
}

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

/// A duration with a unit: `170ms`, `0.17s`, `45us` (or `µs`), `1m` is refused as ambiguous.
pub fn duration(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        _ => return Err(format!("'{s}' needs a unit: e.g. 170ms, 0.17s, 45us")),
    };
    let v: f64 = num.parse().map_err(|_| format!("'{s}' is not a duration (e.g. 170ms)"))?;
    let secs = v * scale;
    if !(secs.is_finite() && secs > 0.0 && secs <= 1.0e6) {
        return Err(format!("'{s}' is out of range (more than 0, at most 10^6 s)"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// Message sizes: a list `1,40,48`, a doubling range `1..65536:x2`, or a stepped range
/// `64..40000:+64`. Sizes take K/M suffixes. At most [`MAX_SIZES`] values.
pub fn size_list(s: &str) -> Result<Vec<u64>, String> {
    let t = s.trim();
    let Some((from, rest)) = t.split_once("..") else {
        return t.split(',').map(|v| positive(size_u64(v)?, v)).collect();
    };
    let (to, step) = rest.split_once(':').unwrap_or((rest, "x2"));
    let (from, to) = (positive(size_u64(from)?, from)?, size_u64(to)?);
    if to < from {
        return Err(format!("'{s}': the range ends before it starts"));
    }
    let next: Box<dyn Fn(u64) -> Option<u64>> = match (step.strip_prefix('x'), step.strip_prefix('+')) {
        (Some(f), _) => {
            let f: u64 =
                f.parse().ok().filter(|f| *f >= 2).ok_or(format!("'{step}': factor must be x2 or more"))?;
            Box::new(move |v| v.checked_mul(f))
        }
        (_, Some(d)) => {
            let d = positive(size_u64(d)?, d)?;
            Box::new(move |v| v.checked_add(d))
        }
        _ => return Err(format!("'{step}': step must be xFACTOR or +BYTES")),
    };
    let mut out = Vec::new();
    let mut v = Some(from);
    while let Some(x) = v.filter(|x| *x <= to) {
        if out.len() >= MAX_SIZES {
            return Err(format!("'{s}' gives more than {MAX_SIZES} sizes"));
        }
        out.push(x);
        v = next(x);
    }
    Ok(out)
}

/// Most message sizes one curve may have.
pub const MAX_SIZES: usize = 10_000;

fn positive(v: u64, text: &str) -> Result<u64, String> {
    if v == 0 {
        Err(format!("'{text}': sizes start at 1 byte"))
    } else {
        Ok(v)
    }
}

/// `LEVEL,WIDTH` of `-I` in %: level in (50, 100), width in (0, 200]; WIDTH defaults to 5.
pub fn confidence(s: &str) -> Result<(f64, f64), String> {
    let (l, w) = s.split_once(',').unwrap_or((s, "5"));
    let num = |t: &str| {
        t.trim().parse::<f64>().map_err(|_| format!("'{t}' is not a number (use LEVEL,WIDTH, e.g. 99,5)"))
    };
    let (level, width) = (num(l)?, num(w)?);
    if !(level > 50.0 && level < 100.0) {
        return Err(format!("confidence level {level} must lie between 50 and 100 (e.g. 95 or 99)"));
    }
    if !(width > 0.0 && width <= 200.0) {
        return Err(format!("interval width {width} % must lie in (0, 200]"));
    }
    Ok((level, width))
}

/// `MAX,MIN` of `--iterations` (netperf -i order); MIN defaults to 3.
pub fn iterations(s: &str) -> Result<(u32, u32), String> {
    let (a, b) = s.split_once(',').unwrap_or((s, "3"));
    let num = |t: &str| {
        t.trim().parse::<u32>().map_err(|_| format!("'{t}' is not a count (use MAX,MIN, e.g. 10,3)"))
    };
    Ok((num(a)?, num(b)?))
}

/// A test type by command or id (`udp`, `udp-stream`), as the registry names them.
pub fn test_kind(s: &str) -> Result<results::TestKind, String> {
    engine::registry::by_name(s.trim())
        .map(|t| t.kind())
        .ok_or_else(|| format!("unknown test type '{s}' (known: {})", engine::registry::names().join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinities() {
        assert_eq!(affinity("1"), Ok((Some(1), None)));
        assert_eq!(affinity("0,1"), Ok((Some(0), Some(1))));
        assert_eq!(affinity(",1"), Ok((None, Some(1))));
        assert!(affinity(",").is_err());
        assert!(affinity("x").is_err());
        assert!(affinity("1,2,3").is_err());
    }

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

    #[test]
    fn durations_need_units() {
        assert_eq!(duration("170ms"), Ok(std::time::Duration::from_millis(170)));
        assert_eq!(duration("45us"), Ok(std::time::Duration::from_micros(45)));
        assert_eq!(duration("0.5s"), Ok(std::time::Duration::from_millis(500)));
        for bad in ["170", "0ms", "-1s", "xms", "1m"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn size_ranges_and_lists() {
        assert_eq!(size_list("1..16:x2"), Ok(vec![1, 2, 4, 8, 16]));
        assert_eq!(size_list("1..65536").map(|v| v.len()), Ok(17));
        assert_eq!(size_list("64..200:+64"), Ok(vec![64, 128, 192]));
        assert_eq!(size_list("1,40,1K"), Ok(vec![1, 40, 1024]));
        for bad in ["0..8", "8..1", "1..8:x1", "1..8:y", "1..100000:+1", "1,,2"] {
            assert!(size_list(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn confidence_and_iterations() {
        assert_eq!(confidence("99,5"), Ok((99.0, 5.0)));
        assert_eq!(confidence("95"), Ok((95.0, 5.0)));
        assert!(confidence("100,5").is_err());
        assert!(confidence("99,0").is_err());
        assert!(confidence("x,1").is_err());
        assert_eq!(iterations("10,3"), Ok((10, 3)));
        assert_eq!(iterations("7"), Ok((7, 3)));
        assert!(iterations("-1,2").is_err());
    }
}
