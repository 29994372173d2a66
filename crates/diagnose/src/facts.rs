//! The measured facts of one direction of a stream test, read out of a [`TestResult`]: what
//! the rules look at, nothing else, so the rules can be tested with crafted values.

use results::{
    Buffer, BufferGrant, CpuUsage, EmuReport, End, Reference, Role, Setting, SideMeasurement, StreamStats,
    TestResult, WarningKind,
};

/// What the link emulator dropped in the direction the data flowed (`--path`), packets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathDrops {
    /// Refused by the full queue at the emulated bottleneck: the link was full.
    pub queue_overflow: u64,
    /// Dropped by the random loss model or lost cells: loss the link itself adds.
    pub random: u64,
}

/// How late the emulator released packets in the data's direction (`--path`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PathLateness {
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Median, µs.
    pub p50_us: f64,
    /// Mean, µs.
    pub mean_us: f64,
}

/// CPU facts of one end.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SideCpu {
    /// tcplab's own process time, % of one core.
    pub process_pct: f64,
    /// Time the process's cgroup was throttled by a CPU quota, % of the window.
    pub throttled_pct: f64,
    /// The busiest CPU of the host, %.
    pub busiest_pct: f64,
    /// Which CPU that was.
    pub busiest_cpu: u32,
    /// Data threads the process time is spread over (one per stream; both ends' when shared).
    pub threads: u32,
    /// Both ends run in this one process, so its time counts both.
    pub shared: bool,
    /// The busiest data thread of this end (CPU time ÷ lifetime), % of one core, when known.
    pub thread_busy_pct: Option<f64>,
    /// The CPU that thread was seen on most, when sampled, and that CPU's utilisation, %.
    pub thread_cpu: Option<(u32, f64)>,
    /// Share of the process's CPU time spent in the kernel (system ÷ user + system), 0–1.
    pub kernel_share: f64,
    /// The host's CPUs busy over the window, in cores (utilisation × CPUs).
    pub cores_busy: f64,
    /// Of which softirq (network work the kernel may do outside tcplab's threads), cores.
    pub softirq_cores: f64,
    /// The host's utilisation averaged over all its CPUs, %.
    pub util_pct: f64,
    /// Share of all CPU time the hypervisor stole, %: time no thread of this host could run.
    pub steal_pct: f64,
}

/// What one direction measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// `client→server` or `server→client`.
    pub direction: String,
    /// Whether the client is the sender (decides which flag the advice names).
    pub client_sends: bool,
    /// Receiver's goodput, bit/s.
    pub goodput_bps: f64,
    /// What the result is compared with.
    pub reference: Option<Reference>,
    /// Smoothed RTT (mean of samples), µs, when sampled.
    pub rtt_us: Option<f64>,
    /// Smallest smoothed RTT sampled, µs, when sampled.
    pub rtt_min_us: Option<f64>,
    /// Receive-window-limited time ÷ busy time, when the sender's TCP_INFO was sampled.
    pub rwnd_limited_frac: Option<f64>,
    /// Send-buffer-limited time ÷ busy time, when sampled.
    pub sndbuf_limited_frac: Option<f64>,
    /// The receiver's receive buffer (read it with [`Facts::buffer`]).
    pub receive_buffer: BufferFact,
    /// The sender's send buffer (read it with [`Facts::buffer`]).
    pub send_buffer: BufferFact,
    /// The window the receiver was held to (TCP_WINDOW_CLAMP, `--window-clamp`), bytes: the
    /// window itself, below what its receive buffer would allow.
    pub window_clamp: Option<u64>,
    /// Segment size the sender used, when sampled.
    pub mss_bytes: Option<u64>,
    /// TCP_NODELAY on.
    pub nodelay: bool,
    /// Bytes per write the application asked for (`-l`).
    pub send_len: u32,
    /// Bytes per read the application asked for (`--recv-len`).
    pub recv_len: u32,
    /// Sender's mean bytes per write call, when it counted its calls.
    pub avg_write_bytes: Option<f64>,
    /// Receiver's mean bytes per read call, when it counted its calls.
    pub avg_read_bytes: Option<f64>,
    /// Retransmitted segments, when the sender reported them.
    pub retransmits: Option<u64>,
    /// Data segments sent, when sampled.
    pub segments_out: Option<u64>,
    /// The sender's pacing target (`-b`), bit/s per stream, when it paced.
    pub paced_bps: Option<f64>,
    /// Streams that way (a pacing target is per stream).
    pub streams: u32,
    /// The emulated path's release lateness in the data's direction, when it crossed one.
    pub path_lateness: Option<PathLateness>,
    /// Both ends on one host: they share its CPUs (and, without an emulated path between them,
    /// retransmits are reordering, not loss).
    pub same_host: bool,
    /// The emulator's drops in this direction, when the test crossed an emulated path.
    pub path_drops: Option<PathDrops>,
    /// The congestion control the sender used (`bbr`, `cubic`), empty when unknown.
    pub congestion_control: String,
    /// Sender's CPU, when measured.
    pub sender_cpu: Option<SideCpu>,
    /// Receiver's CPU, when measured.
    pub receiver_cpu: Option<SideCpu>,
    /// What `--trace` saw of this direction's segment flow, when it was traced.
    pub segment_flow: Option<results::segment_flow::FlowDirection>,
}

