//! Why a measured number differs from the paper's or the model's, in one or two sentences,
//! taken from what the diagnosis found limited the test (results::Diagnosis) and from the
//! ratios. Small differences get no explanation.

use results::{Cause, TestResult};

use crate::compare::Row;

/// Ratios closer to 1 than this are "the same" and need no explanation.
const NEAR: f64 = 0.1;

/// The explanation of `row` (measured from `r`), or an empty string.
pub fn why(row: &Row, r: Option<&TestResult>) -> String {
    let Some(r) = r else { return String::new() };
    if r.status == results::Status::Failed {
        let e = r.error.as_ref().map_or("failed", |e| e.message.as_str());
        return format!("The test failed: {e}.");
    }
    let vs_paper = row.vs_paper();
    let vs_model = row.vs_model();
    let far = |x: Option<f64>| x.is_some_and(|x| (x - 1.0).abs() > NEAR);
    if !far(vs_paper) && !far(vs_model) {
        return String::new();
    }
    let mut out = Vec::new();
    // Only a rate is "more" on a faster host: a loss share or a delay that is larger is not.
    let rate = matches!(row.unit, "Mbit/s" | "trans/s" | "M");
    if let Some(x) = vs_paper.filter(|x| *x > 2.0 && rate) {
        out.push(format!(
            "tcplab measured {x:.1}× the paper's number: today's CPUs, memory and stacks do that much more \
             than the paper's end systems."
        ));
    }
    let stolen = stolen_runs(r).filter(|_| matches!(row.unit, "Mbit/s" | "trans/s"));
    let split = stolen.as_ref().is_some_and(|s| s.clean > 0);
    out.extend(stolen.map(|s| s.sentence()));
    if let Some(d) = r.diagnosis.first().filter(|_| !split) {
        let window = window_sentence(d.primary.bound_bps, row);
        out.push(
            window
                .filter(|_| is_window(d.primary.cause))
                .unwrap_or_else(|| cause_sentence(d.primary.cause, vs_paper, r)),
        );
        out.push(format!("Diagnosis: {}.", d.primary.evidence.trim_end_matches('.')));
    }
    if far(vs_model) && vs_model.is_some_and(|x| x < 1.0) && out.is_empty() {
        out.push("Below the model's ceiling; the diagnosis found no single limit.".into());
    }
    out.retain(|s| !s.is_empty());
    out.join(" ")
}

/// A repeated case's runs the hypervisor stole from ([`TestResult::stolen_from`]), when they
/// ran slower than the others.
#[derive(Debug, Clone, PartialEq)]
struct Stolen {
    /// How many runs the hypervisor took that much from.
    runs: usize,
    /// How many runs it did not.
    clean: usize,
    /// The share it took, lowest and highest, %.
    steal: (f64, f64),
    /// Those runs' results as shares of the other runs' mean, lowest and highest.
    share: (f64, f64),
}

impl Stolen {
    fn sentence(&self) -> String {
        let (runs, all) = (self.runs, self.runs + self.clean);
        let range = |(a, b): (f64, f64), k: f64| match (a * k).round() == (b * k).round() {
            true => format!("{:.0}", a * k),
            false => format!("{:.0}–{:.0}", a * k, b * k),
        };
        let steal = format!("{} % of this host's CPU time", range(self.steal, 1.0));
        match (self.clean, all) {
            (0, 1) => format!("The hypervisor took {steal} during the run (steal): the number is a lower bound."),
            (0, _) => format!("The hypervisor took {steal} in each of its {all} runs (steal): the number is a lower bound."),
            (clean, _) => format!(
                "{runs} of its {all} runs lost {steal} to the hypervisor (steal) and ran at {} % of the mean of \
                 the {clean} others: the host, not the path, set this mean, and the diagnosis of the mean does not apply.",
                range(self.share, 100.0)
            ),
        }
    }
}

/// The runs of `r` the hypervisor stole from ([`TestResult::stolen_from`]) that still
/// counted (measured before runs were set aside, or more than its maximum): `Some` when every
/// run was such, or when their mean result is below the lowest of the other runs'.
fn stolen_runs(r: &TestResult) -> Option<Stolen> {
    let runs = r.repetition.as_ref().map_or(std::slice::from_ref(r), |rep| rep.runs.as_slice());
    let (hit, clean): (Vec<&TestResult>, Vec<_>) = runs.iter().partition(|t| t.stolen_from());
    let measured = |v: Vec<&TestResult>| -> Vec<(f64, f64)> {
        v.into_iter().filter_map(|t| Some((t.stolen_pct(), t.summary.headline_value()?))).collect()
    };
    let (hit, clean) = (measured(hit), measured(clean));
    let lowest = |v: &[(f64, f64)], i: fn(&(f64, f64)) -> f64| v.iter().map(i).fold(f64::INFINITY, f64::min);
    let highest = |v: &[(f64, f64)], i: fn(&(f64, f64)) -> f64| v.iter().map(i).fold(0.0, f64::max);
    let mean = |v: &[(f64, f64)]| v.iter().map(|x| x.1).sum::<f64>() / v.len().max(1) as f64;
    if hit.is_empty() || (!clean.is_empty() && mean(&hit) >= lowest(&clean, |x| x.1)) {
        return None;
    }
    let base = mean(&clean);
    let share = |x: f64| if base > 0.0 { x / base } else { 0.0 };
    Some(Stolen {
        runs: hit.len(),
        clean: clean.len(),
        steal: (lowest(&hit, |x| x.0), highest(&hit, |x| x.0)),
        share: (share(lowest(&hit, |x| x.1)), share(highest(&hit, |x| x.1))),
    })
}

