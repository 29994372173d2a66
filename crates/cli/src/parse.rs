//! Value parsers for the command line. Sizes and rates are read by `model::units`, the one
//! reader of the tool, so a flag means what a path or link spec means: sizes in powers of
//! 1024 (`-l 8K` = 8192 bytes = `queue=8K`), rates in powers of 1000 (`-b 1M` = 10⁶ bit/s =
//! `rate=1mbit`). Durations too are read by `model::units`, one grammar (`0.5ms`, `90s`, `1m`,
//! `2h`, `7d`): a bare number is seconds where the flag took seconds (`-t 10`), and needs a unit
//! where it never had one (`--rtt 170ms`, like `delay=` in a path spec).

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

/// A size in bytes that fits in a u32: `128K` → 131072, `1M`, `64KiB`, plain bytes.
pub fn size_u32(s: &str) -> Result<u32, String> {
    let v = size_u64(s)?;
    u32::try_from(v).map_err(|_| format!("size {s:?} is too large (at most 4294967295 bytes, 4G - 1)"))
}

/// A size in bytes, read by [`model::units::parse_size`]: K, M, G, T (with or without `B` or
/// `iB`) are powers of 1024, as in every path spec.
pub fn size_u64(s: &str) -> Result<u64, String> {
    model::units::parse_size(s).map_err(|e| e.to_string())
}

/// A socket buffer size (`-w`, `--sndbuf` …), within the server's limit, so that the flag has
/// one limit (`'1G' is too large: at most 512M`).
pub fn buffer_size(s: &str) -> Result<u32, String> {
    size_at_most(s, engine::limits::Limits::default().max_buffer)
}

/// A write, read, request or response size (`-l`, `--recv-len`), within the server's limit.
pub fn message_size(s: &str) -> Result<u32, String> {
    size_at_most(s, engine::limits::Limits::default().max_len)
}

fn size_at_most(s: &str, max: u32) -> Result<u32, String> {
    let v = size_u64(s)?;
    if v == 0 {
        return Err(format!("'{s}' is too small: at least 1 byte"));
    }
    match u32::try_from(v) {
        Ok(v) if v <= max => Ok(v),
        _ => {
            let limit = results::setting::ValueKind::Bytes.write(&results::ParamValue::Int(max.into()));
            Err(format!("'{s}' is too large: at most {limit}"))
        }
    }
}

/// A duration in the one grammar ([`model::units::parse_duration`]: `10`, `0.5`, `90s`,
/// `500ms`, `1m`, `2h`), a bare number being seconds as `-t` always took, as milliseconds
/// (rounded to the nearest), at most 10⁷ s.
pub fn seconds_ms(s: &str) -> Result<u64, String> {
    let d = seconds(s)?;
    if d > std::time::Duration::from_secs(10_000_000) {
        return Err(format!("'{s}' is out of range (at most 10^7 s)"));
    }
    Ok(millis_rounded(d))
}

/// A duration of the one grammar, a bare number being seconds.
fn seconds(s: &str) -> Result<std::time::Duration, String> {
    if s.trim_start().starts_with('-') {
        return Err(format!("'{s}': seconds cannot be negative"));
    }
    model::units::parse_duration(s, model::units::BareNumber::Seconds).map_err(|e| e.to_string())
}

/// A whole number of seconds in the one duration grammar (`90`, `90s`, `2m`), from 1 to
/// 100,000 s: for flags whose consumer counts whole seconds (`tcplab study -t`).
pub fn whole_seconds(s: &str) -> Result<u64, String> {
    let d = seconds(s)?;
    if d.subsec_nanos() != 0 {
        return Err(format!("'{s}' is not a whole number of seconds"));
    }
    match d.as_secs() {
        n @ 1..=100_000 => Ok(n),
        _ => Err(format!("'{s}' is out of range (1 s to 100000 s)")),
    }
}

/// `d` in whole milliseconds, rounded to the nearest.
pub fn millis_rounded(d: std::time::Duration) -> u64 {
    let ms = d.as_nanos().saturating_add(500_000) / 1_000_000;
    u64::try_from(ms).unwrap_or(u64::MAX)
}

/// iperf3's `--cport PORT`: refused with what tcplab does instead.
pub fn no_cport(_: &str) -> Result<u16, String> {
    Err("tcplab does not pick the client's ports (the kernel does, one per connection); -B ADDR binds \
         the client's address, -p is the server's port"
        .to_string())
}

/// An age or a period (`24h`, `90m`, `7d`, `3600`): a duration of the one grammar, a bare
/// number being seconds, as milliseconds.
pub fn age_ms(s: &str) -> Result<u64, String> {
    seconds(s).map(millis_rounded)
}

/// A duration like [`age_ms`] (`90m`, `7d`, `30`), as a `Duration`.
pub fn age(s: &str) -> Result<std::time::Duration, String> {
    seconds(s)
}

/// An interval between rounds: a duration like [`age_ms`], more than 0.
pub fn interval(s: &str) -> Result<std::time::Duration, String> {
    match age(s)? {
        d if d.is_zero() => Err(format!("'{s}' must be more than 0")),
        d => Ok(d),
    }
}

