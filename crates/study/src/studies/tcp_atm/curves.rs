//! Seed 000's curves against message size. Figure 2: the model's TCP bandwidth of each
//! message sent as its own segments over OC-3c CLIP. Figures 8 and 9: the Sun sending to a
//! slow (P-100) and to a fast (PPro-200) receiver, every message size the matrix ran.

use results::TestResult;

use crate::compare::mbps;
use crate::html::series;
use crate::matrix::cell_key;
use crate::status::{self, num, Sample, Status, Verdict};
use crate::Outcome;

/// Figure 9: the share of the ceiling the fast receivers reached (§4: "about 75 %").
const FAST_SHARE_PCT: f64 = 75.0;
/// Figure 8: the slow Linux receiver "less than half" of the bandwidth (§4).
const SLOW_SHARE_PCT: f64 = 50.0;
/// The message sizes of Figure 2's curve.
const MODEL_LENS: [u32; 9] = [64, 256, 1024, 4096, 8192, 9128, 16384, 32768, 65536];

/// The model's goodput of `len`-byte messages each sent as its own segments (TCP with
/// timestamps, as Linux sends them) over `path`, Mbit/s.
fn model_mbps(path: &str, len: u32) -> Option<f64> {
    let link = emu::spec::parse(path).ok()?.model_link(emu::spec::Direction::Up)?;
    let stack = model::Stack::tcp(model::Ip::V4, true);
    Some(model::goodput::message_goodput(&link, &stack, u64::from(len)).ok()?.goodput_bps / 1e6)
}

/// Figure 2's curve, (message size, Mbit/s).
pub(super) fn model_curve(path: &str) -> Vec<(f64, f64)> {
    MODEL_LENS.iter().filter_map(|&l| Some((f64::from(l), model_mbps(path, l)?))).collect()
}

/// Figure 2: the curve's highest point against the paper's 134.5 Mbit/s (±1 %), with the
/// curve in the evidence: it rises with the message size to one full segment.
pub(super) fn figure2(path: &str) -> Verdict {
    let curve = model_curve(path);
    let best = curve.iter().map(|p| p.1).fold(None, |m: Option<f64>, y| Some(m.map_or(y, |m| m.max(y))));
    let v = status::computed(best, 134.5, 0.01, " Mbit/s");
    let points: Vec<String> = curve.iter().map(|(x, y)| format!("{x:.0} B {}", num(*y))).collect();
    let rising = curve.windows(2).take_while(|w| w[0].0 < 9128.0).all(|w| w[1].1 > w[0].1);
    let ev = format!(
        "model, TCP with timestamps over OC-3c CLIP, each message its own segments: highest {}; curve {}",
        v.evidence,
        points.join(", ")
    );
    let status = if rising { v.status } else { Status::Differs };
    Verdict { evidence: ev, status, ..v }
}

/// The matrix cell `sender → receiver`'s results, by message size.
fn cell_curve<'a>(out: &'a Outcome, sender: &str, receiver: &str) -> Vec<(u32, &'a TestResult)> {
    let prefix = cell_key(sender, receiver, "b64K-l");
    out.done
        .iter()
        .filter(|d| d.case.key.starts_with(&prefix))
        .map(|d| (d.case.spec.send_len, &d.result))
        .collect()
}

/// Every run's goodput in % of the model's ceiling for its case.
fn share(r: &TestResult) -> Option<Sample> {
    let limit = r.reference.as_ref()?.limit_bps / 1e6;
    Sample::of(r, |run| Some(mbps(run)? / limit * 100.0)).map(Sample::steal_lowers)
}

/// Figure 8: at every message size both ran, the fast receiver (Sun → PPro200) above the slow
/// one (Sun → P100), significantly; *differs* when the slow receiver's share of the ceiling is
/// wholly above half at a size (the paper's Linux P-100 used less than half).
pub(super) fn figure8(out: &Outcome) -> Verdict {
    let (slow, fast) = (cell_curve(out, "Sun", "P100"), cell_curve(out, "Sun", "PPro200"));
    let pairs: Vec<(String, Option<Sample>, Option<Sample>)> = slow
        .iter()
        .filter_map(|(l, s)| {
            let f = fast.iter().find(|(m, _)| m == l)?.1;
            Some((format!("{l} B: fast receiver"), share(f), share(s)))
        })
        .collect();
    if pairs.is_empty() {
        return Verdict::not_run("no message size ran into both the slow and the fast receiver");
    }
    let refs: Vec<(&str, Option<&Sample>, &str, Option<&Sample>)> = pairs
        .iter()
        .map(|(l, f, s)| (l.as_str(), f.as_ref(), "slow one, % of the ceiling", s.as_ref()))
        .collect();
    let v = status::ordered(&refs);
    let above_half = pairs
        .iter()
        .filter_map(|p| p.2.as_ref())
        .any(|s| s.half_width().is_some_and(|h| s.mean() - h > SLOW_SHARE_PCT));
    if above_half && v.status != Status::NotRun {
        let why =
            "The slow receiver's CPU quota does not hold it under half the link, as the paper's P-100 was.";
        return Verdict::new(Status::Differs, format!("{}. {why}", v.evidence));
    }
    v
}

/// Figure 9: the fast receiver's (Sun → PPro200) share of the ceiling at its best message
/// size against the paper's about 75 % (± 10 %); the evidence gives every size's share.
pub(super) fn figure9(out: &Outcome) -> Verdict {
    let curve: Vec<(u32, Sample)> =
        cell_curve(out, "Sun", "PPro200").into_iter().filter_map(|(l, r)| Some((l, share(r)?))).collect();
    if curve.is_empty() {
        return Verdict::not_run("no Sun → PPro200 cell ran");
    }
    let best = curve.iter().max_by(|a, b| a.1.mean().total_cmp(&b.1.mean()));
    let v = status::value(best.map(|b| &b.1), FAST_SHARE_PCT, 0.1, " % of the ceiling");
    let each: Vec<String> = curve.iter().map(|(l, s)| format!("{l} B {} %", num(s.mean()))).collect();
    let at = best.map_or(String::new(), |b| format!(" at {} B", b.0));
    Verdict { evidence: format!("Sun → PPro200{at}: {}; curve {}", v.evidence, each.join(", ")), ..v }
}

/// Figures 8 and 9's curves: goodput against message size into the slow and the fast receiver.
pub(super) fn receivers_chart(out: &Outcome) -> String {
    let curve = |name: &str, r: &str| {
        series(
            name,
            cell_curve(out, "Sun", r).into_iter().filter_map(|(l, res)| Some((f64::from(l), mbps(res)?))),
        )
    };
    crate::html::curve_chart(
        "Figures 8, 9: Sun to a slow (P100) and a fast (PPro200) receiver",
        "message size (bytes)",
        "Mbit/s",
        vec![
            curve("→P100, tcplab", "P100"),
            curve("→PPro200, tcplab", "PPro200"),
            series("→P100, paper", [(8192.0, 64.57), (65536.0, 64.57)]),
            series("→PPro200, paper", [(8192.0, 102.95), (65536.0, 102.95)]),
        ],
    )
}
