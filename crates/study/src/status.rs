//! Every figure and table of a paper gets a status computed from what was measured and its
//! uncertainty — never written by hand. A study lists every figure of its paper once
//! ([`Entry`]): measured here, not reproducible here (and why), not run yet (and what it
//! needs), or a drawing with no data. For the measured ones the study hands its samples to
//! one of the judges below, which decide from 95 % Student-t intervals over repeated runs:
//!
//! - [`value`]: a measured value against the paper's (or the model's) number within a
//!   stated tolerance: *reproduced* when the whole interval lies in the band, *differs* when
//!   it lies wholly outside, *not measurable here* when it straddles an edge or there is no
//!   interval (one run).
//! - [`effect`]: a change in % between two cases (checksum off against on, a big buffer
//!   against a small one) against the paper's change: *not measurable here* when the
//!   interval of the change spans zero, *differs* when it is significant the other way,
//!   *reproduced* within the tolerance, *same shape* when only the sign agrees.
//! - [`ordered`]: pairs the paper orders (this above that): *same shape* when every pair is
//!   in the paper's order significantly and by at least [`MATERIAL_PCT`], *differs* when one
//!   is significantly reversed or level (no gap where the paper drew one); [`shape`] adds
//!   pairs the paper draws level.

use std::fmt::Write;

use results::TestResult;

/// Confidence level of every interval, in %.
pub const LEVEL_PCT: f64 = 95.0;

/// A figure's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Within the stated tolerance of the paper, the whole interval.
    Reproduced,
    /// The paper's direction or order holds, its size does not.
    SameShape,
    /// Significantly different (the evidence says how and why).
    Differs,
    /// The interval is too wide to tell (spans zero, straddles the tolerance, or one run).
    NotMeasurable,
    /// Cannot be rerun here (host- or NIC-specific, a control this kernel lacks).
    NotReproducible,
    /// Not run (not built yet, skipped, failed, or a case that sent nothing).
    NotRun,
    /// A drawing of a set-up or a data path: no data to compare.
    Diagram,
}

impl Status {
    /// As the reports print it.
    pub fn label(self) -> &'static str {
        match self {
            Status::Reproduced => "reproduced",
            Status::SameShape => "same shape",
            Status::Differs => "differs",
            Status::NotMeasurable => "not measurable here",
            Status::NotReproducible => "not reproducible here",
            Status::NotRun => "not run",
            Status::Diagram => "diagram, no data",
        }
    }
}

/// A status and the numbers (or reason) behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The status.
    pub status: Status,
    /// The measured numbers with their intervals, or the reason.
    pub evidence: String,
    /// Measured ÷ expected, where the judge compared a value with one.
    pub ratio: Option<f64>,
    /// An order differs because a pair came out level where the paper drew a gap (none of
    /// them reversed).
    pub level: bool,
}

impl Verdict {
    /// A verdict of `status` with `evidence`.
    pub fn new(status: Status, evidence: impl Into<String>) -> Verdict {
        Verdict { status, evidence: evidence.into(), ratio: None, level: false }
    }

    /// Not run, because `why`.
    pub fn not_run(why: impl Into<String>) -> Verdict {
        Verdict::new(Status::NotRun, why)
    }

    /// With `why` appended to the evidence when the status is `Differs` (the cause, which
    /// the study knows and the numbers do not say).
    pub fn because(mut self, why: &str) -> Verdict {
        if self.status == Status::Differs && !why.is_empty() {
            self.evidence = format!("{} {why}", self.evidence);
        }
        self
    }
    /// As [`Verdict::because`], only when the measured value is above the expected one.
    pub fn because_above(self, why: &str) -> Verdict {
        match self.ratio {
            Some(r) if r > 1.0 => self.because(why),
            _ => self,
        }
    }

    /// As [`Verdict::because`], only when an order differs by a pair that came out level
    /// (both cases at one limit, where the paper's hosts showed a gap).
    pub fn because_level(self, why: &str) -> Verdict {
        if self.level {
            self.because(why)
        } else {
            self
        }
    }

    /// As [`Verdict::because`], only when the measured value is below the expected one.
    pub fn because_below(self, why: &str) -> Verdict {
        match self.ratio {
            Some(r) if r < 1.0 => self.because(why),
            _ => self,
        }
    }
}

