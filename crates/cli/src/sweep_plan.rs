//! The grid of a sweep: which TestSpec parameter each `--vary` names, the values a list or
//! range expands to, ties (`--tie sndbuf=rcvbuf=len`), and the spec of each point.

use anyhow::{bail, Context, Result};
use results::{Axis, Direction, ParamSetting, ParamValue, SweepPlan, TestSpec};

use crate::parse;

/// Points a sweep may have at most (a typo guard).
pub const MAX_POINTS: usize = 1_000_000;

/// How a parameter's values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Bytes; K/M/G suffixes are powers of 1024 ([`parse::size_u64`]).
    Size,
    /// A plain count.
    Count,
    /// Seconds (stored as ms).
    Seconds,
    /// true/false.
    Bool,
    /// A name.
    Text,
    /// Bits per second; k/M/G suffixes are powers of 1000, 100M = 10⁸ ([`parse::rate_bps`]).
    Rate,
}

/// Parameters by name: (names, kind). The first name is canonical.
const PARAMS: &[(&[&str], Kind)] = &[
    (&["len", "l"], Kind::Size),
    (&["send-len", "send_len"], Kind::Size),
    (&["recv-len", "recv_len"], Kind::Size),
    (&["window", "w"], Kind::Size),
    (&["sndbuf"], Kind::Size),
    (&["rcvbuf"], Kind::Size),
    (&["remote-sndbuf", "remote_sndbuf"], Kind::Size),
    (&["remote-rcvbuf", "remote_rcvbuf"], Kind::Size),
    (&["request", "req", "request_len", "request-len"], Kind::Size),
    (&["response", "resp", "response_len", "response-len"], Kind::Size),
    (&["size"], Kind::Size),
    (&["mss", "M"], Kind::Size),
    (&["bytes", "bytes_limit", "n"], Kind::Size),
    (&["parallel", "P"], Kind::Count),
    (&["burst"], Kind::Count),
    (&["time", "t", "duration"], Kind::Seconds),
    (&["duration_ms", "duration-ms"], Kind::Count),
    (&["interval", "interval_ms"], Kind::Seconds),
    (&["omit", "omit_ms"], Kind::Seconds),
    (&["nodelay", "N"], Kind::Bool),
    (&["congestion", "C"], Kind::Text),
    (&["direction"], Kind::Text),
    (&["rate", "b", "rate_bps"], Kind::Rate),
];

/// The canonical name and kind of parameter `name`.
fn lookup(name: &str) -> Result<(&'static str, Kind)> {
    PARAMS
        .iter()
        .find(|(names, _)| names.contains(&name))
        .map(|(names, kind)| (names[0], *kind))
        .with_context(|| {
            let known: Vec<&str> = PARAMS.iter().map(|(n, _)| n[0]).collect();
            format!("unknown sweep parameter '{name}' (known: {})", known.join(", "))
        })
}

fn value_of(kind: Kind, s: &str) -> Result<ParamValue> {
    let v = match kind {
        Kind::Size => ParamValue::Int(parse::size_u64(s).map_err(anyhow::Error::msg)?),
        Kind::Count => ParamValue::Int(s.trim().parse().with_context(|| format!("'{s}' is not a count"))?),
        Kind::Seconds => ParamValue::Int(parse::seconds_ms(s).map_err(anyhow::Error::msg)?),
        Kind::Bool => ParamValue::Bool(match s.trim() {
            "true" | "on" | "1" | "yes" => true,
            "false" | "off" | "0" | "no" => false,
            _ => bail!("'{s}' is not true or false"),
        }),
        Kind::Text => ParamValue::Text(s.trim().to_string()),
        Kind::Rate => ParamValue::Int(parse::rate_bps(s).map_err(anyhow::Error::msg)?),
    };
    Ok(v)
}