impl Facts {
    /// Facts of direction `index` of `result`, or `None` if the data is missing.
    pub fn of(result: &TestResult, index: usize) -> Option<Facts> {
        let d = result.summary.directions.get(index)?;
        let client_sends = d.direction.starts_with("client");
        let remote = result.remote.as_ref();
        let (sender, receiver) =
            if client_sends { (Some(&result.local), remote) } else { (remote, Some(&result.local)) };
        let sent: Vec<&StreamStats> = streams(sender, Role::Send);
        let read: Vec<&StreamStats> = streams(receiver, Role::Recv);
        let same_host = result.warnings.iter().any(|w| w.kind == WarningKind::SameHost);
        let cpus = (sender.and_then(|m| m.cpu.as_ref()), receiver.and_then(|m| m.cpu.as_ref()));
        let shared = same_host && one_process(cpus.0, cpus.1);
        let count = |n: usize| u32::try_from(n.max(1)).unwrap_or(u32::MAX);
        let (send_threads, recv_threads) = match shared {
            true => (count(sent.len() + read.len()), count(sent.len() + read.len())),
            false => (count(sent.len()), count(read.len())),
        };
        let sampled: Vec<&results::TcpInfoSummary> =
            sent.iter().filter_map(|s| s.tcp.as_ref()).filter(|t| t.sampled).collect();
        let sampled = (!sampled.is_empty() && sampled.len() == sent.len()).then_some(sampled);
        Some(Facts {
            direction: d.direction.clone(),
            client_sends,
            goodput_bps: d.receiver_bps,
            reference: result.reference.clone(),
            rtt_us: d.rtt_mean_us.map(f64::from),
            rtt_min_us: d.rtt_min_us.map(f64::from),
            rwnd_limited_frac: d.rwnd_limited_frac,
            sndbuf_limited_frac: d.sndbuf_limited_frac,
            receive_buffer: BufferFact::of(read.first().map(|s| s.socket.buffer(Buffer::Receive))),
            send_buffer: BufferFact::of(sent.first().map(|s| s.socket.buffer(Buffer::Send))),
            window_clamp: match (results::setting::WINDOW_CLAMP.get)(&result.spec) {
                Some(results::ParamValue::Int(c)) if c > 0 => Some(c),
                _ => None,
            },
            mss_bytes: sampled
                .as_ref()
                .and_then(|t| t.first())
                .map(|t| u64::from(t.snd_mss))
                .filter(|&m| m > 0),
            nodelay: result.spec.nodelay,
            send_len: result.spec.send_len,
            recv_len: result.spec.recv_len,
            avg_write_bytes: per_call(&sent),
            avg_read_bytes: per_call(&read),
            retransmits: d.retransmits,
            segments_out: sampled.as_ref().map(|t| t.iter().map(|t| t.data_segs_out).sum()),
            paced_bps: (result.spec.rate_bps > 0).then_some(result.spec.rate_bps as f64),
            streams: d.streams.max(1),
            path_lateness: result.emu.as_ref().and_then(|e| lateness(e, client_sends)),
            same_host,
            path_drops: result.emu.as_ref().map(|e| path_drops(e, client_sends)),
            congestion_control: sent
                .iter()
                .map(|s| s.socket.congestion.clone())
                .find(|c| !c.is_empty())
                .or_else(|| result.spec.congestion.clone())
                .unwrap_or_default(),
            sender_cpu: cpus.0.map(|c| side_cpu(c, send_threads, shared, busiest_thread(&sent))),
            receiver_cpu: cpus.1.map(|c| side_cpu(c, recv_threads, shared, busiest_thread(&read))),
            segment_flow: result
                .segment_flow
                .as_ref()
                .and_then(|t| t.directions.iter().find(|x| x.direction == d.direction))
                .cloned(),
        })
    }

