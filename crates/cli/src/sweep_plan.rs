//! The grid of a sweep: which setting each `--vary` names ([`results::setting`]), the values a
//! list or range expands to, ties (`--tie sndbuf=rcvbuf=len`), and the spec of each point.
//! A sweep may vary only the settings its test type takes (the settings table's `types`, the registry's
//! `sweep_params`).

use anyhow::{anyhow, bail, Context, Result};
use results::setting::{self, Setting, ValueKind};
use results::{Axis, ParamSetting, ParamValue, SweepPlan, TestKind, TestSpec};

use crate::parse;

/// Points a sweep may have at most (a typo guard).
pub const MAX_POINTS: usize = 1_000_000;

/// How the values of a `--vary` are read: by the setting's kind; a time is in seconds as
/// `-t` is, or in milliseconds when the name typed says so (`duration_ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Reading {
    kind: ValueKind,
    bare_ms: bool,
}

impl Reading {
    #[cfg(test)]
    fn of(kind: ValueKind) -> Reading {
        Reading { kind, bare_ms: false }
    }

    fn named(s: &Setting, typed: &str) -> Reading {
        Reading { kind: s.kind, bare_ms: typed.ends_with("_ms") }
    }
}

/// The setting named `name` (its id or an alias).
fn lookup(name: &str) -> Result<&'static Setting> {
    setting::find(name).with_context(|| {
        let known: Vec<&str> = sweepable().map(|s| s.id).collect();
        format!("unknown sweep parameter '{name}' (known: {})", known.join(", "))
    })
}

/// Whether a test of `kind` takes `s`: the settings table says so for one of the fields it
/// writes.
fn takes(kind: TestKind, s: &Setting) -> bool {
    s.is_taken_by(kind)
}

/// The settings some test type takes: the combined ones (`len`, `window`, `size`) first,
/// then the table's order.
fn sweepable() -> impl Iterator<Item = &'static Setting> {
    let (combined, fields): (Vec<&'static Setting>, _) = setting::ALL
        .iter()
        .copied()
        .filter(|s| TestKind::ALL.into_iter().any(|k| takes(k, s)))
        .partition(|s| s.is_combined());
    combined.into_iter().chain(fields)
}

/// Refuses `s` (typed as `typed`) when a test of `kind` ignores it: every point would
/// measure the same thing.
fn check_taken(kind: TestKind, s: &Setting, typed: &str) -> Result<()> {
    if takes(kind, s) {
        return Ok(());
    }
    let named = if typed == s.id { format!("'{typed}'") } else { format!("'{typed}' ({})", s.id) };
    let ids: Vec<&str> = sweepable().filter(|t| takes(kind, t)).map(|t| t.id).collect();
    let test = kind.id();
    bail!(
        "sweep parameter {named} does not apply to {test} tests (a {test} sweep may vary: {})",
        ids.join(", ")
    )
}

/// The `--vary` help: the syntax and every setting some test type takes, with its aliases.
pub fn vary_help() -> String {
    let names: Vec<String> = sweepable()
        .map(|s| match s.aliases {
            [] => s.id.to_string(),
            aliases => format!("{} ({})", s.id, aliases.join(", ")),
        })
        .collect();
    format!(
        "NAME=VALUES: a list (4K,8K,16K) or a range FROM..TO:xFACTOR or FROM..TO:+STEP; repeat for a \
         grid. Sizes take K/M/G (powers of 1024), rates k/M/G (powers of 1000), times a unit \
         (500ms, 1m) or are seconds (0.5; milliseconds for names ending in _ms). NAME is one of \
         these settings or an alias in parentheses; each test type takes some of them (an error \
         lists which): {}.",
        names.join(", ")
    )
}

/// A time of the one duration grammar (`0.5`, `500ms`, `1m`), a bare number being seconds, or
/// milliseconds for names ending in `_ms`; as milliseconds.
fn millis_of(s: &str, bare_ms: bool) -> Result<u64> {
    use model::units::BareNumber;
    let bare = if bare_ms { BareNumber::Milliseconds } else { BareNumber::Seconds };
    let d = model::units::parse_duration(s, bare)?;
    Ok(parse::millis_rounded(d))
}

