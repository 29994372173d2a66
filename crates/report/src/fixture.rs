//! Deterministic results for the renderers' snapshot tests: a stream grid, rr tests with
//! latency distributions, and a sweep with repetition.

use results::{
    Axis, BufferGrant, CpuCost, CpuUsage, DirectionSummary, Estimate, Headline, HostInfo, Interval,
    LatencySummary, Metric, ParamSetting, ParamValue, Role, RrSummary, RunRecord, Shape, SideMeasurement,
    SocketReport, StreamInterval, StreamStats, Summary, Sweep, SweepPlan, SweepPoint, TestKind, TestResult,
    TestSpec, UdpCounts, UdpSummary, Warning, WarningKind,
};

pub fn host(name: &str) -> HostInfo {
    HostInfo {
        hostname: name.into(),
        kernel: "Linux 6.18.44".into(),
        cpu_model: "Test CPU @ 3.0GHz".into(),
        cpus: 2,
        congestion_available: vec!["reno".into(), "cubic".into(), "bbr".into()],
        congestion_default: "bbr".into(),
        virtualized: true,
        tool_version: "0.1.0".into(),
    }
}

fn stream_stats(index: u32, role: Role, bytes: u64) -> StreamStats {
    StreamStats {
        index,
        role,
        bytes,
        bytes_total: bytes,
        calls: bytes / 1024,
        transactions: 0,
        socket: SocketReport {
            send: BufferGrant { requested: None, actual: 131_072 },
            receive: BufferGrant { requested: None, actual: 131_072 },
            mss: 65_483,
            congestion: "bbr".into(),
            ..SocketReport::default()
        },
        tcp: None,
        placement: Default::default(),
        udp: None,
    }
}

fn intervals(per_s: &[u64], transactions: bool, tcp: bool) -> Vec<Interval> {
    per_s
        .iter()
        .enumerate()
        .map(|(i, v)| Interval {
            start_s: i as f64,
            end_s: i as f64 + 1.0,
            omitted: false,
            streams: vec![StreamInterval {
                index: 0,
                bytes: if transactions { 0 } else { *v },
                transactions: if transactions { *v } else { 0 },
                retransmits: if tcp { i as u64 % 2 } else { 0 },
                cwnd_bytes: if tcp { 64_000 + 16_000 * i as u64 } else { 0 },
                rtt_us: if tcp { 40 + 10 * i as u32 } else { 0 },
                udp: None,
            }],
        })
        .collect()
}

fn cpu(util: f64) -> CpuUsage {
    CpuUsage { cpus: 2, window_s: 3.0, util_pct: util, cores_busy: util / 50.0, ..CpuUsage::default() }
}

fn cost(util: f64, sd: f64, unit: &str, m: Option<f64>) -> CpuCost {
    CpuCost {
        util_pct: util,
        cores_busy: util / 50.0,
        service_demand_us: sd,
        service_demand_unit: unit.into(),
        figure_of_merit: m,
    }
}

fn result(
    label: &str,
    spec: TestSpec,
    local: SideMeasurement,
    remote: SideMeasurement,
    summary: Summary,
) -> TestResult {
    TestResult {
        local,
        remote: Some(remote),
        summary,
        ..TestResult::new(label, spec, "127.0.0.1:9180", 1_795_306_713_000)
    }
}