/// How the study treats one figure or table of its paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Measured (or computed) here; the study's [`crate::Study::judge`] decides.
    Measured,
    /// Cannot be rerun here, for this reason.
    NotReproducible(&'static str),
    /// Not run: what it would need.
    NotRun(&'static str),
    /// A drawing with no data.
    Diagram,
}

/// One figure or table of a paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// As the paper numbers it (`Figure 10`, `Table 2`).
    pub figure: &'static str,
    /// What it shows.
    pub what: &'static str,
    /// How the study treats it.
    pub plan: Plan,
}

/// An entry measured here.
pub const fn measured(figure: &'static str, what: &'static str) -> Entry {
    Entry { figure, what, plan: Plan::Measured }
}

/// An entry that cannot be rerun here, because `why`.
pub const fn not_reproducible(figure: &'static str, what: &'static str, why: &'static str) -> Entry {
    Entry { figure, what, plan: Plan::NotReproducible(why) }
}

/// An entry not run yet, which `needs` something.
pub const fn not_run(figure: &'static str, what: &'static str, needs: &'static str) -> Entry {
    Entry { figure, what, plan: Plan::NotRun(needs) }
}

/// A drawing.
pub const fn diagram(figure: &'static str, what: &'static str) -> Entry {
    Entry { figure, what, plan: Plan::Diagram }
}

/// A figure with its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// The paper's figure.
    pub entry: Entry,
    /// Its verdict.
    pub verdict: Verdict,
}

/// Every figure of `study`'s paper with its verdict on `out`.
pub fn judge_all(study: &dyn crate::Study, out: &crate::Outcome) -> Vec<Judged> {
    study
        .catalogue()
        .iter()
        .map(|e| {
            let verdict = match e.plan {
                Plan::Measured => study.judge(e.figure, out),
                Plan::NotReproducible(why) => Verdict::new(Status::NotReproducible, why),
                Plan::NotRun(needs) => Verdict::not_run(format!("needs {needs}")),
                Plan::Diagram => Verdict::new(Status::Diagram, "a drawing; nothing to measure"),
            };
            Judged { entry: *e, verdict }
        })
        .collect()
}

/// The figures of `study` that no run can give yet (what `study list` counts).
pub fn pending(study: &dyn crate::Study) -> Vec<&'static Entry> {
    study.catalogue().iter().filter(|e| matches!(e.plan, Plan::NotRun(_))).collect()
}

/// Repeated measurements of one quantity.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// One value per run.
    pub values: Vec<f64>,
    /// A hypervisor took [`results::cpu::STOLEN_PCT`] or more of the host's CPU time during
    /// some run that counted ([`TestResult::stolen_from`]): the values are partly the host's
    /// neighbours', so a judge draws from them only what [`Sample::moves`] lets stand.
    pub stolen: bool,
    /// Which way the steal can have moved the values.
    pub moves: Moves,
}

/// Which way a hypervisor's steal can have moved a stolen-from sample's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Moves {
    /// Either way, or not known: nothing is judged from a stolen-from sample.
    #[default]
    Either,
    /// Only down: work done per second, which CPU time taken from a host cannot raise; the
    /// undisturbed value is the measured one or higher.
    Down,
    /// Only up: time per unit of work; the undisturbed value is the measured one or lower.
    Up,
}

impl Sample {
    /// A sample of `values`; `None` when empty or any value is not finite.
    pub fn new(values: Vec<f64>) -> Option<Sample> {
        (!values.is_empty() && values.iter().all(|v| v.is_finite())).then_some(Sample {
            values,
            stolen: false,
            moves: Moves::Either,
        })
    }

    /// This sample as a rate (work per second): steal can only have lowered it.
    pub fn steal_lowers(self) -> Sample {
        Sample { moves: Moves::Down, ..self }
    }

    /// This sample as a time per unit of work: steal can only have raised it.
    pub fn steal_raises(self) -> Sample {
        Sample { moves: Moves::Up, ..self }
    }

    /// Whether the undisturbed values can lie above the measured ones (beyond their interval).
    fn could_be_higher(&self) -> bool {
        self.stolen && self.moves != Moves::Up
    }