fn value_of(r: Reading, s: &str) -> Result<ParamValue> {
    let v = match r.kind {
        ValueKind::Bytes => ParamValue::Int(parse::size_u64(s).map_err(anyhow::Error::msg)?),
        ValueKind::Count => {
            ParamValue::Int(s.trim().parse().with_context(|| format!("'{s}' is not a count"))?)
        }
        ValueKind::Millis => ParamValue::Int(millis_of(s, r.bare_ms)?),
        ValueKind::Bool => ParamValue::Bool(match s.trim() {
            "true" | "on" | "1" | "yes" => true,
            "false" | "off" | "0" | "no" => false,
            _ => bail!("'{s}' is not true or false"),
        }),
        ValueKind::Text => ParamValue::Text(s.trim().to_string()),
        ValueKind::Rate => ParamValue::Int(parse::rate_bps(s).map_err(anyhow::Error::msg)?),
        ValueKind::Direction => {
            setting::direction(s.trim()).map_err(anyhow::Error::msg)?;
            ParamValue::Text(s.trim().to_string())
        }
    };
    Ok(v)
}

/// Expands `FROM..TO:xF`, `FROM..TO:+STEP` (TO included when reached) or a comma list.
fn values_of(r: Reading, text: &str) -> Result<Vec<ParamValue>> {
    let Some((from, rest)) = text.split_once("..") else {
        return text.split(',').filter(|s| !s.trim().is_empty()).map(|s| value_of(r, s)).collect();
    };
    if !r.kind.is_numeric() {
        bail!("a range needs a numeric parameter");
    }
    let (to, step) = rest.split_once(':').unwrap_or((rest, "x2"));
    let int = |s: &str| match value_of(r, s)? {
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

/// The plan from `--vary` and `--tie` over `base`, judged on `metric`. Axes are named by
/// setting id. Every point's spec is validated here, before anything runs.
pub fn plan(base: &TestSpec, vary: &[String], tie: &[String], metric: &str) -> Result<SweepPlan> {
    let mut axes = Vec::new();
    for v in vary {
        let (name, text) = v.split_once('=').with_context(|| format!("--vary '{v}' needs NAME=VALUES"))?;
        let s = lookup(name.trim())?;
        check_taken(base.test, s, name.trim())?;
        let values =
            values_of(Reading::named(s, name.trim()), text).with_context(|| format!("--vary {v}"))?;
        if values.is_empty() {
            bail!("--vary {v} has no values");
        }
        axes.push(Axis { name: s.id.into(), tied: Vec::new(), values, text: text.to_string() });
    }
    apply_ties(&mut axes, tie, base.test)?;
    check_disjoint(&axes)?;
    let plan = SweepPlan { base: base.clone(), axes, confidence: None, metric: metric.into(), mesh: None };
    if plan.axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len())).is_none_or(|n| n > MAX_POINTS)
    {
        bail!("the grid has more than {MAX_POINTS} points");
    }
    for i in 0..plan.len() {
        let (spec, params) = point_spec(&plan, i)?;
        crate::settings::check_spec(&spec, "sweep")
            .with_context(|| format!("sweep point {}", written(&params)))?;
    }
    Ok(plan)
}

fn apply_ties(axes: &mut [Axis], tie: &[String], kind: TestKind) -> Result<()> {
    for t in tie {
        let names: Vec<&str> = t.split('=').map(str::trim).collect();
        if names.len() < 2 {
            let (a, b, c) = (setting::SNDBUF.id, setting::RCVBUF.id, setting::LEN.id);
            bail!("--tie '{t}' needs at least two names (e.g. {a}={b}={c})");
        }
        let mut tied = Vec::new();
        for n in names {
            let s = lookup(n)?;
            check_taken(kind, s, n)?;
            tied.push(s);
        }
        let varied: Vec<usize> =
            tied.iter().filter_map(|s| axes.iter().position(|a| a.name == s.id)).collect();
        let [axis] = varied[..] else {
            bail!("--tie '{t}': exactly one of these must be varied with --vary")
        };
        let kind = lookup(&axes[axis].name)?.kind;
        for s in tied {
            if s.id != axes[axis].name {
                if s.kind != kind {
                    bail!("--tie '{t}': '{}' and '{}' take different kinds of value", s.id, axes[axis].name);
                }
                axes[axis].tied.push(s.id.into());
            }
        }
    }
    Ok(())
}