/// A forward stream test with `-l len -w window` moving `gbps`.
pub fn stream(len: u32, window: u32, gbps: f64) -> TestResult {
    let mut spec = TestSpec::new(TestKind::TcpStream);
    spec.duration_ms = 3000;
    (spec.send_len, spec.recv_len) = (len, len);
    // A u32 byte count is a value `-w` always takes.
    let _ = (results::setting::WINDOW.set)(&mut spec, &results::ParamValue::Int(window.into()));
    let per_s = (gbps * 1e9 / 8.0) as u64;
    let ivs = [per_s * 9 / 10, per_s, per_s * 11 / 10];
    let local = SideMeasurement {
        measured_s: 3.0,
        streams: vec![stream_stats(0, Role::Send, per_s * 3)],
        intervals: intervals(&ivs, false, true),
        cpu: Some(cpu(60.0)),
        latency: None,
        sections: Default::default(),
    };
    let remote = SideMeasurement {
        measured_s: 3.0,
        streams: vec![stream_stats(0, Role::Recv, per_s * 3)],
        intervals: intervals(&ivs, false, false),
        cpu: Some(cpu(45.0)),
        latency: None,
        sections: Default::default(),
    };
    let summary = Summary {
        figures: Vec::new(),
        headline: Some(Headline::measured(Metric::Goodput, gbps * 1e9)),
        shape: Some(Shape::TcpBulk),
        produces: Default::default(),
        own_tables: Vec::new(),
        own_plots: Vec::new(),
        directions: vec![DirectionSummary {
            direction: "client→server".into(),
            streams: 1,
            sender_bytes: per_s * 3,
            sender_bps: gbps * 1e9,
            receiver_bytes: per_s * 3,
            receiver_bps: gbps * 1e9,
            retransmits: Some(1),
            rtt_min_us: Some(40),
            rtt_mean_us: Some(50),
            rtt_max_us: Some(60),
            busy_frac: Some(0.99),
            rwnd_limited_frac: Some(f64::from(65_536 / window.max(1)) * 0.3),
            sndbuf_limited_frac: Some(0.02),
            writes_per_mb: Some(1_048_576.0 / f64::from(len.max(1))),
            of_reference: None,
        }],
        rr: None,
        local_cost: Some(cost(60.0, 0.5, "us/KB", Some(gbps * 1000.0 / 1.2))),
        remote_cost: Some(cost(45.0, 0.37, "us/KB", Some(gbps * 1000.0 / 0.9))),
        udp: Vec::new(),
        sections: Default::default(),
    };
    let mut r = result("stream", spec, local, remote, summary);
    r.warnings.push(Warning {
        kind: WarningKind::SameHost,
        message: "client and server share this host".into(),
        advice: "run the server on another host".into(),
    });
    r
}

/// A latency distribution around `p50` µs with a tail.
fn latency(p50: f64) -> LatencySummary {
    let cdf = (0..=20).map(|i| (p50 * (0.6 + 0.08 * f64::from(i)).powf(2.0), f64::from(i) / 20.0)).collect();
    LatencySummary {
        count: 40_000,
        min_us: p50 * 0.36,
        mean_us: p50 * 1.1,
        stddev_us: p50 * 0.4,
        p50_us: p50,
        p90_us: p50 * 1.6,
        p99_us: p50 * 3.0,
        p999_us: p50 * 8.0,
        max_us: p50 * 40.0,
        cdf,
    }
}

/// An rr test with `req,resp` sizes at `tps` transactions/s.
pub fn rr(req: u32, resp: u32, tps: f64) -> TestResult {
    let mut spec = TestSpec::new(TestKind::TcpRr);
    (spec.request_len, spec.response_len, spec.duration_ms) = (req, resp, 3000);
    let t = tps as u64;
    let mut s = stream_stats(0, Role::Request, 0);
    s.transactions = t * 3;
    let lat = latency(1e6 / tps);
    let local = SideMeasurement {
        measured_s: 3.0,
        streams: vec![s],
        intervals: intervals(&[t - t / 20, t, t + t / 20], true, false),
        cpu: Some(cpu(80.0)),
        latency: Some(lat.clone()),
        sections: Default::default(),
    };
    let remote = SideMeasurement { measured_s: 3.0, cpu: Some(cpu(70.0)), ..SideMeasurement::default() };
    let summary = Summary {
        figures: Vec::new(),
        headline: Some(Headline::measured(Metric::TransactionRate, tps)),
        shape: Some(Shape::Transactions),
        produces: Default::default(),
        own_tables: Vec::new(),
        own_plots: Vec::new(),
        directions: Vec::new(),
        rr: Some(RrSummary {
            flows: 1,
            transactions: t * 3,
            trans_per_s: tps,
            rtt_from_rate_us: 1e6 / tps,
            latency: lat,
            lost: None,
        }),
        local_cost: Some(cost(80.0, 100.0, "us/tran", None)),
        remote_cost: Some(cost(70.0, 90.0, "us/tran", None)),
        udp: Vec::new(),
        sections: Default::default(),
    };
    result(&format!("rr {req}/{resp}"), spec, local, remote, summary)
}