    /// Whether the undisturbed values can lie below the measured ones.
    fn could_be_lower(&self) -> bool {
        self.stolen && self.moves != Moves::Down
    }

    /// `f` of every run of `r` (every iteration when it was repeated); `None` when the test
    /// failed or `f` has no value for a run.
    pub fn of(r: &TestResult, f: impl Fn(&TestResult) -> Option<f64>) -> Option<Sample> {
        if r.status == results::Status::Failed {
            return None;
        }
        let values: Option<Vec<f64>> = r.counted_runs().iter().map(&f).collect();
        let stolen = r.any_run_stolen_from();
        Sample::new(values?).map(|s| Sample { stolen, ..s })
    }

    /// `f` of each result, one value per result (separate runs of the same case).
    pub fn across<'a>(
        rs: impl IntoIterator<Item = &'a TestResult>,
        f: impl Fn(&TestResult) -> Option<f64>,
    ) -> Option<Sample> {
        let (mut values, mut stolen) = (Vec::new(), false);
        for r in rs {
            let s = Sample::of(r, &f)?;
            values.extend(s.values);
            stolen |= s.stolen;
        }
        Sample::new(values).map(|s| Sample { stolen, ..s })
    }

    /// The mean.
    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len() as f64
    }

    /// The sample standard deviation (`None` with one value).
    pub fn sd(&self) -> Option<f64> {
        let n = self.values.len();
        (n >= 2).then(|| {
            let m = self.mean();
            (self.values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        })
    }

    /// Half-width of the [`LEVEL_PCT`] interval of the mean (`None` with one value).
    pub fn half_width(&self) -> Option<f64> {
        let n = self.values.len() as f64;
        let t = stats::student::two_sided(LEVEL_PCT / 100.0, n - 1.0)?;
        Some(t * self.sd()? / n.sqrt())
    }

    /// `12.3 ± 0.4 (n 3)` in `unit`.
    pub fn show(&self, unit: &str) -> String {
        let n = self.values.len();
        match self.half_width() {
            Some(h) => format!("{} ± {}{unit} (95 % CI, n {n})", num(self.mean()), num(h)),
            None => format!("{}{unit} (one run)", num(self.mean())),
        }
    }
}

/// A number with three significant digits or so.
pub fn num(x: f64) -> String {
    match x.abs() {
        a if a >= 100.0 => format!("{x:.0}"),
        a if a >= 10.0 => format!("{x:.1}"),
        a if a >= 0.1 || a == 0.0 => format!("{x:.2}"),
        _ => format!("{x:.2e}"),
    }
}

/// `measured` against `expected` ± `tol` (a fraction: 0.1 = ±10 %), in `unit`. From a sample
/// with a stolen-from run ([`Sample::stolen`]) only a difference the steal cannot have made
/// ([`Sample::moves`]) is judged; the rest is *not measurable here*.
pub fn value(measured: Option<&Sample>, expected: f64, tol: f64, unit: &str) -> Verdict {
    let Some(s) = measured else { return Verdict::not_run("no measurement") };
    let (lo, hi) = (expected * (1.0 - tol), expected * (1.0 + tol));
    let (lo, hi) = (lo.min(hi), lo.max(hi));
    let mut ev = format!("measured {} against {}{unit} ± {:.0} %", s.show(unit), num(expected), tol * 100.0);
    let Some(h) = s.half_width() else {
        ev.push_str(": one run gives no interval");
        return Verdict::new(Status::NotMeasurable, ev);
    };
    let (a, b) = (s.mean() - h, s.mean() + h);
    let (below, above) = (b < lo && !s.could_be_higher(), a > hi && !s.could_be_lower());
    let status = if a >= lo && b <= hi && !s.stolen {
        Status::Reproduced
    } else if below || above {
        let _ = write!(ev, " ({:.2}×)", s.mean() / expected);
        if s.stolen {
            let _ = write!(ev, "{}", bound_note(s.moves));
        }
        Status::Differs
    } else if s.stolen {
        let _ = write!(ev, ": {}", stolen_reason());
        Status::NotMeasurable
    } else {
        ev.push_str(": the interval straddles the tolerance's edge");
        Status::NotMeasurable
    };
    Verdict { ratio: Some(s.mean() / expected), ..Verdict::new(status, ev) }
}

