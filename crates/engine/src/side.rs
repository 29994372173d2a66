//! Runs one end of a test: a worker thread per stream, and on the calling thread a sampler
//! that reads the counters and TCP_INFO each interval, takes the CPU window and, at the end,
//! builds the [`SideMeasurement`].

use std::net::TcpStream;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use netio::{CpuSnapshot, TcpInfo};
use results::{
    CpuSeen, Interval, Placement, Role, SideMeasurement, SocketReport, StreamInterval, StreamStats,
    TcpInfoSummary, TestSpec, UdpCounts,
};
use stats::LatencyHistogram;

use crate::meter::{Budget, Counts, StreamMeter, Timeline, WorkerCtx};
use crate::stop::StopFlag;

/// A worker's body.
pub type Work = Box<dyn FnOnce(&WorkerCtx) -> WorkerOutcome + Send>;

/// What a worker hands back.
#[derive(Debug, Default)]
pub struct WorkerOutcome {
    /// Latencies it recorded (rr, crr clients).
    pub latency: Option<LatencyHistogram>,
    /// Why it ended early, if it did.
    pub error: Option<String>,
    /// The thread's CPU time ÷ its lifetime, % of one core (filled in by the side runner).
    pub busy_pct: Option<f64>,
}

/// One stream to run.
#[derive(Debug)]
pub struct Job {
    /// Stream number.
    pub index: u32,
    /// What it does here.
    pub role: Role,
    /// A handle on its socket for TCP_INFO (a duplicate of the worker's), with its options.
    pub socket: Option<(TcpStream, SocketReport)>,
    /// The worker.
    pub work: WorkDebug,
}

/// A [`Work`] that prints as `Work` in debug output.
pub struct WorkDebug(pub Work);

impl std::fmt::Debug for WorkDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Work")
    }
}

/// Signals for one side.
#[derive(Debug, Clone, Default)]
pub struct Signals {
    /// Graceful stop.
    pub stop: StopFlag,
    /// Hard stop.
    pub abort: StopFlag,
}

/// Result of a side: the measurement and any worker errors.
#[derive(Debug)]
pub struct SideRun {
    /// What was measured.
    pub measurement: SideMeasurement,
    /// Worker errors, one line each.
    pub errors: Vec<String>,
}

/// What the sampler holds per stream: number, role, and a socket handle for TCP_INFO.
type Probe = (u32, Role, Option<(TcpStream, SocketReport)>);

/// Per-stream sampler state.
#[derive(Debug, Default, Clone)]
struct Track {
    last: Counts,
    last_retrans: u32,
    rtts: Vec<u32>,
}

/// Runs `jobs` to the end and measures them; `pin` is the CPU for every worker thread.
pub fn run_side(
    jobs: Vec<Job>,
    spec: &TestSpec,
    pin: Option<u32>,
    timeline: Timeline,
    signals: &Signals,
    on_interval: &mut dyn FnMut(&Interval),
) -> SideRun {
    let budget = spec.bytes_limit.map(Budget::new);
    let meters: Vec<Arc<StreamMeter>> = jobs.iter().map(|_| Arc::default()).collect();
    let mut sockets = Vec::new();
    let mut handles = Vec::new();
    let cpu_at_start = (spec.omit_ms == 0).then(|| CpuSnapshot::take().ok()).flatten();
    for (job, meter) in jobs.into_iter().zip(&meters) {
        let ctx = WorkerCtx {
            meter: meter.clone(),
            timeline,
            stop: signals.stop.clone(),
            abort: signals.abort.clone(),
            budget: if job.role == Role::Send { budget.clone() } else { None },
            busy_poll: spec.busy_poll,
        };
        sockets.push((job.index, job.role, job.socket));
        let work = job.work.0;
        handles.push(std::thread::spawn(move || start_worker(work, pin, &ctx)));
    }
    let mut sampler = Sampler::new(spec, pin, timeline, meters, sockets, cpu_at_start);
    sampler.run(&handles, on_interval);
    let outcomes: Vec<WorkerOutcome> = handles.into_iter().map(join_worker).collect();
    sampler.finish(outcomes)
}

