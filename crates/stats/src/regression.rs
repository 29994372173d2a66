//! Whether a path got slower (`tcplab archive regressions`, the dashboard): per series — one
//! path, one test — the newest results against that series' own history, with the interval
//! statistics of [`crate::compare`].
//!
//! With two or more newest values the difference of the means gets a Welch interval
//! ([`crate::compare::difference`]). With one newest value (the usual case: one result per
//! scheduled round) there is no spread of its own: the interval is the Student-t prediction
//! interval of one new value from the history, `t(level, n−1) · s · √(1 + 1/n)`, which asks the
//! same question (could this value come from the history's distribution?). Fewer than two
//! history values: no interval, no verdict.
//!
//! A series regressed when the change is significant (its interval excludes 0), in the worse
//! direction of the metric, and larger than the threshold in % of the history's mean — the rule
//! of `compare --fail-if-slower`.

use std::collections::BTreeMap;

pub use results::regression::{Judgement, Series, Verdict};
use results::{Better, Metric};

use crate::compare::{self, Difference};
use crate::student;

/// One stored result of a series, as the archive lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// Which series.
    pub series: Series,
    /// Start of the test, ms since the Unix epoch.
    pub at_unix_ms: u64,
    /// The headline value; `None` when the test failed or measured none.
    pub value: Option<f64>,
    /// Why it failed, when it did.
    pub failure: Option<String>,
}

/// The rule's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Confidence level of the interval, %.
    pub level_pct: f64,
    /// Changes up to this many % of the history's mean are not verdicts.
    pub threshold_pct: f64,
    /// How many newest results are judged together (at least 1).
    pub latest: usize,
}

/// A history's count, mean and sum of squared deviations from the mean: all that the
/// one-newest-value interval needs, so that a summary kept per day (the dashboard's grid) is
/// judged exactly as the values themselves would be.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Moments {
    /// Count.
    pub n: u64,
    /// Mean.
    pub mean: f64,
    /// Sum of squared deviations from the mean.
    pub m2: f64,
}

impl Moments {
    /// The moments of `values` (two passes).
    pub fn of(values: &[f64]) -> Moments {
        let n = values.len() as u64;
        let mean = if n == 0 { 0.0 } else { values.iter().sum::<f64>() / n as f64 };
        Moments { n, mean, m2: values.iter().map(|x| (x - mean).powi(2)).sum() }
    }

    /// The moments of both sets together (Chan et al.'s pairwise combination).
    pub fn merge(&self, o: &Moments) -> Moments {
        if self.n == 0 || o.n == 0 {
            return if self.n == 0 { *o } else { *self };
        }
        let (a, b) = (self.n as f64, o.n as f64);
        let delta = o.mean - self.mean;
        let mean = self.mean + delta * b / (a + b);
        Moments { n: self.n + o.n, mean, m2: self.m2 + o.m2 + delta * delta * a * b / (a + b) }
    }

    /// The moments with one value `x` of the set taken out.
    pub fn without(&self, x: f64) -> Moments {
        if self.n <= 1 {
            return Moments::default();
        }
        let n = self.n as f64;
        let mean = (n * self.mean - x) / (n - 1.0);
        Moments { n: self.n - 1, mean, m2: (self.m2 - (x - mean) * (x - self.mean)).max(0.0) }
    }
}

/// The newest values' mean minus the history's, with its interval (see the module docs);
/// `None` when either is empty.
pub fn shift(history: &[f64], latest: &[f64], level_pct: f64) -> Option<Difference> {
    if latest.len() != 1 || history.len() < 2 {
        return compare::difference(history, latest, level_pct);
    }
    shift_from(&Moments::of(history), latest[0], level_pct)
}

/// One newest value `latest` against a history of at least two values given by its moments:
/// the Student-t prediction interval (see the module docs); `None` with fewer than two.
pub fn shift_from(history: &Moments, latest: f64, level_pct: f64) -> Option<Difference> {
    if history.n < 2 {
        return None;
    }
    let n = history.n as f64;
    let mean = history.mean;
    let var = history.m2 / (n - 1.0);
    let se = (var * (1.0 + 1.0 / n)).sqrt();
    let half_width =
        if se == 0.0 { Some(0.0) } else { student::two_sided(level_pct / 100.0, n - 1.0).map(|t| t * se) };
    let diff = latest - mean;
    let diff_pct = if mean == 0.0 { 0.0 } else { 100.0 * diff / mean };
    Some(Difference { mean_a: mean, mean_b: latest, diff, half_width, diff_pct })
}