/// A forward UDP stream test: the client sends, the server receives, losing `lost` and
/// reordering one datagram per interval; jitter `None` stands for GRO-coalesced trains.
pub fn udp(lost: u64, jitter_ms: Option<f64>) -> TestResult {
    let mut spec = TestSpec::new(TestKind::UdpStream);
    (spec.send_len, spec.rate_bps, spec.duration_ms) = (1400, 100_000_000, 3000);
    let with_udp = |ivs: Vec<Interval>, udp: UdpCounts| -> Vec<Interval> {
        ivs.into_iter()
            .map(|mut iv| {
                iv.streams.iter_mut().for_each(|s| s.udp = Some(udp.clone()));
                iv
            })
            .collect()
    };
    let per_s = [12_500_000, 12_400_000, 12_500_000];
    let tx = UdpCounts { sent: 8929, ..UdpCounts::default() };
    let rx =
        UdpCounts { received: 8929 - lost, lost, out_of_order: 1, jitter_us: 35.0, ..UdpCounts::default() };
    let local = SideMeasurement {
        measured_s: 3.0,
        streams: vec![StreamStats { udp: Some(tx.clone()), ..stream_stats(0, Role::Send, 37_400_000) }],
        intervals: with_udp(intervals(&per_s, false, false), tx),
        cpu: Some(cpu(20.0)),
        ..SideMeasurement::default()
    };
    let remote = SideMeasurement {
        measured_s: 3.0,
        streams: vec![StreamStats { udp: Some(rx.clone()), ..stream_stats(0, Role::Recv, 37_300_000) }],
        intervals: with_udp(intervals(&per_s, false, false), rx),
        cpu: Some(cpu(25.0)),
        ..SideMeasurement::default()
    };
    let summary = Summary {
        figures: Vec::new(),
        headline: Some(Headline::measured(Metric::Goodput, 99.5e6)),
        shape: Some(Shape::UdpBulk),
        udp: vec![UdpSummary {
            direction: "client→server".into(),
            streams: 1,
            datagram_len: 1400,
            target_bps: 100_000_000,
            sender_bps: 1e8,
            receiver_bps: 99.5e6,
            sent: 26_787,
            received: 26_787 - 3 * lost,
            lost: 3 * lost,
            loss_pct: 100.0 * 3.0 * lost as f64 / 26_787.0,
            out_of_order: 3,
            jitter_ms,
            ..UdpSummary::default()
        }],
        ..Summary::default()
    };
    result("udp", spec, local, remote, summary)
}

/// A run of `tests`.
pub fn run(tests: Vec<TestResult>) -> RunRecord {
    RunRecord {
        tool_version: "0.1.0".into(),
        command_line: vec!["tcplab".into(), "stream".into(), "127.0.0.1".into()],
        started_unix_ms: 1_795_306_713_000,
        local_host: host("client-host"),
        remote_host: Some(host("server-host")),
        tests,
        error: None,
        id: None,
        sweep: None,
        cc: None,
    }
}

/// Stream runs over `-l` 1K/8K/64K × `-w` 32K/256K, plus rr 1/1 and 64/64.
pub fn loose_runs() -> Vec<RunRecord> {
    let mut runs = Vec::new();
    for (w, scale) in [(32 * 1024, 0.5), (256 * 1024, 1.0)] {
        for (l, g) in [(1024, 5.0), (8 * 1024, 20.0), (64 * 1024, 16.0)] {
            runs.push(run(vec![stream(l, w, g * scale)]));
        }
    }
    runs.push(run(vec![rr(1, 1, 40_000.0), rr(64, 64, 34_000.0)]));
    runs
}