/// Pins the worker thread when asked, publishes its thread id, then runs it.
fn start_worker(work: Work, pin: Option<u32>, ctx: &WorkerCtx) -> WorkerOutcome {
    if let Some(cpu) = pin {
        if let Err(e) = netio::sched::pin_current_thread(cpu) {
            ctx.meter.finish(&ctx.timeline, Instant::now());
            let error = Some(format!("pinning to CPU {cpu}: {e}"));
            return WorkerOutcome { error, ..WorkerOutcome::default() };
        }
    }
    ctx.meter.tid.store(netio::sched::current_tid(), std::sync::atomic::Ordering::Relaxed);
    let (cpu0, wall0) = (netio::sched::thread_cpu_time(), Instant::now());
    let mut outcome = work(ctx);
    let wall = wall0.elapsed().as_secs_f64();
    if let (Ok(cpu0), Ok(cpu1)) = (cpu0, netio::sched::thread_cpu_time()) {
        if wall > 0.0 {
            outcome.busy_pct = Some(100.0 * cpu1.saturating_sub(cpu0).as_secs_f64() / wall);
        }
    }
    outcome
}

fn join_worker(h: JoinHandle<WorkerOutcome>) -> WorkerOutcome {
    h.join().unwrap_or_else(|_| WorkerOutcome {
        error: Some("worker thread panicked".into()),
        ..WorkerOutcome::default()
    })
}

struct Sampler {
    interval: Option<Duration>,
    timeline: Timeline,
    meters: Vec<Arc<StreamMeter>>,
    sockets: Vec<Probe>,
    tracks: Vec<Track>,
    baseline: Option<Vec<Counts>>,
    cpu_start: Option<CpuSnapshot>,
    last_tick: Instant,
    intervals: Vec<Interval>,
    pinned: Option<u32>,
    /// Per stream: samples per CPU seen, indexed by CPU number.
    cpu_samples: Vec<Vec<u32>>,
    /// UDP test: datagram counts per stream at the last interval.
    udp: Option<Vec<UdpCounts>>,
}

impl Sampler {
    fn new(
        spec: &TestSpec,
        pinned: Option<u32>,
        timeline: Timeline,
        meters: Vec<Arc<StreamMeter>>,
        sockets: Vec<Probe>,
        cpu_start: Option<CpuSnapshot>,
    ) -> Sampler {
        let n = meters.len();
        Sampler {
            interval: (spec.interval_ms > 0).then(|| Duration::from_millis(spec.interval_ms)),
            timeline,
            meters,
            sockets,
            tracks: vec![Track::default(); n],
            baseline: (spec.omit_ms == 0).then(|| vec![Counts::default(); n]),
            cpu_start,
            last_tick: timeline.start,
            intervals: Vec::new(),
            pinned,
            cpu_samples: vec![Vec::new(); n],
            udp: crate::registry::of(spec.test)
                .data()
                .traits()
                .counts_datagrams
                .then(|| vec![UdpCounts::default(); n]),
        }
    }

    fn run(&mut self, handles: &[JoinHandle<WorkerOutcome>], on_interval: &mut dyn FnMut(&Interval)) {
        const PLACEMENT_EVERY: Duration = Duration::from_millis(100);
        let mut next_placement = self.timeline.start + Duration::from_millis(20);
        loop {
            let now = Instant::now();
            if now >= next_placement {
                self.sample_placement();
                next_placement = now + PLACEMENT_EVERY;
            }
            let done = handles.iter().all(JoinHandle::is_finished);
            if self.baseline.is_none() && now >= self.timeline.measure_from {
                self.baseline = Some(self.read_all());
                self.cpu_start = CpuSnapshot::take().ok();
            }
            if let Some(iv) = self.interval {
                if !done && now >= self.last_tick + iv {
                    let interval = self.sample(now);
                    on_interval(&interval);
                }
            }
            if done {
                break;
            }
            std::thread::sleep(self.until_next_event(now, next_placement));
        }
        let end = self.end_instant().max(self.last_tick);
        // UDP receivers count a drained tail after the last tick: it goes into a last interval
        // however short, so the intervals add up to the totals.
        let pending =
            self.udp.is_some() && self.meters.iter().zip(&self.tracks).any(|(m, t)| m.read() != t.last);
        if self.interval.is_some()
            && (end.saturating_duration_since(self.last_tick) >= Duration::from_millis(10) || pending)
        {
            let interval = self.sample(end);
            on_interval(&interval);
        }
    }

    /// How long to sleep: until the next interval tick, the start of the measured window or
    /// the next placement sample, and never longer than the timeline's watch slice (short near
    /// the end, so a finished side is noticed at once).
    fn until_next_event(&self, now: Instant, next_placement: Instant) -> Duration {
        let mut next = now + self.timeline.watch_slice(now);
        next = next.min(next_placement);
        if self.baseline.is_none() {
            next = next.min(self.timeline.measure_from);
        }
        if let Some(iv) = self.interval {
            next = next.min(self.last_tick + iv);
        }
        next.saturating_duration_since(now).max(Duration::from_micros(500))
    }