    /// Goodput ÷ reference, when there is a reference.
    pub fn of_reference(&self) -> Option<f64> {
        self.reference.as_ref().filter(|r| r.limit_bps > 0.0).map(|r| self.goodput_bps / r.limit_bps)
    }

    /// Segments resent per segment sent (retransmits ÷ data segments), when both are known.
    pub fn loss_rate(&self) -> Option<f64> {
        let (r, n) = (self.retransmits?, self.segments_out?);
        (n > 0).then(|| r as f64 / n as f64)
    }

    /// The largest window TCP could have used, bytes: the smaller of what the receiver's
    /// and the sender's socket buffers were granted (each bounds the data in flight).
    pub fn granted_window(&self) -> Option<u64> {
        Buffer::ALL.iter().filter_map(|&b| self.buffer(b).granted).min()
    }

    /// Buffer `b` where it bounds the flow: the receiver's receive buffer, the sender's send
    /// buffer.
    pub fn buffer(&self, b: Buffer) -> BufferFact {
        match b {
            Buffer::Send => self.send_buffer,
            Buffer::Receive => self.receive_buffer,
        }
    }

    /// The setting (flag, label) that asks for buffer `b` at the end that holds it here.
    pub fn buffer_setting(&self, b: Buffer) -> &'static Setting {
        let (sender, receiver) =
            if self.client_sends { (End::Client, End::Server) } else { (End::Server, End::Client) };
        b.setting(if b == Buffer::Send { sender } else { receiver })
    }
}

/// A socket buffer of the flow as its end asked for it and as the kernel granted it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferFact {
    /// As granted (getsockopt; Linux doubles the request), when known.
    pub granted: Option<u64>,
    /// As requested, if it was.
    pub requested: Option<u64>,
}

impl BufferFact {
    /// The fact of a recorded grant (an actual size of 0 was not reported).
    fn of(g: Option<BufferGrant>) -> BufferFact {
        BufferFact {
            granted: g.map(|g| g.actual).filter(|&b| b > 0).map(u64::from),
            requested: g.and_then(|g| g.requested).map(u64::from),
        }
    }
}

/// The emulator's release lateness in the data's direction.
fn lateness(e: &EmuReport, client_sends: bool) -> Option<PathLateness> {
    let name = if client_sends { "up" } else { "down" };
    let d = e.directions.iter().find(|d| d.direction == name)?;
    Some(PathLateness {
        p99_us: d.lateness_p99_us?,
        p50_us: d.lateness_p50_us.unwrap_or(d.lateness_mean_us),
        mean_us: d.lateness_mean_us,
    })
}

/// The emulator's drops in the data's direction: `up` when the client sends.
pub(crate) fn path_drops(e: &EmuReport, client_sends: bool) -> PathDrops {
    let name = if client_sends { "up" } else { "down" };
    e.directions.iter().filter(|d| d.direction == name).fold(PathDrops::default(), |a, d| PathDrops {
        queue_overflow: a.queue_overflow + d.drops_queue_overflow.packets,
        random: a.random + d.drops_loss_model.packets + d.drops_cell_loss.packets,
    })
}

pub(crate) fn streams(side: Option<&SideMeasurement>, role: Role) -> Vec<&StreamStats> {
    side.map(|m| m.streams.iter().filter(|s| s.role == role).collect()).unwrap_or_default()
}

/// Mean bytes per call; `None` when the end counted no calls (a stock iperf3 peer).
fn per_call(streams: &[&StreamStats]) -> Option<f64> {
    let calls: u64 = streams.iter().map(|s| s.calls).sum();
    let bytes: u64 = streams.iter().map(|s| s.bytes).sum();
    (calls > 0).then(|| bytes as f64 / calls as f64)
}

/// Whether both ends' process times are one process's (`tcplab run`'s embedded server): equal
/// to within 2 %.
fn one_process(a: Option<&CpuUsage>, b: Option<&CpuUsage>) -> bool {
    let (Some(a), Some(b)) = (a, b) else { return false };
    let total = |c: &CpuUsage| c.process.user_s + c.process.system_s;
    let (ta, tb) = (total(a), total(b));
    ta > 0.0 && (ta - tb).abs() <= 0.02 * ta.max(tb)
}

/// The busiest thread among `streams` (its busy share and most-seen CPU), if any was measured.
pub(crate) fn busiest_thread(streams: &[&StreamStats]) -> (Option<f64>, Option<u32>) {
    streams
        .iter()
        .filter_map(|s| s.placement.thread_busy_pct.map(|b| (b, s.placement.main_cpu())))
        .reduce(|a, b| if b.0 > a.0 { b } else { a })
        .map_or((None, None), |(b, cpu)| (Some(b), cpu))
}