/// A sweep of window 32K/64K × len 1K/4K/16K, three repetitions per point.
pub fn sweep_run() -> RunRecord {
    let int = |v: u64| ParamValue::Int(v);
    let windows = [32 * 1024, 64 * 1024];
    let lens = [1024, 4096, 16_384];
    let base = TestSpec::new(TestKind::TcpStream);
    let plan = SweepPlan {
        base,
        axes: vec![
            Axis {
                name: "window".into(),
                tied: Vec::new(),
                values: windows.iter().map(|v| int(*v)).collect(),
                text: "32K,64K".into(),
            },
            Axis {
                name: "len".into(),
                tied: Vec::new(),
                values: lens.iter().map(|v| int(*v)).collect(),
                text: "1K..16K:*4".into(),
            },
        ],
        confidence: None,
        metric: "goodput_bps".into(),
        mesh: None,
    };
    let mut tests = Vec::new();
    let mut points = Vec::new();
    for (wi, w) in windows.iter().enumerate() {
        for (li, l) in lens.iter().enumerate() {
            let gbps = 2.0 * (li as f64 + 1.0) * (wi as f64 + 1.0);
            let index = (wi * lens.len() + li) as u32;
            tests.push(stream(*l as u32, *w as u32, gbps));
            points.push(SweepPoint {
                index,
                coords: vec![wi as u32, li as u32],
                params: vec![
                    ParamSetting { name: "window".into(), value: int(*w) },
                    ParamSetting { name: "len".into(), value: int(*l) },
                ],
                test_index: index,
                headline: Estimate {
                    metric: "goodput_bps".into(),
                    mean: gbps * 1e9,
                    stddev: gbps * 1e7,
                    half_width: gbps * 3e7,
                    level_pct: 95.0,
                    width_pct: 6.0,
                    met: true,
                    values: vec![gbps * 0.99e9, gbps * 1e9, gbps * 1.01e9],
                },
                met: true,
            });
        }
    }
    let mut r = run(tests);
    r.id = Some(7);
    r.sweep = Some(Sweep { plan, points, complete: true });
    r
}

/// A stream test that failed before its measured window: the engine's zero counters kept,
/// the goodput unknown.
pub fn failed_stream() -> TestResult {
    let mut r = stream(8192, 65_536, 0.0);
    r.label = "stream failed".into();
    r.status = results::Status::Failed;
    r.error = Some(results::TestError { code: "connect".into(), message: "connection refused".into() });
    r.summary.headline = Some(Headline::unknown(Metric::Goodput));
    r.summary.local_cost = None;
    r.summary.remote_cost = None;
    r.local.intervals.clear();
    r.remote = None;
    r.warnings.clear();
    r
}

/// An rr test that failed before measuring: zero transactions, the rate unknown.
pub fn failed_rr() -> TestResult {
    let mut r = rr(1, 1, 1.0);
    r.label = "rr failed".into();
    r.status = results::Status::Failed;
    r.error = Some(results::TestError { code: "timeout".into(), message: "no response".into() });
    r.summary.headline = Some(Headline::unknown(Metric::TransactionRate));
    if let Some(s) = r.summary.rr.as_mut() {
        (s.transactions, s.trans_per_s, s.latency.count) = (0, 0.0, 0);
    }
    (r.summary.local_cost, r.summary.remote_cost) = (None, None);
    r.local.intervals.clear();
    r
}

/// A stored run (id 7) of a measured stream test, a failed stream and a failed rr test.
pub fn run_with_failures() -> RunRecord {
    let mut r = run(vec![stream(131_072, 262_144, 9.4), failed_stream(), failed_rr()]);
    r.id = Some(7);
    r
}