    /// Notes the CPU each running worker last ran on.
    fn sample_placement(&mut self) {
        for (meter, seen) in self.meters.iter().zip(&mut self.cpu_samples) {
            let tid = meter.tid.load(std::sync::atomic::Ordering::Relaxed);
            // (a thread that has ended has no /proc entry left, so it is skipped below)
            if tid == 0 {
                continue;
            }
            if let Ok(cpu) = netio::sched::thread_last_cpu(tid) {
                let Ok(cpu) = usize::try_from(cpu) else { continue };
                if cpu < 4096 {
                    if seen.len() <= cpu {
                        seen.resize(cpu + 1, 0);
                    }
                    seen[cpu] += 1;
                }
            }
        }
    }

    fn placement(&self, i: usize, thread_busy_pct: Option<f64>) -> Placement {
        let mut cpus_seen: Vec<CpuSeen> = (self.cpu_samples[i].iter().enumerate())
            .filter(|(_, &n)| n > 0)
            .map(|(cpu, &samples)| CpuSeen { cpu: cpu as u32, samples })
            .collect();
        cpus_seen.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.cpu.cmp(&b.cpu)));
        Placement { pinned_cpu: self.pinned, cpus_seen, thread_busy_pct }
    }

    fn end_instant(&self) -> Instant {
        self.meters.iter().filter_map(|m| m.end(&self.timeline)).max().unwrap_or_else(Instant::now)
    }

    fn read_all(&self) -> Vec<Counts> {
        self.meters.iter().map(|m| m.read()).collect()
    }

    fn sample(&mut self, now: Instant) -> Interval {
        let mut streams = Vec::with_capacity(self.meters.len());
        for i in 0..self.meters.len() {
            let counts = self.meters[i].read();
            let delta = counts.since(&self.tracks[i].last);
            self.tracks[i].last = counts;
            let info = self.sockets[i].2.as_ref().and_then(|(s, _)| netio::tcpinfo::read(s).ok());
            let mut s = self.stream_interval(i, delta, info);
            s.udp = self.udp_interval(i);
            streams.push(s);
        }
        let interval = Interval {
            start_s: self.timeline.secs(self.last_tick),
            end_s: self.timeline.secs(now),
            omitted: self.last_tick < self.timeline.measure_from,
            streams,
        };
        self.last_tick = now;
        self.intervals.push(interval.clone());
        interval
    }

    fn stream_interval(&mut self, i: usize, delta: Counts, info: Option<TcpInfo>) -> StreamInterval {
        let track = &mut self.tracks[i];
        let mut s = StreamInterval {
            index: self.sockets[i].0,
            bytes: delta.bytes,
            transactions: delta.transactions,
            ..StreamInterval::default()
        };
        if let Some(info) = info {
            s.retransmits = u64::from(info.total_retrans.saturating_sub(track.last_retrans));
            track.last_retrans = info.total_retrans;
            s.cwnd_bytes = info.cwnd_bytes();
            s.rtt_us = info.rtt_us;
            if info.rtt_us > 0 {
                track.rtts.push(info.rtt_us);
            }
        }
        s
    }

    /// One stream's datagram counts since the last interval; closes the interval.
    fn udp_interval(&mut self, i: usize) -> Option<UdpCounts> {
        let last = self.udp.as_mut()?.get_mut(i)?;
        let now = self.meters[i].with_udp(|u| {
            let c = u.counts();
            u.account.mark_interval();
            c
        });
        let delta = stats::datagrams::interval(&now, last);
        *last = now;
        Some(delta)
    }

    fn finish(mut self, outcomes: Vec<WorkerOutcome>) -> SideRun {
        let end = self.end_instant();
        let cpu =
            self.cpu_start.take().and_then(|start| CpuSnapshot::take().ok().map(|e| start.usage_until(&e)));
        let finals = self.read_all();
        let baseline = self.baseline.take().unwrap_or_else(|| finals.clone());
        let mut latency: Option<LatencyHistogram> = None;
        let mut errors = Vec::new();
        let busy: Vec<Option<f64>> = outcomes.iter().map(|o| o.busy_pct).collect();
        let sections = self.meters.iter().filter_map(|m| m.take_section()).collect();
        for o in outcomes {
            errors.extend(o.error);
            if let Some(h) = o.latency {
                latency.get_or_insert_with(LatencyHistogram::new).merge(&h);
            }
        }
        let streams = (0..self.meters.len())
            .map(|i| self.stream_stats(i, &finals[i], &baseline[i], busy.get(i).copied().flatten()))
            .collect();
        let measurement = SideMeasurement {
            measured_s: end.saturating_duration_since(self.timeline.measure_from).as_secs_f64(),
            streams,
            intervals: std::mem::take(&mut self.intervals),
            cpu,
            latency: latency.map(|h| h.summary()),
            sections,
        };
        SideRun { measurement, errors }
    }

    fn stream_stats(&mut self, i: usize, fin: &Counts, base: &Counts, busy: Option<f64>) -> StreamStats {
        let (index, role, sock) = &self.sockets[i];
        let measured = fin.since(base);
        let tcp = sock.as_ref().and_then(|(s, _)| netio::tcpinfo::read(s).ok()).map(|info| {
            if info.rtt_us > 0 {
                self.tracks[i].rtts.push(info.rtt_us);
            }
            tcp_summary(&info, &self.tracks[i].rtts)
        });
        StreamStats {
            index: *index,
            role: *role,
            bytes: measured.bytes,
            bytes_total: fin.bytes,
            calls: measured.calls,
            transactions: measured.transactions,
            socket: sock
                .as_ref()
                .map(|(_, r)| r.clone())
                .or_else(|| self.meters[i].with_udp(|u| u.socket.clone()))
                .unwrap_or_default(),
            tcp,
            placement: self.placement(i, busy),
            udp: self.udp.is_some().then(|| self.meters[i].with_udp(|u| u.counts())),
        }
    }
}