/// A percentage from 0 to 1000: `10%` or `10`.
pub fn percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v: f64 = t
        .strip_suffix('%')
        .unwrap_or(t)
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage (e.g. 10%)"))?;
    if !(v.is_finite() && (0.0..=1000.0).contains(&v)) {
        return Err(format!("'{s}' is out of range (0 to 1000 %)"));
    }
    Ok(v)
}

/// A slowdown in % (`10%` or `10`): at least 0 and less than 100, since nothing gets more than
/// 100 % slower.
pub fn slowdown_pct(s: &str) -> Result<f64, String> {
    let v = percent(s)?;
    if v >= 100.0 {
        return Err(format!(
            "'{s}' is out of range: a slowdown is under 100 % (100 % slower is a rate of 0)"
        ));
    }
    Ok(v)
}

/// A confidence level in %, more than 0 and less than 100.
pub fn level_pct(s: &str) -> Result<f64, String> {
    let v = percent(s)?;
    if !(v > 0.0 && v < 100.0) {
        return Err(format!("'{s}' must lie between 0 and 100 %"));
    }
    Ok(v)
}

/// A bit rate, read by [`model::BitRate::parse`]: k, M, G, T are powers of 1000 as in
/// iperf3's `-b` (`100M` → 10⁸ bit/s, `1.5G`, `64k`, `100mbit`); `0` (unlimited) allowed.
pub fn rate_bps(s: &str) -> Result<u64, String> {
    model::BitRate::parse(s).map(|rate| rate.0).map_err(|e| e.to_string())
}

/// `REQ,RESP` sizes for rr tests.
pub fn rr_sizes(s: &str) -> Result<(u32, u32), String> {
    let (a, b) = s.split_once(',').unwrap_or((s, s));
    Ok((message_size(a)?, message_size(b)?))
}