pub(crate) fn side_cpu(
    c: &CpuUsage,
    threads: u32,
    shared: bool,
    thread: (Option<f64>, Option<u32>),
) -> SideCpu {
    let (thread_busy_pct, seen) = thread;
    let thread_cpu = seen.and_then(|n| c.per_cpu_pct.get(n as usize).map(|pct| (n, *pct)));
    let process_s = c.process.user_s + c.process.system_s;
    let kernel_share = if process_s > 0.0 { c.process.system_s / process_s } else { 0.0 };
    let throttled_pct = if c.window_s > 0.0 { 100.0 * c.process.throttled_s / c.window_s } else { 0.0 };
    SideCpu {
        process_pct: c.process.pct_of_core,
        throttled_pct,
        busiest_pct: c.busiest_pct,
        busiest_cpu: c.busiest_cpu,
        threads,
        shared,
        thread_busy_pct,
        thread_cpu,
        kernel_share,
        cores_busy: c.cores_busy,
        softirq_cores: c.softirq_pct / 100.0 * f64::from(c.cpus),
        util_pct: c.util_pct,
        steal_pct: c.steal_pct,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{DirectionSummary, ProcessCpu, SocketReport, Summary, TestKind, TestSpec, Warning};

    fn side(role: Role, calls: u64, process_s: f64, buffer: u32) -> SideMeasurement {
        let receive = results::BufferGrant { requested: Some(buffer / 2), actual: buffer };
        let socket = SocketReport { receive, ..Default::default() };
        let stream = StreamStats {
            index: 0,
            role,
            bytes: 1_000_000,
            bytes_total: 1_000_000,
            calls,
            transactions: 0,
            socket,
            tcp: None,
            placement: Default::default(),
            udp: None,
        };
        let process =
            ProcessCpu { user_s: 0.0, system_s: process_s, pct_of_core: process_s * 100.0, throttled_s: 0.5 };
        let cpu = CpuUsage { window_s: 1.0, process, ..Default::default() };
        SideMeasurement { measured_s: 1.0, streams: vec![stream], cpu: Some(cpu), ..Default::default() }
    }

    fn result(local: SideMeasurement, remote: SideMeasurement, same_host: bool) -> TestResult {
        let warnings = if same_host {
            vec![Warning { kind: WarningKind::SameHost, message: String::new(), advice: String::new() }]
        } else {
            Vec::new()
        };
        let direction =
            DirectionSummary { direction: "client→server".into(), receiver_bps: 8e6, ..Default::default() };
        TestResult {
            local,
            remote: Some(remote),
            summary: Summary { directions: vec![direction], ..Default::default() },
            warnings,
            ..TestResult::new("stream", TestSpec::new(TestKind::TcpStream), "h:1", 0)
        }
    }

    #[test]
    fn forward_reads_the_sender_locally_and_the_receiver_remotely() {
        let r = result(side(Role::Send, 10, 0.9, 8192), side(Role::Recv, 1000, 0.3, 4096), false);
        let f = Facts::of(&r, 0).unwrap_or_default();
        assert!(f.client_sends);
        assert_eq!((f.avg_write_bytes, f.avg_read_bytes), (Some(100_000.0), Some(1000.0)));
        assert_eq!(f.buffer(Buffer::Receive), BufferFact { granted: Some(4096), requested: Some(2048) });
        assert_eq!(f.sender_cpu.as_ref().map(|c| (c.process_pct, c.threads)), Some((90.0, 1)));
        assert_eq!(f.receiver_cpu.as_ref().map(|c| c.throttled_pct), Some(50.0));
        assert!(Facts::of(&r, 1).is_none());
    }

    #[test]
    fn one_process_for_both_ends_spreads_its_time_over_both_threads() {
        let r = result(side(Role::Send, 10, 0.9, 8192), side(Role::Recv, 10, 0.9, 8192), true);
        let f = Facts::of(&r, 0).unwrap_or_default();
        assert_eq!(f.sender_cpu.map(|c| (c.threads, c.shared)), Some((2, true)));
        let apart = result(side(Role::Send, 10, 0.9, 8192), side(Role::Recv, 10, 0.9, 8192), false);
        assert_eq!(Facts::of(&apart, 0).unwrap_or_default().sender_cpu.map(|c| c.shared), Some(false));
    }
}