fn tcp_summary(info: &TcpInfo, rtts: &[u32]) -> TcpInfoSummary {
    let mean = if rtts.is_empty() {
        0
    } else {
        (rtts.iter().map(|&r| u64::from(r)).sum::<u64>() / rtts.len() as u64) as u32
    };
    TcpInfoSummary {
        retransmits: info.total_retrans.into(),
        rtt_min_us: rtts.iter().copied().min().unwrap_or(0),
        rtt_mean_us: mean,
        rtt_max_us: rtts.iter().copied().max().unwrap_or(0),
        min_rtt_us: info.min_rtt_us,
        busy_us: info.busy_time_us,
        rwnd_limited_us: info.rwnd_limited_us,
        sndbuf_limited_us: info.sndbuf_limited_us,
        cwnd_bytes: info.cwnd_bytes(),
        snd_wnd_bytes: info.snd_wnd,
        snd_mss: info.snd_mss,
        reord_seen: info.reord_seen,
        dsack_dups: info.dsack_dups,
        data_segs_out: info.data_segs_out.into(),
        delivery_rate_bytes_per_s: info.delivery_rate,
        sampled: true,
    }
}

/// Which end of a test this process is.
pub use results::End;

/// The options `end`'s TCP data sockets are asked for: its buffers, and the TCP options both
/// ends share.
pub fn socket_opts(end: End, spec: &TestSpec) -> netio::DataSocketOpts {
    netio::DataSocketOpts {
        buffers: spec.buffers(end),
        nodelay: spec.nodelay,
        mss: spec.mss,
        congestion: spec.congestion.clone(),
    }
}

/// A connected data socket at one end, with its option report.
#[derive(Debug)]
pub struct DataSocket {
    /// Stream number from the data hello.
    pub index: u32,
    /// The socket.
    pub stream: TcpStream,
    /// Options as applied.
    pub report: SocketReport,
}

impl DataSocket {
    /// A duplicate handle for the sampler plus the original for the worker.
    pub fn split(self) -> std::io::Result<(TcpStream, (TcpStream, SocketReport))> {
        let dup = self.stream.try_clone()?;
        Ok((self.stream, (dup, self.report)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::setting;

    #[test]
    fn an_end_asks_for_its_own_buffers_and_the_shared_tcp_options() {
        let mut spec = TestSpec { mss: Some(1200), ..TestSpec::new(results::TestKind::TcpStream) };
        (setting::REMOTE_SNDBUF.set)(&mut spec, &results::ParamValue::Int(12_288))
            .unwrap_or_else(|e| panic!("{e}"));
        let opts = socket_opts(End::Server, &spec);
        assert_eq!((opts.buffers.send, opts.buffers.receive, opts.mss), (Some(12_288), None, Some(1200)));
        assert_eq!(socket_opts(End::Client, &spec).buffers, results::BufferSizes::default());
    }
}