/// Expands `FROM..TO:xF`, `FROM..TO:+STEP` (TO included when reached) or a comma list.
fn values_of(kind: Kind, text: &str) -> Result<Vec<ParamValue>> {
    let Some((from, rest)) = text.split_once("..") else {
        return text.split(',').filter(|s| !s.trim().is_empty()).map(|s| value_of(kind, s)).collect();
    };
    if !matches!(kind, Kind::Size | Kind::Count | Kind::Seconds) {
        bail!("a range needs a numeric parameter");
    }
    let (to, step) = rest.split_once(':').unwrap_or((rest, "x2"));
    let int = |s: &str| match value_of(kind, s)? {
        ParamValue::Int(n) => Ok(n),
        _ => bail!("'{s}' is not a number"),
    };
    let (lo, hi) = (int(from)?, int(to)?);
    if lo > hi {
        bail!("range {text} runs backwards");
    }
    let mut out = Vec::new();
    let mut v = lo;
    if let Some(f) = step.strip_prefix('x').or_else(|| step.strip_prefix('*')) {
        let factor: f64 = f.parse().with_context(|| format!("'{f}' is not a factor"))?;
        if !(factor > 1.0 && factor.is_finite()) || lo == 0 {
            bail!("a geometric range needs FROM > 0 and a factor > 1 (e.g. 1..64K:x2)");
        }
        while v <= hi && out.len() <= MAX_POINTS {
            out.push(ParamValue::Int(v));
            v = ((v as f64 * factor).round() as u64).max(v + 1);
        }
    } else if let Some(s) = step.strip_prefix('+') {
        let inc = int(s)?;
        if inc == 0 {
            bail!("a linear step must be positive");
        }
        while v <= hi && out.len() <= MAX_POINTS {
            out.push(ParamValue::Int(v));
            v = v.saturating_add(inc);
            if v == u64::MAX {
                break;
            }
        }
    } else {
        bail!("range step '{step}' must be xFACTOR or +STEP");
    }
    Ok(out)
}

/// The plan from `--vary` and `--tie` over `base`, judged on `metric`. Every point's spec is
/// validated here, before anything runs.
pub fn plan(base: &TestSpec, vary: &[String], tie: &[String], metric: &str) -> Result<SweepPlan> {
    let mut axes = Vec::new();
    for v in vary {
        let (name, text) = v.split_once('=').with_context(|| format!("--vary '{v}' needs NAME=VALUES"))?;
        let (canon, kind) = lookup(name.trim())?;
        if axes.iter().any(|a: &Axis| a.name == canon) {
            bail!("parameter '{canon}' is varied twice");
        }
        let values = values_of(kind, text).with_context(|| format!("--vary {v}"))?;
        if values.is_empty() {
            bail!("--vary {v} has no values");
        }
        axes.push(Axis { name: canon.into(), tied: Vec::new(), values, text: text.to_string() });
    }
    apply_ties(&mut axes, tie)?;
    let plan = SweepPlan { base: base.clone(), axes, confidence: None, metric: metric.into() };
    if plan.axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len())).is_none_or(|n| n > MAX_POINTS)
    {
        bail!("the grid has more than {MAX_POINTS} points");
    }
    for i in 0..plan.len() {
        let (spec, params) = point_spec(&plan, i)?;
        crate::settings::check_spec(&spec).with_context(|| format!("sweep point {}", describe(&params)))?;
    }
    Ok(plan)
}

fn apply_ties(axes: &mut [Axis], tie: &[String]) -> Result<()> {
    for t in tie {
        let names: Vec<&str> = t.split('=').map(str::trim).collect();
        if names.len() < 2 {
            bail!("--tie '{t}' needs at least two names (e.g. sndbuf=rcvbuf=len)");
        }
        let mut canon = Vec::new();
        for n in names {
            canon.push(lookup(n)?);
        }
        let varied: Vec<usize> =
            canon.iter().filter_map(|(c, _)| axes.iter().position(|a| a.name == *c)).collect();
        let [axis] = varied[..] else {
            bail!("--tie '{t}': exactly one of these must be varied with --vary")
        };
        let kind = lookup(&axes[axis].name)?.1;
        for (c, k) in canon {
            if c != axes[axis].name {
                if k != kind {
                    bail!("--tie '{t}': '{c}' and '{}' take different kinds of value", axes[axis].name);
                }
                axes[axis].tied.push(c.into());
            }
        }
    }
    Ok(())
}

/// `len=512 rcvbuf=4096`.
pub fn describe(params: &[ParamSetting]) -> String {
    params.iter().map(|p| format!("{}={}", p.name, p.value)).collect::<Vec<_>>().join(" ")
}

/// The spec and parameter settings of point `index` (row-major, last axis fastest).
pub fn point_spec(plan: &SweepPlan, index: usize) -> Result<(TestSpec, Vec<ParamSetting>)> {
    let mut spec = plan.base.clone();
    let mut params = Vec::new();
    let coords = store::coords_of(plan, index as u32);
    for (axis, c) in plan.axes.iter().zip(coords) {
        let value = axis.values.get(c as usize).context("point outside the grid")?.clone();
        for name in std::iter::once(&axis.name).chain(&axis.tied) {
            set(&mut spec, name, &value)?;
            params.push(ParamSetting { name: name.clone(), value: value.clone() });
        }
    }
    Ok((spec, params))
}