/// A duration that needs a unit (`170ms`, `0.17s`, `45us`, `1m` = a minute), of the one
/// grammar, more than 0 and at most 10⁶ s.
pub fn duration(s: &str) -> Result<std::time::Duration, String> {
    let d =
        model::units::parse_duration(s, model::units::BareNumber::NeedsUnit).map_err(|e| e.to_string())?;
    if d.is_zero() || d > std::time::Duration::from_secs(1_000_000) {
        return Err(format!("'{s}' is out of range (more than 0, at most 10^6 s)"));
    }
    Ok(d)
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

/// `HOST[:PORT]` (`[V6]:PORT` for an IPv6 address with a port): the host and the port, if
/// given.
pub fn host_port(s: &str) -> Result<(String, Option<u16>), String> {
    let port =
        |p: &str| p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| format!("'{p}' is not a port"));
    if let Some(rest) = s.strip_prefix('[') {
        let (host, tail) = rest.split_once(']').ok_or_else(|| format!("'{s}': missing ']'"))?;
        return match tail.strip_prefix(':') {
            Some(p) => Ok((host.to_string(), Some(port(p)?))),
            None if tail.is_empty() => Ok((host.to_string(), None)),
            None => Err(format!("'{s}' is not HOST[:PORT]")),
        };
    }
    match s.split_once(':') {
        _ if s.is_empty() => Err("empty host".into()),
        // Two colons or more: a bare IPv6 address.
        Some((_, rest)) if rest.contains(':') => Ok((s.to_string(), None)),
        Some((host, p)) if !host.is_empty() => Ok((host.to_string(), Some(port(p)?))),
        Some(_) => Err(format!("'{s}' has no host")),
        None => Ok((s.to_string(), None)),
    }
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
    fn hosts_with_and_without_ports() {
        assert_eq!(host_port("a"), Ok(("a".into(), None)));
        assert_eq!(host_port("198.18.0.1:9181"), Ok(("198.18.0.1".into(), Some(9181))));
        assert_eq!(host_port("[::1]:7"), Ok(("::1".into(), Some(7))));
        assert_eq!(host_port("::1"), Ok(("::1".into(), None)));
        assert!(host_port("a:0").is_err());
        assert!(host_port("a:x").is_err());
        assert!(host_port(":9").is_err());
        assert!(host_port("").is_err());
    }

    #[test]
    fn percentages() {
        assert_eq!(percent("10%"), Ok(10.0));
        assert_eq!(percent(" 2.5 "), Ok(2.5));
        assert!(percent("x%").is_err() && percent("-1").is_err() && percent("NaN").is_err());
        assert_eq!(level_pct("99"), Ok(99.0));
        assert_eq!(interval("2s"), Ok(std::time::Duration::from_secs(2)));
        assert!(interval("0").is_err() && interval("1w").is_err());
        assert!(level_pct("100").is_err() && level_pct("0").is_err());
    }

    #[test]
    fn ages_take_s_m_h_d() {
        assert_eq!(age_ms("24h"), Ok(86_400_000));
        assert_eq!(age_ms("90m"), Ok(5_400_000));
        assert_eq!(age_ms("7d"), Ok(604_800_000));
        assert_eq!(age_ms("3600"), Ok(3_600_000));
        assert_eq!(age_ms("1.5s"), Ok(1500));
        assert_eq!(age_ms("1m"), Ok(60_000));
        assert!(
            age_ms("2w").is_err() && age_ms("h").is_err() && age_ms("-1h").is_err() && age_ms("").is_err()
        );
    }

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
        assert_eq!(rate_bps("64K"), Ok(64_000));
        assert_eq!(rate_bps("100mbit"), Ok(100_000_000));
        assert_eq!(rate_bps("100Mbit/s"), Ok(100_000_000));
        assert!(rate_bps("fast").is_err());
        assert!(rate_bps("10X").is_err());
        assert!(rate_bps("100Mbps").is_err(), "bps is ambiguous, as in path specs");
        assert!(rate_bps("1.5").is_err(), "no fractions of a bit/s");
        assert_eq!(rate_bps("-1M"), Err("invalid rate \"-1M\": negative".into()));
    }

    #[test]
    fn sizes() {
        assert_eq!(size_u32("128K"), Ok(131_072));
        assert_eq!(size_u32("1m"), Ok(1 << 20));
        assert_eq!(size_u32("64KiB"), Ok(65_536));
        assert_eq!(size_u32("64KB"), Ok(65_536));
        assert_eq!(size_u32("1.5K"), Ok(1536));
        assert_eq!(size_u32("100"), Ok(100));
        assert_eq!(size_u32("4294967295"), Ok(u32::MAX));
        assert_eq!(size_u32("4G"), Err("size \"4G\" is too large (at most 4294967295 bytes, 4G - 1)".into()));
        assert!(size_u32("5G").is_err());
        assert!(size_u32("12Q").is_err());
        assert!(size_u32("").is_err());
        assert!(size_u32("-1").is_err());
        assert_eq!(size_u32("1.3K"), Err("invalid size \"1.3K\": not a whole number of bytes".into()));
        assert_eq!(size_u64("5G"), Ok(5 << 30));
        assert!(size_u64("nan").is_err());
        assert!(size_u64("99999999999T").is_err());
    }

    /// The flags and the path spec read one convention: `-l 8K` and `queue=8K` are the same
    /// bytes, `-b 1M` and `rate=1mbit` or `rate=1M` the same bit/s.
    #[test]
    fn flags_and_path_specs_agree() {
        use clap::Parser;
        let argv = ["tcplab", "udp", "-b", "1M", "-l", "8K", "--path", "rate=1mbit,up:rate=1M,queue=8K"];
        let cli = crate::args::Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{e}"));
        let crate::args::Command::Test(crate::args::measure::TestCommand::Udp(udp)) = cli.command else {
            panic!("not udp")
        };
        let spec = udp.path.path.as_deref().unwrap_or_default();
        let path = emu::PathConfig::parse(spec).unwrap_or_else(|e| panic!("{e}"));
        for link in [&path.up, &path.down] {
            assert_eq!(link.rate.map(|r| r.bits_per_sec()), Some(udp.rate));
            assert_eq!(link.queue, emu::QueueLimit::bytes(u64::from(udp.len)));
        }
        assert_eq!((udp.rate, udp.len), (1_000_000, 8192));
    }

    #[test]
    fn seconds_and_pairs() {
        assert_eq!(seconds_ms("10"), Ok(10_000));
        assert_eq!(seconds_ms("0.5"), Ok(500));
        assert!(seconds_ms("ten").is_err());
        assert!(seconds_ms("-3").is_err());
        assert_eq!(seconds_ms("10s"), Ok(10_000));
        assert_eq!(seconds_ms("500ms"), Ok(500), "one grammar: -t takes units too");
        assert_eq!(seconds_ms("2m"), Ok(120_000));
        assert_eq!(seconds_ms("0.0004"), Ok(0));
        assert!(seconds_ms("1e9").is_err() && seconds_ms("200d").is_err() && seconds_ms("10ss").is_err());
        assert_eq!(rr_sizes("64,128"), Ok((64, 128)));
        assert_eq!(rr_sizes("100"), Ok((100, 100)));
        assert!(rr_sizes("1,x").is_err());
    }

    #[test]
    fn whole_seconds_read_the_one_grammar() {
        assert_eq!(
            (whole_seconds("90"), whole_seconds("90s"), whole_seconds("2m")),
            (Ok(90), Ok(90), Ok(120))
        );
        assert!(whole_seconds("1500ms").is_err_and(|e| e.contains("whole number")));
        assert!(whole_seconds("0").is_err_and(|e| e.contains("out of range")));
        assert!(whole_seconds("2d").is_err() && whole_seconds("ten").is_err());
    }

    #[test]
    fn durations_need_units() {
        assert_eq!(duration("170ms"), Ok(std::time::Duration::from_millis(170)));
        assert_eq!(duration("45us"), Ok(std::time::Duration::from_micros(45)));
        assert_eq!(duration("0.5s"), Ok(std::time::Duration::from_millis(500)));
        assert_eq!(duration("1m"), Ok(std::time::Duration::from_secs(60)), "m is minutes everywhere");
        for bad in ["170", "0ms", "-1s", "xms", "12d"] {
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