/// The change from `base` to `with`, in % of `base`'s mean, against the paper's `paper_pct`
/// ± `tol_pct` (percentage points); *not measurable here* when either side has a stolen-from
/// run ([`Sample::stolen`]).
pub fn effect(base: Option<&Sample>, with: Option<&Sample>, paper_pct: f64, tol_pct: f64) -> Verdict {
    let (Some(a), Some(b)) = (base, with) else { return Verdict::not_run("a case of the pair did not run") };
    let Some(d) = stats::compare::difference(&a.values, &b.values, LEVEL_PCT) else {
        return Verdict::not_run("no measurement");
    };
    let scale = if d.mean_a == 0.0 { 0.0 } else { 100.0 / d.mean_a };
    let mut ev = format!("change {:+.1} %", d.diff_pct);
    let Some(h) = d.half_width.map(|h| h * scale.abs()) else {
        ev.push_str(&format!(" against the paper's {paper_pct:+.0} %: one run each gives no interval"));
        return Verdict::new(Status::NotMeasurable, ev);
    };
    let _ = write!(
        ev,
        " ± {:.1} (95 % CI, n {}+{}) against the paper's {paper_pct:+.0} % ± {tol_pct:.0}",
        h,
        a.values.len(),
        b.values.len()
    );
    let (lo, hi) = (d.diff_pct - h, d.diff_pct + h);
    let status = if a.stolen || b.stolen {
        let _ = write!(ev, ": {}", stolen_reason());
        Status::NotMeasurable
    } else if lo <= 0.0 && hi >= 0.0 {
        ev.push_str(": the interval spans zero");
        Status::NotMeasurable
    } else if (d.diff_pct > 0.0) != (paper_pct > 0.0) {
        Status::Differs
    } else if lo >= paper_pct - tol_pct && hi <= paper_pct + tol_pct {
        Status::Reproduced
    } else {
        Status::SameShape
    };
    Verdict::new(status, ev)
}

/// The smallest difference, in % of the lower value, that an order counts: a paper's "this
/// above that" is a gap a reader sees on its plot, and two cases at one link's ceiling differ
/// significantly by 0.4 % in tight runs without either being above the other in that sense.
pub const MATERIAL_PCT: f64 = 2.0;

/// How one ordered pair came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Above, significantly and by at least [`MATERIAL_PCT`].
    Holds,
    /// Below, significantly and by at least [`MATERIAL_PCT`].
    Reversed,
    /// The whole interval of the difference within ± [`MATERIAL_PCT`]: no order.
    Level,
    /// Significant, but under [`MATERIAL_PCT`] and too uncertain to call level.
    Small,
    /// Neither: the interval is too wide (or there is none).
    Unclear(&'static str),
    /// Not drawn: a run that counted was stolen from ([`Sample::stolen`]), and the steal may
    /// have made the order.
    Stolen,
}

/// `hi` against `lo`, the paper putting `hi` above. With a stolen-from side, only an order
/// the steal cannot have made stands: `hi` above when `hi` can only be higher undisturbed and
/// `lo` only lower (and the other way round).
fn order(hi: &Sample, lo: &Sample) -> Order {
    let o = order_of_values(hi, lo);
    let stands = match o {
        Order::Holds => !hi.could_be_lower() && !lo.could_be_higher(),
        Order::Reversed => !hi.could_be_higher() && !lo.could_be_lower(),
        _ => !hi.stolen && !lo.stolen,
    };
    if stands {
        o
    } else {
        Order::Stolen
    }
}

/// `hi` against `lo` by their values alone.
fn order_of_values(hi: &Sample, lo: &Sample) -> Order {
    let d = stats::compare::difference(&lo.values, &hi.values, LEVEL_PCT);
    let Some((diff, hw)) = d.and_then(|d| d.half_width.map(|hw| (d.diff, hw))) else {
        return Order::Unclear("one run each, no interval");
    };
    let material = lo.mean().abs() * MATERIAL_PCT / 100.0;
    if diff.abs() + hw <= material {
        Order::Level
    } else if diff > hw && diff >= material {
        Order::Holds
    } else if diff < -hw && -diff >= material {
        Order::Reversed
    } else if diff.abs() > hw {
        Order::Small
    } else {
        Order::Unclear("not significant")
    }
}