/// Refuses two axes (or ties) that write the same spec field: one would overwrite the other.
fn check_disjoint(axes: &[Axis]) -> Result<()> {
    let mut seen: Vec<&'static Setting> = Vec::new();
    for name in axes.iter().flat_map(|a| std::iter::once(&a.name).chain(&a.tied)) {
        let s = lookup(name)?;
        if let Some(other) = seen.iter().find(|o| o.fields().iter().any(|f| s.fields().contains(f))) {
            if other.id == s.id {
                bail!("parameter '{}' is varied twice", s.id);
            }
            let field = other.fields().iter().find(|f| s.fields().contains(f)).unwrap_or(&"");
            bail!("'{}' and '{}' both set {field}; vary or tie only one of them", other.id, s.id);
        }
        seen.push(s);
    }
    Ok(())
}

/// `len=512 rcvbuf=4096`.
pub fn describe(params: &[ParamSetting]) -> String {
    params.iter().map(|p| format!("{}={}", p.name, p.value)).collect::<Vec<_>>().join(" ")
}

/// `rcvbuf=1G duration_ms=7200 s`: each value as its setting's flag writes it (the units the
/// error that follows states its limit in).
fn written(params: &[ParamSetting]) -> String {
    let value = |p: &ParamSetting| {
        setting::find(&p.name).map_or_else(|| p.value.to_string(), |s| s.kind.write(&p.value))
    };
    params.iter().map(|p| format!("{}={}", p.name, value(p))).collect::<Vec<_>>().join(" ")
}