fn u32_of(name: &str, v: &ParamValue) -> Result<u32> {
    match v {
        ParamValue::Int(n) => u32::try_from(*n).with_context(|| format!("{name}={n} is too large")),
        other => bail!("{name}={other} is not a number"),
    }
}

/// Sets parameter `name` (canonical) of `spec` to `v`.
fn set(spec: &mut TestSpec, name: &str, v: &ParamValue) -> Result<()> {
    let n32 = || u32_of(name, v);
    let n64 = || match v {
        ParamValue::Int(n) => Ok(*n),
        other => bail!("{name}={other} is not a number"),
    };
    match name {
        "len" => (spec.send_len, spec.recv_len) = (n32()?, n32()?),
        "send-len" => spec.send_len = n32()?,
        "recv-len" => spec.recv_len = n32()?,
        "window" => {
            let w = Some(n32()?);
            (spec.sndbuf, spec.rcvbuf, spec.remote_sndbuf, spec.remote_rcvbuf) = (w, w, w, w);
        }
        "sndbuf" => spec.sndbuf = Some(n32()?),
        "rcvbuf" => spec.rcvbuf = Some(n32()?),
        "remote-sndbuf" => spec.remote_sndbuf = Some(n32()?),
        "remote-rcvbuf" => spec.remote_rcvbuf = Some(n32()?),
        "request" => spec.request_len = n32()?,
        "response" => spec.response_len = n32()?,
        "size" => (spec.request_len, spec.response_len) = (n32()?, n32()?),
        "mss" => spec.mss = Some(n32()?),
        "bytes" => (spec.bytes_limit, spec.duration_ms, spec.omit_ms) = (Some(n64()?), 0, 0),
        "parallel" => spec.parallel = n32()?,
        "burst" => spec.burst = n32()?,
        "time" | "duration_ms" => spec.duration_ms = n64()?,
        "interval" => spec.interval_ms = n64()?,
        "omit" => spec.omit_ms = n64()?,
        "nodelay" => spec.nodelay = matches!(v, ParamValue::Bool(true)),
        "congestion" => spec.congestion = Some(v.to_string()),
        "direction" => spec.direction = direction(&v.to_string())?,
        "rate" => spec.rate_bps = n64()?,
        other => bail!("parameter '{other}' cannot be set"),
    }
    Ok(())
}

