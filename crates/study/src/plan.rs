//! What a study runs: stages (one place each — an emulated path, the loopback, or the real
//! HOST) of cases (one test spec each), in the paper's design (`Full`) or the same shape
//! shortened (`Quick`).

use results::{ConfidenceTarget, Direction, TestKind, TestSpec};

/// How much of the paper's design to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The same shape, ≤ 2 minutes.
    Quick,
    /// The paper's sizes, windows, repetitions and durations.
    Full,
}

impl Mode {
    /// `quick` or `full`.
    pub fn id(self) -> &'static str {
        match self {
            Mode::Quick => "quick",
            Mode::Full => "full",
        }
    }

    /// `quick` when quick, `full` otherwise, as a choice between two values.
    pub fn pick<T>(self, quick: T, full: T) -> T {
        match self {
            Mode::Quick => quick,
            Mode::Full => full,
        }
    }
}

/// Where a stage runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    /// The embedded loopback server on this host (seed 000's loop-back baseline).
    Loopback,
    /// An emulated path: the spec, and CPU quotas of the slow end systems (`client=20%`).
    Path {
        /// Path spec or preset (`atm-oc3-clip`, `atm-oc3-clip,cellloss=0.01%`).
        spec: String,
        /// `--host-cpu` quotas, if any.
        host_cpu: Option<String>,
    },
    /// A third-party test between two real hosts of an inventory (a matrix cell,
    /// [`crate::matrix`]).
    Between {
        /// The sending host: its server runs the client end.
        sender: results::MeshHost,
        /// The receiving host.
        receiver: results::MeshHost,
    },
}

/// One place and the tests run there.
#[derive(Debug, Clone)]
pub struct Stage {
    /// What the stage stands for in the paper (`ATM OC-3c CLIP, fast hosts`).
    pub label: String,
    /// Where it runs on emulated paths.
    pub place: Where,
    /// Whether the stage only means something on an emulated path (an impairment or a CPU
    /// quota): against a real HOST it is skipped, and the report says so.
    pub emulated_only: bool,
    /// Record each TCP test's segment flow (tracefs, root).
    pub trace: bool,
    /// The tests.
    pub cases: Vec<Case>,
}

impl Stage {
    /// A stage on the emulated path `spec`.
    pub fn path(label: &str, spec: &str, cases: Vec<Case>) -> Stage {
        let place = Where::Path { spec: spec.into(), host_cpu: None };
        Stage { label: label.into(), place, emulated_only: false, trace: false, cases }
    }

    /// A stage on `spec` with hosts slowed by CPU quotas (`client=10%`).
    pub fn slow(label: &str, spec: &str, host_cpu: &str, cases: Vec<Case>) -> Stage {
        let place = Where::Path { spec: spec.into(), host_cpu: Some(host_cpu.into()) };
        Stage { label: label.into(), place, emulated_only: true, trace: false, cases }
    }

    /// The path spec, if the stage runs on one.
    pub fn spec(&self) -> Option<&str> {
        match &self.place {
            Where::Path { spec, .. } => Some(spec),
            Where::Loopback | Where::Between { .. } => None,
        }
    }
}

/// One test of a study.
#[derive(Debug, Clone)]
pub struct Case {
    /// Unique key the study's comparisons look it up by (`clip-len-8192`).
    pub key: String,
    /// The test.
    pub spec: TestSpec,
    /// Repetitions (the paper's repeat-until-confident or fixed count), if any.
    pub confidence: Option<ConfidenceTarget>,
    /// Probe the path's round trip beside the test (the paper's pings), every this often.
    pub probe: Option<std::time::Duration>,
}

impl Case {
    /// A case with `key` and `spec`, run once.
    pub fn new(key: impl Into<String>, spec: TestSpec) -> Case {
        Case { key: key.into(), spec, confidence: None, probe: None }
    }

    /// With the RTT probe beside it, one probe every `interval` (a single run: a probed
    /// case is not repeated).
    pub fn probed(mut self, interval: std::time::Duration) -> Case {
        (self.probe, self.confidence) = (Some(interval), None);
        self
    }

    /// Repeated as `confidence` says (`None`: once).
    pub fn repeated(mut self, confidence: Option<ConfidenceTarget>) -> Case {
        self.confidence = confidence;
        self
    }
}

/// Exactly `n` repetitions (the paper ran each point `n` times and averaged).
pub fn times(n: u32) -> ConfidenceTarget {
    ConfidenceTarget {
        level_pct: 99.0,
        width_pct: 100.0,
        min_iterations: n,
        max_iterations: n,
        result_only: true,
    }
}

