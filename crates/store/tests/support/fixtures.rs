//! What the archive tests store: a one-stream result, an empty run, a sweep point.
#![allow(dead_code, reason = "each test binary uses some of these")]

use results::{
    DirectionSummary, Estimate, Headline, HostInfo, Interval, Metric, ParamSetting, ParamValue, RunRecord,
    Shape, SideMeasurement, StreamInterval, SweepPoint, TestKind, TestResult, TestSpec, Warning, WarningKind,
};

/// A TCP stream's result of `bps` goodput, two intervals, one warning.
pub fn result(bps: f64) -> TestResult {
    let iv = Interval {
        start_s: 0.0,
        end_s: 1.0,
        omitted: false,
        streams: vec![StreamInterval { index: 0, bytes: 1000, ..StreamInterval::default() }],
    };
    let mut r = TestResult {
        local: SideMeasurement {
            measured_s: 1.0,
            intervals: vec![iv.clone(), iv],
            ..SideMeasurement::default()
        },
        warnings: vec![Warning { kind: WarningKind::SameHost, message: "m".into(), advice: "a".into() }],
        ..TestResult::new("stream", TestSpec::new(TestKind::TcpStream), "127.0.0.1:9", 5)
    };
    r.summary.directions.push(DirectionSummary { receiver_bps: bps, ..DirectionSummary::default() });
    r.summary.headline = Some(Headline::measured(Metric::Goodput, bps));
    r.summary.shape = Some(Shape::TcpBulk);
    r
}

/// A run of this tool on `host` with nothing in it yet.
pub fn record(host: &str) -> RunRecord {
    let local = HostInfo { hostname: host.into(), cpus: 2, ..HostInfo::default() };
    RunRecord { command_line: vec!["tcplab".into(), "stream".into()], ..RunRecord::new("0.1.0", 1000, local) }
}

/// Point `index` of a sweep, at `bps`.
pub fn point(index: u32, bps: f64) -> SweepPoint {
    SweepPoint {
        index,
        coords: Vec::new(),
        params: vec![ParamSetting { name: "len".into(), value: ParamValue::Int(512) }],
        test_index: 0,
        headline: Estimate {
            metric: "goodput_bps".into(),
            mean: bps,
            values: vec![bps],
            ..Estimate::default()
        },
        met: true,
    }
}