fn direction(s: &str) -> Result<Direction> {
    Ok(match s {
        "forward" => Direction::Forward,
        "reverse" => Direction::Reverse,
        "bidir" => Direction::Bidir,
        other => bail!("direction '{other}' must be forward, reverse or bidir"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::TestKind;

    fn ints(v: &[ParamValue]) -> Vec<u64> {
        v.iter().filter_map(|p| if let ParamValue::Int(n) = p { Some(*n) } else { None }).collect()
    }

    #[test]
    fn ranges_and_lists() {
        assert_eq!(ints(&values_of(Kind::Size, "1..65536:x2").unwrap_or_default()).len(), 17);
        let lin = ints(&values_of(Kind::Size, "512..32768:+512").unwrap_or_default());
        assert_eq!((lin.len(), lin[0], lin[63]), (64, 512, 32768));
        assert_eq!(
            ints(&values_of(Kind::Size, "4K,8K,16K,24K,32K,40K,52428").unwrap_or_default()),
            vec![4096, 8192, 16384, 24576, 32768, 40960, 52428]
        );
        assert_eq!(ints(&values_of(Kind::Size, "1K..4K").unwrap_or_default()), vec![1024, 2048, 4096]);
        assert_eq!(ints(&values_of(Kind::Size, "8K,8KB,8KiB").unwrap_or_default()), vec![8192; 3]);
        assert_eq!(
            ints(&values_of(Kind::Rate, "1M,1mbit,1000K,500k").unwrap_or_default()),
            vec![1_000_000, 1_000_000, 1_000_000, 500_000]
        );
        assert!(values_of(Kind::Size, "1.3K").is_err());
        assert!(values_of(Kind::Rate, "1Mbps").is_err());
        assert_eq!(
            ints(&values_of(Kind::Seconds, "0.5..1.5:+0.5").unwrap_or_default()),
            vec![500, 1000, 1500]
        );
        assert!(values_of(Kind::Size, "8..1:x2").is_err());
        assert!(values_of(Kind::Size, "0..8:x2").is_err());
        assert!(values_of(Kind::Size, "1..8:x1").is_err());
        assert!(values_of(Kind::Size, "1..8:+0").is_err());
        assert!(values_of(Kind::Size, "1..8:?3").is_err());
        assert!(values_of(Kind::Text, "a..b").is_err());
    }

    #[test]
    fn grid_ties_and_point_specs() {
        let base = TestSpec::new(TestKind::TcpStream);
        let vary = ["rcvbuf=4K,8K".to_string(), "len=1K..4K".to_string()];
        let p = plan(&base, &vary, &[], "goodput_bps").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.len(), 6);
        let (spec, params) = point_spec(&p, 4).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((spec.rcvbuf, spec.send_len, spec.recv_len), (Some(8192), 2048, 2048));
        assert_eq!(describe(&params), "rcvbuf=8192 len=2048");
        let tied = plan(&base, &["len=4K,8K".into()], &["sndbuf=rcvbuf=len".into()], "goodput_bps")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tied.axes[0].tied, vec!["sndbuf".to_string(), "rcvbuf".to_string()]);
        let (spec, _) = point_spec(&tied, 1).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((spec.sndbuf, spec.rcvbuf, spec.send_len), (Some(8192), Some(8192), 8192));
    }

    proptest::proptest! {
        #[test]
        fn linear_ranges_step_evenly_and_stay_inside(lo in 1u64..100_000, n in 0u64..200, step in 1u64..5000) {
            let hi = lo + n * step + step / 2;
            let v = ints(&values_of(Kind::Count, &format!("{lo}..{hi}:+{step}")).unwrap_or_default());
            proptest::prop_assert_eq!(v.len() as u64, n + 1);
            proptest::prop_assert_eq!(v[0], lo);
            proptest::prop_assert!(v.windows(2).all(|w| w[1] - w[0] == step) && v.iter().all(|x| *x <= hi));
        }

        #[test]
        fn geometric_ranges_grow_and_stay_inside(lo in 1u64..10_000, hi_mul in 1u64..1000, f in 1.1f64..8.0) {
            let hi = lo * hi_mul;
            let v = ints(&values_of(Kind::Count, &format!("{lo}..{hi}:x{f}")).unwrap_or_default());
            proptest::prop_assert_eq!(v[0], lo);
            proptest::prop_assert!(v.windows(2).all(|w| w[1] > w[0]) && v.iter().all(|x| *x <= hi));
            let next = ((*v.last().unwrap_or(&0) as f64 * f).round() as u64).max(v.last().unwrap_or(&0) + 1);
            proptest::prop_assert!(next > hi, "stopped early");
        }

        #[test]
        fn every_grid_point_has_its_own_coordinates(a in 1usize..6, b in 1usize..6, c in 1usize..4) {
            let base = TestSpec::new(TestKind::TcpStream);
            let list = |n: usize| (1..=n).map(|i| (i * 1024).to_string()).collect::<Vec<_>>().join(",");
            let vary = [format!("rcvbuf={}", list(a)), format!("len={}", list(b)), format!("parallel={}", (1..=c).map(|i| i.to_string()).collect::<Vec<_>>().join(","))];
            let p = plan(&base, &vary, &[], "goodput_bps").unwrap_or_else(|e| panic!("{e}"));
            proptest::prop_assert_eq!(p.len(), a * b * c);
            let mut seen = std::collections::HashSet::new();
            for i in 0..p.len() {
                let (spec, _) = point_spec(&p, i).unwrap_or_else(|e| panic!("{e}"));
                proptest::prop_assert!(seen.insert((spec.rcvbuf, spec.send_len, spec.parallel)));
            }
        }
    }

    #[test]
    fn bad_plans_are_refused_with_a_reason() {
        let base = TestSpec::new(TestKind::TcpStream);
        let err = |vary: &[&str], tie: &[&str]| {
            let v: Vec<String> = vary.iter().map(|s| s.to_string()).collect();
            let t: Vec<String> = tie.iter().map(|s| s.to_string()).collect();
            plan(&base, &v, &t, "goodput_bps").err().map(|e| format!("{e:#}")).unwrap_or_default()
        };
        assert!(err(&["colour=1,2"], &[]).contains("unknown sweep parameter"));
        assert!(err(&["len"], &[]).contains("NAME=VALUES"));
        assert!(err(&["len=1K", "len=2K"], &[]).contains("twice"));
        assert!(err(&["len=1K"], &["sndbuf=rcvbuf"]).contains("exactly one"));
        assert!(err(&["len=1K"], &["len=congestion"]).contains("different kinds"));
        assert!(err(&["len=0"], &[]).contains("sweep point len=0"));
        assert!(err(&["len=1..4G:+1", "rcvbuf=1..4G:+1"], &[]).contains("more than"));
    }
}