/// The spec and parameter settings of point `index` (row-major, last axis fastest). Axes
/// named by an alias (plans stored before the ids) are read as their setting.
pub fn point_spec(plan: &SweepPlan, index: usize) -> Result<(TestSpec, Vec<ParamSetting>)> {
    let mut spec = plan.base.clone();
    let mut params = Vec::new();
    let coords = store::coords_of(plan, index as u32);
    for (axis, c) in plan.axes.iter().zip(coords) {
        let value = axis.values.get(c as usize).context("point outside the grid")?.clone();
        for name in std::iter::once(&axis.name).chain(&axis.tied) {
            let s = setting::find(name).with_context(|| format!("parameter '{name}' cannot be set"))?;
            (s.set)(&mut spec, &value).map_err(|e| anyhow!("{name}={value}: {e}"))?;
            params.push(ParamSetting { name: name.clone(), value: value.clone() });
        }
    }
    Ok((spec, params))
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
        assert_eq!(
            ints(&values_of(Reading::of(ValueKind::Bytes), "1..65536:x2").unwrap_or_default()).len(),
            17
        );
        let lin = ints(&values_of(Reading::of(ValueKind::Bytes), "512..32768:+512").unwrap_or_default());
        assert_eq!((lin.len(), lin[0], lin[63]), (64, 512, 32768));
        assert_eq!(
            ints(
                &values_of(Reading::of(ValueKind::Bytes), "4K,8K,16K,24K,32K,40K,52428").unwrap_or_default()
            ),
            vec![4096, 8192, 16384, 24576, 32768, 40960, 52428]
        );
        assert_eq!(
            ints(&values_of(Reading::of(ValueKind::Bytes), "1K..4K").unwrap_or_default()),
            vec![1024, 2048, 4096]
        );
        assert_eq!(
            ints(&values_of(Reading::of(ValueKind::Bytes), "8K,8KB,8KiB").unwrap_or_default()),
            vec![8192; 3]
        );
        assert_eq!(
            ints(&values_of(Reading::of(ValueKind::Rate), "1M,1mbit,1000K,500k").unwrap_or_default()),
            vec![1_000_000, 1_000_000, 1_000_000, 500_000]
        );
        assert!(values_of(Reading::of(ValueKind::Bytes), "1.3K").is_err());
        assert!(values_of(Reading::of(ValueKind::Rate), "1Mbps").is_err());
        assert_eq!(
            ints(&values_of(Reading::of(ValueKind::Millis), "0.5..1.5:+0.5").unwrap_or_default()),
            vec![500, 1000, 1500]
        );
        assert!(values_of(Reading::of(ValueKind::Bytes), "8..1:x2").is_err());
        assert!(values_of(Reading::of(ValueKind::Bytes), "0..8:x2").is_err());
        assert!(values_of(Reading::of(ValueKind::Bytes), "1..8:x1").is_err());
        assert!(values_of(Reading::of(ValueKind::Bytes), "1..8:+0").is_err());
        assert!(values_of(Reading::of(ValueKind::Bytes), "1..8:?3").is_err());
        assert!(values_of(Reading::of(ValueKind::Text), "a..b").is_err());
    }

    /// A sweep's refusal of an out-of-range point names only flags `tcplab sweep` has (or the
    /// setting's label where it has none), for every setting with a limit each type takes.
    #[test]
    fn a_refused_point_names_only_flags_of_sweep() {
        let mut wrong = Vec::new();
        let (mut tried, mut named) = (0, 0);
        for kind in TestKind::ALL {
            let base = engine::registry::defaults(kind);
            for s in setting::ALL.iter().filter(|s| s.limit.is_some() && takes(kind, s)) {
                tried += 1;
                let e = match plan(&base, &[format!("{}=0", s.id)], &[], "goodput_bps") {
                    Ok(_) => String::new(),
                    Err(e) => format!("{e:#}"),
                };
                let reason = e.split_once(": ").map_or("", |(_, r)| r);
                let flags: Vec<&str> = reason
                    .split(|c: char| c.is_whitespace() || "/,:;()'".contains(c))
                    .filter(|w| {
                        w.starts_with('-') && w.trim_start_matches('-').starts_with(char::is_alphabetic)
                    })
                    .collect();
                named += usize::from(!flags.is_empty());
                if reason.is_empty() || flags.iter().any(|f| !crate::settings::has_flag("sweep", f)) {
                    wrong.push(format!("{} {}=0: {e}", kind.id(), s.id));
                }
            }
        }
        assert!(tried >= 30 && named >= tried / 2, "{tried} tried, {named} naming a flag");
        assert!(wrong.is_empty(), "{wrong:#?}");
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
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// The sweep grammar lives in this binary crate, out of cargo-fuzz's reach: random
        /// `--vary`/`--tie` text from its alphabet is refused or gives a bounded grid whose
        /// every point builds, without a panic.
        #[test]
        fn any_vary_text_is_refused_or_a_bounded_grid(
            name in "(len|rcvbuf|sndbuf|parallel|time|burst|window|x|)",
            values in "[0-9KMGkmx.,:+*e -]{0,24}",
            tie in proptest::option::of("(len|rcvbuf|sndbuf|parallel)(=(len|rcvbuf|sndbuf|q)){0,2}"),
        ) {
            let base = TestSpec::new(TestKind::TcpStream);
            let vary = [format!("{name}={values}")];
            let ties: Vec<String> = tie.into_iter().collect();
            if let Ok(p) = plan(&base, &vary, &ties, "goodput_bps") {
                proptest::prop_assert!((1..=MAX_POINTS).contains(&p.len()));
                for i in 0..p.len() {
                    proptest::prop_assert!(point_spec(&p, i).is_ok());
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn linear_ranges_step_evenly_and_stay_inside(lo in 1u64..100_000, n in 0u64..200, step in 1u64..5000) {
            let hi = lo + n * step + step / 2;
            let v = ints(&values_of(Reading::of(ValueKind::Count), &format!("{lo}..{hi}:+{step}")).unwrap_or_default());
            proptest::prop_assert_eq!(v.len() as u64, n + 1);
            proptest::prop_assert_eq!(v[0], lo);
            proptest::prop_assert!(v.windows(2).all(|w| w[1] - w[0] == step) && v.iter().all(|x| *x <= hi));
        }

        #[test]
        fn geometric_ranges_grow_and_stay_inside(lo in 1u64..10_000, hi_mul in 1u64..1000, f in 1.1f64..8.0) {
            let hi = lo * hi_mul;
            let v = ints(&values_of(Reading::of(ValueKind::Count), &format!("{lo}..{hi}:x{f}")).unwrap_or_default());
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

    fn plan_of(kind: TestKind, vary: &[&str], tie: &[&str]) -> Result<SweepPlan> {
        let v: Vec<String> = vary.iter().map(|s| s.to_string()).collect();
        let t: Vec<String> = tie.iter().map(|s| s.to_string()).collect();
        let base = engine::registry::defaults(kind);
        plan(&base, &v, &t, engine::registry::of(kind).headline().id())
    }

    fn error_of(kind: TestKind, vary: &[&str], tie: &[&str]) -> String {
        plan_of(kind, vary, tie).err().map(|e| format!("{e:#}")).unwrap_or_default()
    }

    #[test]
    fn a_setting_the_test_type_ignores_is_refused_naming_what_it_takes() {
        let err = error_of(TestKind::TcpStream, &["burst=1,2,4"], &[]);
        assert!(err.contains("'burst' does not apply to tcp-stream tests"), "{err}");
        assert!(err.contains("may vary: len, window, send_len, recv_len,"), "{err}");
        let err = error_of(TestKind::TcpRr, &["rate=1M,2M"], &[]);
        assert!(err.contains("'rate' (rate_bps) does not apply to tcp-rr tests"), "{err}");
        assert!(error_of(TestKind::TcpRr, &["len=1K,2K"], &[]).contains("does not apply to tcp-rr"));
        assert!(error_of(TestKind::UdpRr, &["nodelay=true,false"], &[]).contains("does not apply to udp-rr"));
        let err = error_of(TestKind::TcpStream, &["len=1K,2K"], &["len=send_len=burst"]);
        assert!(err.contains("'burst' does not apply"), "a tie is checked too: {err}");
        for (kind, vary) in [
            (TestKind::UdpStream, "len=64,1400"),
            (TestKind::UdpStream, "burst=1,8"),
            (TestKind::TcpStream, "rate=10M,0"),
            (TestKind::TcpRr, "burst=1,8"),
            (TestKind::TcpRr, "size=1,64"),
            (TestKind::TcpCrr, "window=64K,128K"),
        ] {
            assert!(plan_of(kind, &[vary], &[]).is_ok(), "{} {vary}", kind.id());
        }
    }

    #[test]
    fn every_setting_a_type_takes_can_be_swept_on_it() {
        for t in engine::registry::all() {
            for id in t.sweep_params() {
                let err = error_of(t.kind(), &[&format!("{id}=0")], &[]);
                assert!(!err.contains("does not apply"), "{}: {err}", t.kind().id());
            }
        }
    }

    #[test]
    fn axes_are_named_by_id_and_settings_writing_one_field_twice_are_refused() {
        let p = plan_of(TestKind::TcpRr, &["request=64,128", "time=0.5,2"], &["response=request"])
            .unwrap_or_else(|e| panic!("{e:#}"));
        let names: Vec<&str> = p.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            (names, p.axes[0].tied.clone()),
            (vec!["request_len", "duration_ms"], vec!["response_len".into()])
        );
        assert_eq!(ints(&p.axes[1].values), vec![500, 2000]);
        let err = error_of(TestKind::TcpStream, &["len=1K,2K", "send_len=4K"], &[]);
        assert!(err.contains("'len' and 'send_len' both set send_len"), "{err}");
        let err = error_of(TestKind::TcpStream, &["window=64K,128K"], &["rcvbuf=window"]);
        assert!(err.contains("both set rcvbuf"), "{err}");
    }

    #[test]
    fn times_are_seconds_unless_written_or_named_in_milliseconds() {
        let r = |name: &str| Reading::named(setting::find(name).unwrap_or_else(|| panic!("{name}")), name);
        assert_eq!(ints(&values_of(r("time"), "0.5,2,250ms").unwrap_or_default()), vec![500, 2000, 250]);
        assert_eq!(ints(&values_of(r("duration_ms"), "500,2s").unwrap_or_default()), vec![500, 2000]);
        assert_eq!(ints(&values_of(r("omit"), "1").unwrap_or_default()), vec![1000]);
        assert_eq!(ints(&values_of(r("time"), "1m,0.5min").unwrap_or_default()), vec![60_000, 30_000]);
        assert!(values_of(r("time"), "soon").is_err());
        assert!(values_of(r("direction"), "forward,sideways").is_err());
        assert_eq!(
            ints(&values_of(r("rate"), "1M..4M:x2").unwrap_or_default()),
            vec![1_000_000, 2_000_000, 4_000_000]
        );
    }

    /// Plans stored before the ids named settings by their sweep names; they still expand.
    #[test]
    fn a_stored_plan_with_the_old_names_expands_to_the_same_specs() {
        let load = |kind: TestKind, axes: serde_json::Value| -> SweepPlan {
            let base = engine::registry::defaults(kind);
            let json = serde_json::json!({ "base": base, "axes": axes, "confidence": null, "metric": "x" });
            serde_json::from_value(json).unwrap_or_else(|e| panic!("{e}"))
        };
        let stream = load(
            TestKind::TcpStream,
            serde_json::json!([
                { "name": "window", "values": [4096, 8192], "text": "4K,8K" },
                { "name": "send-len", "tied": ["recv-len"], "values": [1024], "text": "1K" },
                { "name": "time", "values": [500, 1000], "text": "0.5,1" },
                { "name": "direction", "values": ["reverse"], "text": "reverse" },
            ]),
        );
        let (spec, params) = point_spec(&stream, 3).unwrap_or_else(|e| panic!("{e:#}"));
        let mut want = engine::registry::defaults(TestKind::TcpStream);
        (want.sndbuf, want.rcvbuf, want.remote_sndbuf, want.remote_rcvbuf) =
            (Some(8192), Some(8192), Some(8192), Some(8192));
        (want.send_len, want.recv_len, want.duration_ms) = (1024, 1024, 1000);
        want.direction = results::Direction::Reverse;
        assert_eq!(spec, want);
        assert_eq!(describe(&params), "window=8192 send-len=1024 recv-len=1024 time=1000 direction=reverse");

        let rr = load(
            TestKind::TcpRr,
            serde_json::json!([
                { "name": "request", "tied": ["response"], "values": [64], "text": "64" },
                { "name": "remote-sndbuf", "tied": ["remote-rcvbuf", "mss"], "values": [1400], "text": "1400" },
                { "name": "nodelay", "values": [true], "text": "true" },
                { "name": "congestion", "values": ["reno"], "text": "reno" },
                { "name": "parallel", "tied": ["burst"], "values": [2], "text": "2" },
                { "name": "interval", "values": [500], "text": "0.5" },
                { "name": "omit", "values": [2000], "text": "2" },
                { "name": "duration_ms", "values": [3000], "text": "3000" },
            ]),
        );
        let (spec, _) = point_spec(&rr, 0).unwrap_or_else(|e| panic!("{e:#}"));
        let mut want = engine::registry::defaults(TestKind::TcpRr);
        (want.request_len, want.response_len) = (64, 64);
        (want.remote_sndbuf, want.remote_rcvbuf, want.mss) = (Some(1400), Some(1400), Some(1400));
        (want.nodelay, want.congestion) = (true, Some("reno".into()));
        (want.parallel, want.burst) = (2, 2);
        (want.interval_ms, want.omit_ms, want.duration_ms) = (500, 2000, 3000);
        assert_eq!(spec, want);

        let udp = load(
            TestKind::UdpStream,
            serde_json::json!([
                { "name": "rate", "values": [5000000], "text": "5M" },
                { "name": "bytes", "values": [1048576], "text": "1M" },
                { "name": "len", "values": [1400], "text": "1400" },
            ]),
        );
        let (spec, _) = point_spec(&udp, 0).unwrap_or_else(|e| panic!("{e:#}"));
        let mut want = engine::registry::defaults(TestKind::UdpStream);
        (want.rate_bps, want.bytes_limit, want.duration_ms, want.omit_ms) = (5_000_000, Some(1 << 20), 0, 0);
        (want.send_len, want.recv_len) = (1400, 1400);
        assert_eq!(spec, want);
        let crr =
            load(TestKind::TcpCrr, serde_json::json!([{ "name": "size", "values": [32], "text": "32" }]));
        let (spec, _) = point_spec(&crr, 0).unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!((spec.request_len, spec.response_len), (32, 32));
    }

    #[test]
    fn the_vary_help_lists_every_sweepable_setting_and_nothing_else() {
        use clap::CommandFactory;
        let cmd = crate::args::Cli::command();
        let sweep = cmd.find_subcommand("sweep").unwrap_or_else(|| panic!("no sweep subcommand"));
        let vary =
            sweep.get_arguments().find(|a| a.get_id() == "vary").unwrap_or_else(|| panic!("no --vary"));
        let help = vary.get_help().map(|h| h.to_string()).unwrap_or_default();
        for s in setting::ALL {
            let listed = help.contains(&format!(" {}", s.id));
            let sweepable = TestKind::ALL.into_iter().any(|k| takes(k, s));
            assert_eq!(listed, sweepable, "'{}' in --vary help: {help}", s.id);
        }
        assert!(help.contains("len (l)") && help.contains("rate_bps (rate, b)"), "{help}");
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
        let lone = err(&["len=1K"], &["len"]);
        assert!(lone.contains("needs at least two names (e.g. sndbuf=rcvbuf=len)"), "{lone}");
        assert!(err(&["len=0"], &[]).contains("sweep point len=0"));
        let big = err(&["window=1G"], &[]);
        assert!(big.starts_with("sweep point window=1G: ") && big.contains("at most 512M"), "{big}");
        assert!(err(&["len=1..4G:+1", "rcvbuf=1..4G:+1"], &[]).contains("more than"));
    }
}