/// Why no order or value is drawn from a sample with a stolen-from run.
fn stolen_reason() -> String {
    format!("the hypervisor took {:.0} % or more of the CPU time during its runs", results::cpu::STOLEN_PCT)
}

/// What a difference measured through steal that `moves` one way still says (nothing for a
/// sample that moves either way: no difference is judged from it).
fn bound_note(moves: Moves) -> String {
    let (moved, bound) = match moves {
        Moves::Up => ("raised", "an upper"),
        Moves::Down => ("lowered", "a lower"),
        Moves::Either => return String::new(),
    };
    format!("; {}, which can only have {moved} it: {bound} bound.", stolen_reason())
}

/// Two cases the paper compares, named: the first above (or level with) the second.
pub type Pair<'a> = (&'a str, Option<&'a Sample>, &'a str, Option<&'a Sample>);

/// Pairs the paper orders: in each, the first is above the second. Each pair holds when the
/// first is significantly above by at least [`MATERIAL_PCT`] of the second; *same shape* when
/// all hold; *differs* when one is significantly reversed, or *level* (the interval of its
/// difference within ± [`MATERIAL_PCT`]: the paper's gap is not there); *not measurable here*
/// when one cannot be told.
pub fn ordered(pairs: &[Pair]) -> Verdict {
    shape(pairs, &[])
}

/// As [`ordered`] for the `above` pairs, and pairs the paper draws `level` (a curve that stops
/// rising): each of those holds when the interval of its difference lies within ±
/// [`MATERIAL_PCT`], and *differs* when the two are significantly apart by more.
pub fn shape(above: &[Pair], level: &[Pair]) -> Verdict {
    let mut parts = Vec::new();
    let (mut against, mut unclear, mut missing) = (false, false, false);
    let (mut came_level, mut crossed) = (false, false);
    let expected = above.iter().map(|p| (p, true)).chain(level.iter().map(|p| (p, false)));
    for ((hi_name, hi, lo_name, lo), paper_above) in expected {
        let rel = if paper_above { ">" } else { "≈" };
        let (Some(h), Some(l)) = (hi, lo) else {
            missing = true;
            parts.push(format!("{hi_name} {rel} {lo_name}: not run"));
            continue;
        };
        let o = order(h, l);
        let ok = if paper_above { o == Order::Holds } else { o == Order::Level };
        let undecided = matches!(o, Order::Small | Order::Unclear(_) | Order::Stolen);
        unclear |= undecided;
        against |= !ok && !undecided;
        came_level |= paper_above && o == Order::Level;
        crossed |= !ok && matches!(o, Order::Holds | Order::Reversed);
        let mark = match o {
            Order::Holds if paper_above => "holds".to_string(),
            Order::Holds => "apart, the first above".into(),
            Order::Reversed if paper_above => "reversed".into(),
            Order::Reversed => "apart, the second above".into(),
            Order::Level => format!("level (within {MATERIAL_PCT} % of each other)"),
            Order::Small => format!("significant, but under {MATERIAL_PCT} % and not level"),
            Order::Unclear(why) => why.into(),
            Order::Stolen => stolen_reason(),
        };
        parts.push(format!("{hi_name} {} {rel} {lo_name} {}: {mark}", num(h.mean()), num(l.mean())));
    }
    let status = match (against, unclear, missing || (above.is_empty() && level.is_empty())) {
        (true, _, _) => Status::Differs,
        (false, true, _) => Status::NotMeasurable,
        (false, false, true) => Status::NotRun,
        (false, false, false) => Status::SameShape,
    };
    Verdict { level: came_level && !crossed, ..Verdict::new(status, parts.join("; ")) }
}