/// netperf's `-i max,min -I level,width` as a paper ran it without `-c`/`-C`: repeat until
/// `level` % sure of the mean within ± width/2 %. netperf clamps both counts to 3…30 (the
/// `-i 10,2` of seed 000 ran at least 3 times), and with no CPU measured it judges the
/// throughput alone: a metric it did not measure never holds the loop.
pub fn netperf_iterations(level_pct: f64, width_pct: f64, max: u32, min: u32) -> ConfidenceTarget {
    let (min, max) = (min.clamp(3, 30), max.clamp(3, 30));
    ConfidenceTarget {
        level_pct,
        width_pct,
        min_iterations: min,
        max_iterations: max.max(min),
        result_only: true,
    }
}

/// A TCP stream of `len`-byte writes and reads for `secs` seconds, with socket buffers of
/// `buf` bytes on both ends when given.
pub fn stream(len: u32, buf: Option<u32>, secs: u64) -> TestSpec {
    let mut s = base(TestKind::TcpStream, secs);
    (s.send_len, s.recv_len) = (len, len);
    if let Some(b) = buf {
        // A u32 byte count is a value `-w` always takes.
        let _ = (results::setting::WINDOW.set)(&mut s, &results::ParamValue::Int(b.into()));
    }
    s
}

/// Bytes of TCP options on every Linux segment with timestamps (its default); TCP_MAXSEG
/// counts them, so a payload of N bytes needs a maximum segment of N + 12.
const TIMESTAMP_OPTION: u32 = 12;

/// Caps `s`'s segments at `window` bytes of payload. The papers' BSD stacks sent what a window
/// below one MSS allowed; Linux builds full-MSS segments that such a window never holds
/// whole, and holds them back (until its persist timer, or Nagle's until a delayed ACK):
/// seeds 002 and 004 run the paper's way with this, and one case each the Linux way.
pub fn segments_within(s: &mut TestSpec, window: u32) {
    s.mss = Some(window + TIMESTAMP_OPTION);
}

/// The same stream with the server sending (the client receives).
pub fn reverse(mut s: TestSpec) -> TestSpec {
    s.direction = Direction::Reverse;
    s
}

/// TCP request/response with `req`- and `resp`-byte messages.
pub fn rr(req: u32, resp: u32, secs: u64) -> TestSpec {
    let mut s = base(TestKind::TcpRr, secs);
    (s.request_len, s.response_len) = (req, resp);
    s
}

/// A UDP stream of `len`-byte datagrams at `rate` bit/s (0: as fast as possible).
pub fn udp(len: u32, rate: u64, secs: u64) -> TestSpec {
    let mut s = base(TestKind::UdpStream, secs);
    (s.send_len, s.recv_len, s.rate_bps) = (len, len, rate);
    s
}

/// A test type's defaults with the duration set.
pub fn base(kind: TestKind, secs: u64) -> TestSpec {
    let mut s = engine::registry::defaults(kind);
    s.duration_ms = secs * 1000;
    s
}

/// Overrides every case's duration (`-t`), for a trimmed run; byte-limited cases (ttcp's
/// n × l, a file) are cut to at most 1 MiB per second asked, and repetitions to one.
pub fn override_seconds(stages: &mut [Stage], secs: u64) {
    for c in stages.iter_mut().flat_map(|s| s.cases.iter_mut()) {
        match c.spec.bytes_limit {
            None => {
                c.spec.duration_ms = secs * 1000;
                c.spec.omit_ms = c.spec.omit_ms.min(secs * 500);
            }
            Some(b) => c.spec.bytes_limit = Some(b.min(secs << 20)),
        }
        c.confidence = None;
    }
}

/// Seconds of setup and teardown per test run (connections, the drain, the store),
/// measured on this 2-core VM: e.g. 3 runs of a 2-s test took 6.5–7 s.
const PER_RUN_S: f64 = 0.25;
/// Round trips a test's setup and ending take (handshakes, the control exchange, the last
/// ACKs): a 25-s stream over the 170-ms path took about 27 s.
const RTTS_PER_RUN: f64 = 10.0;
/// Seconds a traced run adds (the trace's set-up and its decoding): 3 traced 2-s runs took
/// 6–8 s in a release build (segment-flow --quick, 2026-11-27; a debug build takes about 10 s).
const TRACE_PER_RUN_S: f64 = 0.5;
/// Seconds to set up a stage's place (namespaces, the emulator, the server).
const PER_STAGE_S: f64 = 0.3;

/// Seconds a list of stages takes: each run's duration (a byte-limited case counted as its
/// size at the stage's link rate, or at `assumed_bps` without one) plus its setup, and each
/// stage's; a case repeated to confidence counted at its fewest iterations.
pub fn estimate_s(stages: &[Stage], assumed_bps: f64) -> u64 {
    estimate_range_s(stages, assumed_bps).0
}

