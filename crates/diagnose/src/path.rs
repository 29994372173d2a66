//! What an emulated path (`--path`) changes in a result's warnings. Client, server and the
//! emulator all run on this host, in namespaces of their own: the engine sees two addresses
//! and cannot know that both ends read the same CPU counters, so this is said here — once
//! for both ends. A request/response latency that the path's configured delay explains is
//! the path, not a busy CPU.

use results::{Summary, SummaryTable, TestResult, Warning, WarningKind};

/// Share of the median latency the configured round trip must reach to explain it.
pub const LATENCY_EXPLAINED_FRAC: f64 = 0.9;

/// The emulated path a test crossed, as far as the diagnosis needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    /// The path spec as given (`gige`, `rate=10mbit,delay=20ms`).
    pub spec: String,
    /// The configured round trip (both directions' delay), µs.
    pub rtt_us: f64,
    /// The path's MTU, bytes, when known.
    pub mtu: Option<u32>,
}

/// Puts the path's facts into `result`'s warnings: the shared host (worded for the path), one
/// CPU warning for both ends instead of two, and none that blames a CPU for a latency the
/// path's delay explains.
pub fn warnings(result: &mut TestResult, path: &Path) {
    let w = &mut result.warnings;
    if !w.iter().any(|w| w.kind == WarningKind::SameHost) {
        w.insert(0, Warning {
            kind: WarningKind::SameHost,
            message: format!(
                "client, server and the emulator of --path {} share this host's CPUs: system CPU counts all three",
                path.spec
            ),
            advice: "read each end's own process time (tcplab N% of a core); run `tcplab server` on another host to separate them".into(),
        });
    }
    let ends = [
        ("client", result.local.cpu.as_ref()),
        ("server", result.remote.as_ref().and_then(|r| r.cpu.as_ref())),
    ];
    let had = |kind| w.iter().any(|x: &Warning| x.kind == kind);
    let (saturated, stolen) = (had(WarningKind::CpuSaturated), had(WarningKind::CpuStolen));
    w.retain(|x| !matches!(x.kind, WarningKind::CpuSaturated | WarningKind::CpuStolen));
    if saturated && !latency_is_the_path(&result.summary, path) {
        w.extend(results::warning::cpu_saturated(ends, true));
    }
    if stolen {
        w.extend(results::warning::cpu_stolen(ends, true));
    }
    if let Some(late) = result.emu.as_ref().and_then(emulator_late) {
        w.retain(|x| x.kind != WarningKind::EmulatorLate);
        w.push(late);
    }
}

/// The warning for an emulator whose release lateness p99 exceeded
/// [`results::emu::LATE_P99_US`] in some direction.
pub fn emulator_late(emu: &results::EmuReport) -> Option<Warning> {
    let late: Vec<String> = emu
        .late_directions()
        .map(|d| {
            let p99 = d.lateness_p99_us.unwrap_or(0.0);
            format!("{} p99 {p99:.0} µs, max {:.0} µs", d.direction, d.lateness_max_us)
        })
        .collect();
    (!late.is_empty()).then(|| Warning {
        kind: WarningKind::EmulatorLate,
        message: format!(
            "the link emulator released packets late ({}; above {:.0} µs): the emulator, not the protocol, may have limited this result",
            late.join("; "),
            results::emu::LATE_P99_US
        ),
        advice: "repeat on an idle host (the emulator's threads share the CPUs with both ends); compare the lateness figures across runs".into(),
    })
}