/// A window cause (the receiver's or the send buffer).
fn is_window(cause: Cause) -> bool {
    matches!(cause, Cause::ReceiveWindow | Cause::SendBuffer)
}

/// A window cause said with its bound beside the rate measured (`row`, in Mbit/s), so that
/// the sentence never contradicts the number: a window that allows the rate, or one that
/// allows far more and so only closed.
fn window_sentence(bound_bps: Option<f64>, row: &Row) -> Option<String> {
    let (bound, measured) = (bound_bps? / 1e6, row.measured.filter(|m| *m > 0.0 && row.unit == "Mbit/s")?);
    Some(if bound >= results::diagnosis::WINDOW_ROOM * measured {
        format!(
            "The window was often closed, though its size over the RTT allows {:.0}× this rate: the receiver \
             read slower than the data came.",
            bound / measured
        )
    } else if bound < measured {
        // The diagnosis keeps a bound down to 0.9× the rate (a mean RTT includes queueing).
        format!(
            "The socket buffers (the window) limit: window ÷ mean RTT comes to {}, {:.0} % of the rate \
             measured, so the window held the flow at about this rate.",
            mbps(bound),
            100.0 * bound / measured
        )
    } else {
        format!("The socket buffers (the window) limit: window ÷ RTT allows {}.", mbps(bound))
    })
}

/// `33825 Mbit/s`, `210.0 Mbit/s`, `8.28 Mbit/s`: three significant figures or more.
fn mbps(v: f64) -> String {
    match v {
        v if v >= 1000.0 => format!("{v:.0} Mbit/s"),
        v if v >= 10.0 => format!("{v:.1} Mbit/s"),
        v => format!("{v:.2} Mbit/s"),
    }
}

/// What a limiting cause means next to the paper's number.
fn cause_sentence(cause: Cause, vs_paper: Option<f64>, r: &TestResult) -> String {
    let above = vs_paper.is_some_and(|x| x > 1.0 + NEAR);
    let retrans: u64 = r.summary.directions.iter().filter_map(|d| d.retransmits).sum();
    match cause {
        Cause::Link if above => "A modern host is CPU-rich: the emulated link is the limit, where the paper's \
                                 end systems (CPU, adapter, driver) were."
            .into(),
        Cause::Link => "The link is the limit.".into(),
        Cause::QueueOverflow => format!(
            "Loss limits a loss-based control: the path's drop-tail queue overflows ({retrans} retransmissions), \
             and the window is cut on every loss."
        ),
        Cause::Congestion | Cause::RandomLoss => {
            format!("Loss limits a loss-based control ({retrans} retransmissions): the window is cut on every loss.")
        }
        Cause::Pacing => "The sender's own pacing (-b) is the limit.".into(),
        Cause::Emulator => "The link emulator released packets late on this host: the number is a lower bound.".into(),
        Cause::ReceiverOverrun => "The receiver's socket buffer overflowed: it read slower than data arrived.".into(),
        Cause::SendErrors => "The sender's kernel refused sends (ENOBUFS).".into(),
        Cause::Fragmentation => "Datagrams larger than the MTU left as IP fragments.".into(),
        Cause::PathRtt => "The path's round trip bounds each transaction.".into(),
        Cause::WakeUp => "Waking the sleeping ends bounds each transaction.".into(),
        Cause::HostCpu => "An end system's CPU bounds each transaction.".into(),
        Cause::SenderCpu | Cause::ReceiverCpu if above => {
            "An end system's CPU limits, as in the paper, but today's CPU does more per second.".into()
        }
        Cause::SenderCpu | Cause::ReceiverCpu => {
            "An end system's CPU limits (a CPU quota emulates the paper's slow host).".into()
        }
        Cause::ReceiveWindow | Cause::SendBuffer => {
            "The socket buffers (the window) limit: window ÷ RTT is below the link's rate.".into()
        }
        Cause::StopAndGo => {
            "Nagle and delayed ACKs wait on each other: buffers of a few segments make TCP stop-and-go, \
             as the paper's small windows did."
                .into()
        }
        Cause::Application => "The application's writes or reads are too small for the rate.".into(),
        Cause::OtherLoad => "Other work on this machine kept its CPUs busy during the test (the machine \
                             was shared); the number is a lower bound."
            .into(),
        Cause::Unknown => String::new(),
    }
}
