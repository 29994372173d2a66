//! The measured facts of one direction of a stream test, read out of a [`TestResult`]: what
//! the rules look at, nothing else, so the rules can be tested with crafted values.

use results::{CpuUsage, Reference, Role, SideMeasurement, StreamStats, TestResult, WarningKind};

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
    /// Data threads of this end in this direction (one per stream).
    pub threads: u32,
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
    /// Smoothed RTT (mean of samples), µs; 0 when unknown.
    pub rtt_us: f64,
    /// Receive-window-limited time ÷ busy time.
    pub rwnd_limited_frac: f64,
    /// Send-buffer-limited time ÷ busy time.
    pub sndbuf_limited_frac: f64,
    /// Receiver's SO_RCVBUF as reported (Linux doubles the request).
    pub rcvbuf_bytes: u64,
    /// Receiver's SO_RCVBUF as requested, if it was.
    pub rcvbuf_requested: Option<u64>,
    /// Sender's SO_SNDBUF as reported.
    pub sndbuf_bytes: u64,
    /// Sender's SO_SNDBUF as requested, if it was.
    pub sndbuf_requested: Option<u64>,
    /// Segment size the sender used.
    pub mss_bytes: u64,
    /// TCP_NODELAY on.
    pub nodelay: bool,
    /// Bytes per write the application asked for (`-l`).
    pub send_len: u32,
    /// Bytes per read the application asked for (`--recv-len`).
    pub recv_len: u32,
    /// Sender's mean bytes per write call.
    pub avg_write_bytes: f64,
    /// Receiver's mean bytes per read call.
    pub avg_read_bytes: f64,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Data segments sent.
    pub segments_out: u64,
    /// Both ends on one host (loopback: retransmits are reordering, not loss).
    pub same_host: bool,
    /// Sender's CPU, when measured.
    pub sender_cpu: Option<SideCpu>,
    /// Receiver's CPU, when measured.
    pub receiver_cpu: Option<SideCpu>,
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
        let tcp = sent.iter().find_map(|s| s.tcp.as_ref());
        let threads = u32::try_from(sent.len().max(1)).unwrap_or(1);
        Some(Facts {
            direction: d.direction.clone(),
            client_sends,
            goodput_bps: d.receiver_bps,
            reference: result.reference.clone(),
            rtt_us: f64::from(d.rtt_mean_us),
            rwnd_limited_frac: d.rwnd_limited_frac,
            sndbuf_limited_frac: d.sndbuf_limited_frac,
            rcvbuf_bytes: read.first().map_or(0, |s| u64::from(s.socket.rcvbuf_actual)),
            rcvbuf_requested: read.first().and_then(|s| s.socket.rcvbuf_requested).map(u64::from),
            sndbuf_bytes: sent.first().map_or(0, |s| u64::from(s.socket.sndbuf_actual)),
            sndbuf_requested: sent.first().and_then(|s| s.socket.sndbuf_requested).map(u64::from),
            mss_bytes: tcp.map_or(0, |t| u64::from(t.snd_mss)),
            nodelay: result.spec.nodelay,
            send_len: result.spec.send_len,
            recv_len: result.spec.recv_len,
            avg_write_bytes: per_call(&sent),
            avg_read_bytes: per_call(&read),
            retransmits: d.retransmits,
            segments_out: sent.iter().filter_map(|s| s.tcp.as_ref()).map(|t| t.data_segs_out).sum(),
            same_host: result.warnings.iter().any(|w| w.kind == WarningKind::SameHost),
            sender_cpu: sender.and_then(|m| m.cpu.as_ref()).map(|c| side_cpu(c, threads)),
            receiver_cpu: receiver.and_then(|m| m.cpu.as_ref()).map(|c| side_cpu(c, threads)),
        })
    }

    /// Goodput ÷ reference, when there is a reference.
    pub fn of_reference(&self) -> Option<f64> {
        self.reference.as_ref().filter(|r| r.limit_bps > 0.0).map(|r| self.goodput_bps / r.limit_bps)
    }

    /// Segments lost per segment sent (retransmits ÷ data segments).
    pub fn loss_rate(&self) -> f64 {
        if self.segments_out == 0 {
            0.0
        } else {
            self.retransmits as f64 / self.segments_out as f64
        }
    }
}

fn streams(side: Option<&SideMeasurement>, role: Role) -> Vec<&StreamStats> {
    side.map(|m| m.streams.iter().filter(|s| s.role == role).collect()).unwrap_or_default()
}

/// Mean bytes per call; 0 when nothing moved.
fn per_call(streams: &[&StreamStats]) -> f64 {
    let calls: u64 = streams.iter().map(|s| s.calls).sum();
    let bytes: u64 = streams.iter().map(|s| s.bytes).sum();
    if calls == 0 {
        0.0
    } else {
        bytes as f64 / calls as f64
    }
}

fn side_cpu(c: &CpuUsage, threads: u32) -> SideCpu {
    let throttled_pct = if c.window_s > 0.0 { 100.0 * c.process.throttled_s / c.window_s } else { 0.0 };
    SideCpu {
        process_pct: c.process.pct_of_core,
        throttled_pct,
        busiest_pct: c.busiest_pct,
        busiest_cpu: c.busiest_cpu,
        threads,
    }
}