/// The verdict on a difference of metric `metric` (see the module docs).
pub fn verdict_of(metric: &str, d: &Difference, threshold_pct: f64) -> Verdict {
    verdict(d, better(metric), threshold_pct)
}

/// Judges every series in `observations` (any order): the `rule.latest` newest results
/// against all earlier ones. Sorted worst first (regressed, failed, unknown, improved,
/// steady), then by series.
pub fn judge_all(observations: &[Observation], rule: &Rule) -> Vec<Judgement> {
    let mut by_series: BTreeMap<&Series, Vec<&Observation>> = BTreeMap::new();
    for o in observations {
        by_series.entry(&o.series).or_default().push(o);
    }
    let mut out: Vec<Judgement> = by_series
        .into_iter()
        .map(|(series, mut obs)| {
            obs.sort_by_key(|o| o.at_unix_ms);
            judge(series, &obs, rule)
        })
        .collect();
    out.sort_by(|a, b| (a.verdict, &a.series).cmp(&(b.verdict, &b.series)));
    out
}

/// One series, its observations oldest first (at least one).
fn judge(series: &Series, obs: &[&Observation], rule: &Rule) -> Judgement {
    let latest_unix_ms = obs.last().map_or(0, |o| o.at_unix_ms);
    let mut j = Judgement {
        series: series.clone(),
        verdict: Verdict::Unknown,
        history: Vec::new(),
        latest: Vec::new(),
        latest_unix_ms,
        history_mean: 0.0,
        latest_mean: 0.0,
        change_pct: 0.0,
        interval_pct: None,
        failure: None,
    };
    if let Some(newest) = obs.last().filter(|o| o.value.is_none()) {
        j.verdict = Verdict::Failed;
        j.failure = Some(newest.failure.clone().unwrap_or_else(|| "no value measured".into()));
        j.history = obs.iter().filter_map(|o| o.value).collect();
        j.history_mean = mean(&j.history);
        return j;
    }
    let values: Vec<f64> = obs.iter().filter_map(|o| o.value).collect();
    let split = values.len().saturating_sub(rule.latest.max(1));
    j.history = values[..split].to_vec();
    j.latest = values[split..].to_vec();
    j.history_mean = mean(&j.history);
    j.latest_mean = mean(&j.latest);
    let Some(d) = shift(&j.history, &j.latest, rule.level_pct) else { return j };
    j.change_pct = d.diff_pct;
    j.interval_pct = d.half_width.map(|h| if d.mean_a == 0.0 { 0.0 } else { 100.0 * h / d.mean_a.abs() });
    j.verdict = verdict(&d, better(&series.metric), rule.threshold_pct);
    j
}

fn better(metric: &str) -> Better {
    Metric::from_id(metric).map_or(Better::Higher, |m| m.better())
}