/// Whether a request/response test's median latency is (within 10 %) the path's round trip.
fn latency_is_the_path(s: &Summary, path: &Path) -> bool {
    let Some(rr) = s.rr.as_ref().filter(|_| s.produced().has_table(SummaryTable::Transactions)) else {
        return false;
    };
    path.rtt_us > 0.0 && rr.latency.p50_us > 0.0 && path.rtt_us >= LATENCY_EXPLAINED_FRAC * rr.latency.p50_us
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{CpuUsage, Produces, RrSummary, SideMeasurement, TestKind, TestSpec};

    fn busy() -> Option<CpuUsage> {
        Some(CpuUsage { busiest_pct: 100.0, window_s: 1.0, ..CpuUsage::default() })
    }

    fn result(table: SummaryTable, p50_us: f64) -> TestResult {
        let mut r = TestResult::new("rr", TestSpec::new(TestKind::TcpRr), "198.18.0.2:1", 0);
        r.local = SideMeasurement { cpu: busy(), ..SideMeasurement::default() };
        r.remote = Some(SideMeasurement { cpu: busy(), ..SideMeasurement::default() });
        let mut rr = RrSummary::default();
        rr.latency.p50_us = p50_us;
        let produces = Produces { tables: vec![table], ..Produces::default() };
        r.summary = Summary { produces, rr: Some(rr), ..Summary::default() };
        // What the engine says, seeing two addresses: one warning per end.
        r.warnings = results::warning::cpu_saturated(
            [("client", r.local.cpu.as_ref()), ("server", r.remote.as_ref().and_then(|m| m.cpu.as_ref()))],
            false,
        );
        r
    }

    fn kinds(r: &TestResult) -> Vec<WarningKind> {
        r.warnings.iter().map(|w| w.kind).collect()
    }

    #[test]
    fn a_path_keeps_the_shared_host_and_one_cpu_warning() {
        let path = Path { spec: "gige".into(), rtt_us: 0.0, mtu: None };
        let mut r = result(SummaryTable::Streams, 0.0);
        assert_eq!(r.warnings.len(), 2, "client cpu0 and server cpu0");
        warnings(&mut r, &path);
        assert_eq!(kinds(&r), vec![WarningKind::SameHost, WarningKind::CpuSaturated]);
        assert!(r.warnings[0].message.contains("emulator of --path gige share this host's CPUs"));
        warnings(&mut r, &path);
        assert_eq!(r.warnings.len(), 2, "applying it twice changes nothing");
    }

    #[test]
    fn a_late_emulator_is_named_once() {
        let path = Path { spec: "transatlantic-bdp".into(), rtt_us: 170_000.0, mtu: None };
        let mut r = result(SummaryTable::Streams, 0.0);
        let dir = |name: &str, p99| results::EmuDirection {
            direction: name.into(),
            lateness_p99_us: Some(p99),
            lateness_max_us: 4000.0,
            ..Default::default()
        };
        r.emu = Some(results::EmuReport {
            path: path.spec.clone(),
            offload: true,
            directions: vec![dir("up", 80.0), dir("down", 700.0)],
            second_path: None,
        });
        warnings(&mut r, &path);
        warnings(&mut r, &path);
        let late: Vec<_> = r.warnings.iter().filter(|w| w.kind == WarningKind::EmulatorLate).collect();
        assert_eq!(late.len(), 1, "{:?}", r.warnings);
        assert!(late[0].message.contains("down p99 700 µs, max 4000 µs"), "{}", late[0].message);
        assert!(!late[0].message.contains("up p99"), "{}", late[0].message);
        r.emu.as_mut().unwrap().directions[1].lateness_p99_us = Some(90.0);
        let mut on_time = result(SummaryTable::Streams, 0.0);
        on_time.emu = r.emu.clone();
        warnings(&mut on_time, &path);
        assert!(!kinds(&on_time).contains(&WarningKind::EmulatorLate));
    }

    #[test]
    fn a_latency_the_delay_explains_is_not_cpu_bound() {
        let path = Path { spec: "rate=100mbit,delay=10ms".into(), rtt_us: 20_000.0, mtu: None };
        let mut r = result(SummaryTable::Transactions, 20_150.0);
        warnings(&mut r, &path);
        assert_eq!(kinds(&r), vec![WarningKind::SameHost]);
        // Twice the configured round trip: something else added the rest.
        let mut r = result(SummaryTable::Transactions, 40_000.0);
        warnings(&mut r, &path);
        assert_eq!(kinds(&r), vec![WarningKind::SameHost, WarningKind::CpuSaturated]);
    }
}