/// History lines: a running sweep, an abandoned test with no headline, a complete suite.
pub fn history() -> Vec<results::RunSummary> {
    let line = |id: i64, kind: &str, status: &str, best: Option<Headline>| results::RunSummary {
        id,
        kind: kind.into(),
        status: status.into(),
        started_unix_ms: 1_795_306_713_000 + id as u64 * 60_000,
        server: "127.0.0.1:9180".into(),
        tests: 2,
        points_total: (kind == "sweep").then_some(6),
        first_label: Some("stream".into()),
        best,
        command_line: vec!["tcplab".into(), kind.into(), "127.0.0.1".into()],
        owner: None,
    };
    vec![
        line(3, "sweep", "running", Some(Headline::measured(Metric::Goodput, 9.41e9))),
        line(2, "test", "abandoned", Some(Headline::unknown(Metric::Goodput))),
        line(1, "suite", "complete", Some(Headline::measured(Metric::TransactionRate, 41_200.0))),
    ]
}

/// A mesh (run 9) of hosts a, b, c with loop-back baselines: every cell measured but c → b,
/// which failed, and b → c, not run yet.
pub fn mesh_run() -> RunRecord {
    use results::{
        Axis, MeshCell, MeshHost, MeshPlan, MeshRole, ParamSetting, ParamValue, Sweep, SweepPlan, SweepPoint,
    };
    let hosts: Vec<MeshHost> = ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, n)| MeshHost {
            name: n.to_string(),
            address: format!("198.18.0.{}", i + 1),
            port: 9180,
            labels: Default::default(),
            role: MeshRole::Both,
            machine: None,
        })
        .collect();
    let pairs = [(0, 0), (1, 1), (2, 2), (0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)];
    let cells: Vec<MeshCell> = pairs.iter().map(|&(s, r)| MeshCell { sender: s, receiver: r }).collect();
    let gbps = [20.0, 10.0, 5.0, 9.0, 8.0, 4.5, 4.0];
    let mesh = MeshPlan { inventory: "lab.toml".into(), hosts, cells };
    let text = |i: u32| ParamValue::Text(mesh.name(i).to_string());
    let mut tests = Vec::new();
    let mut points = Vec::new();
    for (index, &(s, r)) in pairs.iter().enumerate().filter(|(i, _)| *i != 7) {
        let mut t = match gbps.get(index) {
            Some(g) => stream(131_072, 262_144, *g),
            None => failed_stream(),
        };
        t.third_party = Some(results::ThirdParty {
            from: mesh.hosts[s as usize].endpoint(),
            to: mesh.hosts[r as usize].endpoint(),
            from_name: Some(mesh.name(s).into()),
            to_name: Some(mesh.name(r).into()),
        });
        let value = gbps.get(index).map_or(0.0, |g| g * 1e9);
        points.push(SweepPoint {
            index: index as u32,
            coords: vec![index as u32],
            params: vec![
                ParamSetting { name: "sender".into(), value: text(s) },
                ParamSetting { name: "receiver".into(), value: text(r) },
            ],
            test_index: tests.len() as u32,
            headline: Estimate {
                metric: "goodput_bps".into(),
                mean: value,
                values: vec![value],
                ..Estimate::default()
            },
            met: true,
        });
        tests.push(t);
    }
    let values = mesh
        .cells
        .iter()
        .map(|c| ParamValue::Text(format!("{}>{}", mesh.name(c.sender), mesh.name(c.receiver))))
        .collect();
    let plan = SweepPlan {
        base: TestSpec::new(TestKind::TcpStream),
        axes: vec![Axis { name: "cell".into(), tied: Vec::new(), values, text: "mesh".into() }],
        confidence: None,
        metric: "goodput_bps".into(),
        mesh: Some(mesh),
    };
    let mut r = run(tests);
    r.id = Some(9);
    r.sweep = Some(Sweep { plan, points, complete: false });
    r
}