fn verdict(d: &Difference, better: Better, threshold_pct: f64) -> Verdict {
    if d.half_width.is_none() {
        return Verdict::Unknown;
    }
    let worse = match better {
        Better::Higher => d.diff < 0.0,
        Better::Lower => d.diff > 0.0,
    };
    match (d.significant() && d.diff_pct.abs() > threshold_pct, worse) {
        (true, true) => Verdict::Regressed,
        (true, false) => Verdict::Improved,
        (false, _) => Verdict::Steady,
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Moments merged per part, with one value taken out, judge as the values do.
        #[test]
        fn moments_merged_and_reduced_match_the_values(
            v in proptest::collection::vec(9.0e9..1.1e10f64, 4..60), cut in 1usize..3
        ) {
            let cut = cut.min(v.len() - 2);
            let whole = Moments::of(&v[..v.len() - 1]);
            let parts = Moments::of(&v[..cut]).merge(&Moments::of(&v[cut..])).without(v[v.len() - 1]);
            prop_assert_eq!(parts.n, whole.n);
            prop_assert!((parts.mean - whole.mean).abs() <= 1e-6 * whole.mean);
            prop_assert!((parts.m2 - whole.m2).abs() <= 1e-6 * whole.m2.max(1.0));
            let (a, b) = (shift(&v[..v.len() - 1], &[5e9], 95.0), shift_from(&parts, 5e9, 95.0));
            let (a, b) = (a.unwrap(), b.unwrap());
            prop_assert!((a.half_width.unwrap() - b.half_width.unwrap()).abs() <= 1e-5 * a.half_width.unwrap().max(1.0));
        }
    }

    fn series(receiver: &str) -> Series {
        Series {
            sender: "a".into(),
            receiver: receiver.into(),
            test: "tcp-stream".into(),
            label: "stream".into(),
            metric: "goodput_bps".into(),
        }
    }

    fn obs(receiver: &str, values: &[Option<f64>]) -> Vec<Observation> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| Observation {
                series: series(receiver),
                at_unix_ms: 1000 * i as u64,
                value: *v,
                failure: v.is_none().then(|| "connect: refused".to_string()),
            })
            .collect()
    }

    const RULE: Rule = Rule { level_pct: 95.0, threshold_pct: 10.0, latest: 1 };

    /// History 9, 10, 11 (mean 10, s 1, n 3): the 95 % prediction half-width is
    /// t(0.95, 2) · 1 · √(4/3) = 4.303 · 1.1547 = 4.968.
    #[test]
    fn prediction_interval_known_answer() {
        let d = shift(&[9.0, 10.0, 11.0], &[5.0], 95.0).unwrap_or_else(|| unreachable!());
        let h = d.half_width.unwrap_or(0.0);
        assert!((h - 4.968).abs() < 0.005, "{h}");
        assert!(d.significant() && (d.diff_pct + 50.0).abs() < 1e-9);
        let d = shift(&[9.0, 10.0, 11.0], &[6.0], 95.0).unwrap_or_else(|| unreachable!());
        assert!(!d.significant(), "a drop of 4 lies inside ±4.97");
    }

    #[test]
    fn verdicts_per_series() {
        let steady: Vec<Option<f64>> = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5].map(Some).to_vec();
        let mut all = obs("steady", &steady);
        let mut drop = steady.clone();
        drop.push(Some(70.0));
        all.extend(obs("slower", &drop));
        let mut small = steady.clone();
        small.push(Some(95.0)); // significant (s ≈ 1.4) but under 10 %
        all.extend(obs("small", &small));
        let mut failed = steady.clone();
        failed.push(None);
        all.extend(obs("down", &failed));
        all.extend(obs("new", &[Some(5.0), Some(1.0)]));
        let got: Vec<(String, Verdict)> =
            judge_all(&all, &RULE).into_iter().map(|j| (j.series.receiver, j.verdict)).collect();
        let want = [
            ("slower", Verdict::Regressed),
            ("down", Verdict::Failed),
            ("new", Verdict::Unknown),
            ("small", Verdict::Steady),
            ("steady", Verdict::Steady),
        ];
        assert_eq!(got, want.map(|(r, v)| (r.to_string(), v)));
    }

    #[test]
    fn several_latest_values_use_welch() {
        let mut v: Vec<Option<f64>> = [100.0, 101.0, 99.0, 100.0].map(Some).to_vec();
        v.extend([Some(80.0), Some(81.0), Some(79.0)]);
        let j = judge_all(&obs("b", &v), &Rule { latest: 3, ..RULE });
        assert_eq!(j[0].verdict, Verdict::Regressed);
        assert_eq!((j[0].history.len(), j[0].latest.len()), (4, 3));
        assert!((j[0].change_pct + 20.0).abs() < 1e-9);
    }

    proptest! {
        /// A newest value equal to the history's mean is never a verdict.
        #[test]
        fn the_mean_itself_is_steady(h in prop::collection::vec(1.0f64..1000.0, 2..20)) {
            let m = h.iter().sum::<f64>() / h.len() as f64;
            let mut v: Vec<Option<f64>> = h.iter().copied().map(Some).collect();
            v.push(Some(m));
            let j = judge_all(&obs("x", &v), &Rule { threshold_pct: 0.0, ..RULE });
            prop_assert_eq!(j[0].verdict, Verdict::Steady);
        }

        /// Lowering the newest value never turns a regression into something milder.
        #[test]
        fn lower_is_never_better(h in prop::collection::vec(50.0f64..150.0, 3..12), x in 0.0f64..200.0, dx in 0.0f64..50.0) {
            let run = |last: f64| {
                let mut v: Vec<Option<f64>> = h.iter().copied().map(Some).collect();
                v.push(Some(last));
                judge_all(&obs("x", &v), &RULE)[0].verdict
            };
            if run(x) == Verdict::Regressed {
                prop_assert_eq!(run((x - dx).max(0.0)), Verdict::Regressed);
            }
        }
    }
}