/// As [`estimate_s`], with every case repeated to confidence counted at its fewest and at its
/// most iterations: a design repeated until its interval is narrow enough (netperf's `-i 10,2`)
/// takes as long as its noise makes it, anywhere in that range.
pub fn estimate_range_s(stages: &[Stage], assumed_bps: f64) -> (u64, u64) {
    let (mut low, mut high) = (0.0, 0.0);
    for st in stages {
        let path = st.spec().and_then(|s| emu::spec::parse(s).ok());
        let rate = path.as_ref().and_then(|p| p.up.rate).map_or(assumed_bps, |r| r.bits_per_sec() as f64);
        let rtt = path.as_ref().map_or(0.0, |p| (p.up.delay + p.down.delay).as_secs_f64());
        low += PER_STAGE_S;
        high += PER_STAGE_S;
        let per_run = PER_RUN_S + RTTS_PER_RUN * rtt + if st.trace { TRACE_PER_RUN_S } else { 0.0 };
        for c in &st.cases {
            let once = match c.spec.bytes_limit {
                Some(b) => b as f64 * 8.0 / (rate * 0.9),
                None => c.spec.duration_ms as f64 / 1000.0,
            };
            let (fewest, most) =
                c.confidence.as_ref().map_or((1, 1), |t| (t.min_iterations.max(1), t.max_iterations.max(1)));
            low += (once + per_run) * f64::from(fewest);
            high += (once + per_run) * f64::from(most.max(fewest));
        }
    }
    (low.ceil() as u64, high.ceil() as u64)
}

/// An estimate as people read it: `~45 s`, `~3 min 5 s`, `~2 h 31 min`, or a range
/// (`~3 h 10 min – ~15 h 54 min`) when repeating to confidence can take more than a fifth
/// longer than the fewest repetitions ([`estimate_range_s`]).
pub fn estimate_text((low, high): (u64, u64)) -> String {
    let one = |secs: u64| match secs {
        s if s < 60 => format!("~{s} s"),
        s if s < 3600 => format!("~{} min {} s", s / 60, s % 60),
        s => format!("~{} h {} min", s / 3600, s % 3600 / 60),
    };
    if high as f64 > low as f64 * 1.2 {
        format!("{} – {}", one(low), one(high))
    } else {
        one(low)
    }
}

/// Where finished cases came out in their range of runs: for each case repeated to
/// confidence with room to vary, (runs taken − fewest) ÷ (most − fewest), averaged, with the
/// number of such cases; `None` when there are none.
pub fn pace<'a>(done: impl IntoIterator<Item = (&'a Case, u32)>) -> Option<(f64, usize)> {
    let shares: Vec<f64> = done
        .into_iter()
        .filter_map(|(c, runs)| {
            let t = c.confidence.as_ref()?;
            let (fewest, most) = (t.min_iterations.max(1), t.max_iterations.max(1));
            (most > fewest).then(|| f64::from(runs.clamp(fewest, most) - fewest) / f64::from(most - fewest))
        })
        .collect();
    (!shares.is_empty()).then(|| (shares.iter().sum::<f64>() / shares.len() as f64, shares.len()))
}

/// What is left of a resumed run as people read it: the range of [`estimate_range_s`], and
/// where in it the rest ends if its cases repeat as the finished ones did ([`pace`]).
pub fn left_text((low, high): (u64, u64), pace: Option<(f64, usize)>) -> String {
    let range = estimate_text((low, high));
    match pace {
        Some((share, n)) if range.contains(" – ") => {
            let likely = low + (high.saturating_sub(low) as f64 * share).round() as u64;
            let tests = if n == 1 { "test" } else { "tests" };
            format!(
                "{range}; {} if the rest repeat as the {n} repeated {tests} done did",
                estimate_text((likely, likely))
            )
        }
        _ => range,
    }
}

/// Runs the cases named in `keys` `n` times each (`times(n)`): the cases a figure's status is
/// judged on need an interval, in a short run and in the paper's full design alike (a paper
/// that reported one run per point gives no interval to judge by). In `Full` mode a case that
/// already repeats as the paper did (its own confidence target) keeps it.
pub fn repeat_judged(mode: Mode, stages: &mut [Stage], keys: &[&str], n: u32) {
    let judged =
        stages.iter_mut().flat_map(|s| s.cases.iter_mut()).filter(|c| keys.contains(&c.key.as_str()));
    for c in judged {
        if mode == Mode::Quick || c.confidence.is_none() {
            c.confidence = Some(times(n));
        }
    }
}