/// The paper's set-up run two ways on Linux: as the paper's stack behaved (`paper`, e.g.
/// segments capped at a window below one MSS) and Linux's own way (`linux`). Linux's way
/// significantly slower (by at least [`MATERIAL_PCT`]): it *differs* from the paper's stack,
/// for the reason `why`; faster, or level with it: Linux carried the set-up as the paper's
/// stack did (*reproduced*); otherwise the order's status (not significant, one run, not run).
pub fn linux_way(paper: (&str, Option<&Sample>), linux: Option<&Sample>, why: &str) -> Verdict {
    let v = ordered(&[(paper.0, paper.1, "Linux's way", linux)]);
    match v.status {
        Status::SameShape => Verdict { status: Status::Differs, ..v }.because(why),
        Status::Differs => Verdict {
            status: Status::Reproduced,
            evidence: format!("{}: Linux carried it as the paper's stack did", v.evidence),
            ..v
        },
        _ => v,
    }
}

/// A value computed exactly (from the model: no run-to-run spread) against `expected` ±
/// `tol` (a fraction).
pub fn computed(value: Option<f64>, expected: f64, tol: f64, unit: &str) -> Verdict {
    observed("computed", value, expected, tol, unit)
}

/// A value read off once with no run-to-run spread (`what`: computed by the model, or a
/// count from a trace) against `expected` ± `tol` (a fraction; 0: exactly).
pub fn observed(what: &str, value: Option<f64>, expected: f64, tol: f64, unit: &str) -> Verdict {
    let Some(x) = value.filter(|x| x.is_finite()) else { return Verdict::not_run(format!("no {what}")) };
    // A trace's count or a probe's percentile is one reading of the set-up, not a rate with a
    // run-to-run spread: said so, so that a status from it is not read as an interval's.
    let once = if what == "computed" { "" } else { " (one reading of the set-up, no run-to-run spread)" };
    let ev = format!("{what} {}{unit} against {}{unit} ± {:.0} %{once}", num(x), num(expected), tol * 100.0);
    let within = (x - expected).abs() <= (expected * tol).abs();
    Verdict::new(if within { Status::Reproduced } else { Status::Differs }, ev)
}

/// An estimate given with its own 95 % interval (a median with order-statistic bounds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The estimate.
    pub at: f64,
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

/// The paper puts `above` over `below`: *same shape* when the intervals are apart in that
/// order, *differs* when apart the other way, *not measurable here* when they overlap.
pub fn above(above: Option<Interval>, below: Option<Interval>, names: (&str, &str), unit: &str) -> Verdict {
    let (Some(a), Some(b)) = (above, below) else { return Verdict::not_run("no measurement") };
    let show = |i: Interval| format!("{} [{}, {}]{unit}", num(i.at), num(i.lo), num(i.hi));
    let ev = format!("{} {} against {} {} (95 % intervals)", names.0, show(a), names.1, show(b));
    let status = if a.lo > b.hi {
        Status::SameShape
    } else if a.hi < b.lo {
        Status::Differs
    } else {
        Status::NotMeasurable
    };
    Verdict::new(status, ev)
}

/// A share counted once (`k` of `n` events: PDUs lost of PDUs offered), in %, against
/// `expected` % ± `tol` (a fraction), with the 95 % Wilson interval of a binomial share as
/// its uncertainty: *reproduced* when the interval lies in the band, *differs* when wholly
/// outside it, *not measurable here* otherwise.
pub fn proportion(k: u64, n: u64, expected: f64, tol: f64) -> Verdict {
    if n == 0 {
        return Verdict::not_run("nothing counted");
    }
    let (nf, p) = (n as f64, k as f64 / n as f64);
    let z = 1.96_f64;
    let centre = (p + z * z / (2.0 * nf)) / (1.0 + z * z / nf);
    let half = z / (1.0 + z * z / nf) * (p * (1.0 - p) / nf + z * z / (4.0 * nf * nf)).sqrt();
    let (a, b) = ((centre - half) * 100.0, (centre + half) * 100.0);
    let (lo, hi) = (expected * (1.0 - tol), expected * (1.0 + tol));
    let ev = format!(
        "{k} of {n} = {} % [{}, {}] (95 % Wilson interval) against {} % ± {:.0} %",
        num(p * 100.0),
        num(a),
        num(b),
        num(expected),
        tol * 100.0
    );
    let status = if a >= lo && b <= hi {
        Status::Reproduced
    } else if b < lo || a > hi {
        Status::Differs
    } else {
        Status::NotMeasurable
    };
    Verdict { ratio: (expected > 0.0).then(|| p * 100.0 / expected), ..Verdict::new(status, ev) }
}
