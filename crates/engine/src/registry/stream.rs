//! `tcp-stream`: bulk transfer one way, the other, or both (netperf TCP_STREAM / TCP_MAERTS,
//! iperf3 `-R` / `--bidir`). The sender writes `send_len` bytes per call until the deadline, the
//! byte budget or a stop, each sending stream paced to `rate_bps` when set (iperf3's `-b` for
//! TCP, per stream); then shuts its side down. The receiver reads `recv_len` bytes per call
//! until end of stream.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use results::{Direction, Metric, Role, Shape, SideMeasurement, Summary, TestKind, TestSpec};
use wire::Rejection;

use crate::control::is_timeout;
use crate::meter::WorkerCtx;
use crate::registry::{self, Data, Info, TestType, Transport, TypeOption};
use crate::side::{DataSocket, End, Job, WorkDebug, WorkerOutcome};
use crate::Error;

mod copy_modes;
mod paced;

/// How long a blocked call waits before re-checking stop, deadline and watchdog.
pub(crate) const CALL_SLICE: Duration = Duration::from_millis(200);

/// What stream `index` does at `end`.
pub fn role(spec: &TestSpec, end: End, index: u32) -> Role {
    let client_sends = match spec.direction {
        Direction::Forward => true,
        Direction::Reverse => false,
        Direction::Bidir => index < spec.parallel,
    };
    if client_sends == (end == End::Client) {
        Role::Send
    } else {
        Role::Recv
    }
}

/// `stream`'s own settings: how bytes cross the socket at each end.
const OPTIONS: [TypeOption; 4] = [
    TypeOption {
        name: "zerocopy",
        kind: results::setting::ValueKind::Bool,
        about: "senders write with MSG_ZEROCOPY (not iperf3's -Z, which is sendfile)",
    },
    TypeOption {
        name: "skip-rx-copy",
        kind: results::setting::ValueKind::Bool,
        about: "receivers read with MSG_TRUNC: the kernel drops the data instead of copying it",
    },
    TypeOption {
        name: "window-clamp",
        kind: results::setting::ValueKind::Bytes,
        about: "receivers announce at most this window (TCP_WINDOW_CLAMP), whatever their receive buffer",
    },
    TypeOption {
        name: "mptcp",
        kind: results::setting::ValueKind::Bool,
        about: "the connections are Multipath TCP (IPPROTO_MPTCP), their subflows reported",
    },
];

/// Linux 6.x's floor for TCP_WINDOW_CLAMP on x86-64 (SOCK_MIN_RCVBUF / 2, read back with
/// getsockopt): designs made ahead of a run (the studies) start at it.
pub const LINUX_WINDOW_FLOOR: u32 = 1152;

/// The smallest window a receiver can be clamped to: this kernel's floor for
/// TCP_WINDOW_CLAMP (a smaller clamp is raised to it, so the window announced would not be
/// the one asked), read once; [`LINUX_WINDOW_FLOOR`] if no socket can be made to read it.
pub fn clamp_floor() -> u32 {
    static FLOOR: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *FLOOR.get_or_init(|| netio::sockopt::window_clamp_floor().unwrap_or(LINUX_WINDOW_FLOOR))
}

/// `window-clamp` of `spec`, if set.
fn window_clamp(spec: &TestSpec) -> Option<u32> {
    match spec.options.get("window-clamp") {
        Some(results::ParamValue::Int(n)) => u32::try_from(*n).ok(),
        _ => None,
    }
}

fn flag(spec: &TestSpec, name: &str) -> bool {
    matches!(spec.options.get(name), Some(results::ParamValue::Bool(true)))
}

/// Builds one job per data socket.
pub fn jobs(spec: &TestSpec, end: End, sockets: Vec<DataSocket>) -> std::io::Result<Vec<Job>> {
    let mut jobs = Vec::with_capacity(sockets.len());
    let (zerocopy, skip) = (flag(spec, "zerocopy"), flag(spec, "skip-rx-copy"));
    for ds in sockets {
        let index = ds.index;
        let role = role(spec, end, index);
        let (sock, probe) = ds.split()?;
        let (send_len, recv_len, rate) = (spec.send_len as usize, spec.recv_len as usize, spec.rate_bps);
        if zerocopy && role == Role::Send {
            netio::zerocopy::enable_zerocopy(&sock)?;
        }
        let clamp = window_clamp(spec).filter(|_| role != Role::Send);
        if let Some(w) = clamp {
            clamp_window(&sock, w)?;
        }
        let work: crate::side::Work = match role {
            Role::Send if zerocopy => {
                Box::new(move |ctx: &WorkerCtx| copy_modes::send_zerocopy(sock, send_len, rate, index, ctx))
            }
            Role::Send => Box::new(move |ctx: &WorkerCtx| send_loop(sock, send_len, rate, ctx)),
            _ if skip => Box::new(move |ctx: &WorkerCtx| copy_modes::recv_skip(sock, recv_len, ctx)),
            _ => match clamp {
                Some(w) => {
                    Box::new(move |ctx: &WorkerCtx| recv_loop_with(sock, recv_len, ctx, keep_clamp(w)))
                }
                None => Box::new(move |ctx: &WorkerCtx| recv_loop(sock, recv_len, ctx)),
            },
        };
        jobs.push(Job { index, role, socket: Some(probe), work: WorkDebug(work) });
    }
    Ok(jobs)
}

/// Clamps the announced window to `bytes`.
fn clamp_window(sock: &TcpStream, bytes: u32) -> std::io::Result<()> {
    netio::sockopt::set_window_clamp(sock, bytes)
}

/// After each read: sets the clamp again if the kernel raised it. Linux 6.18 raises
/// TCP_WINDOW_CLAMP as data arrives (receive-buffer tuning, even with SO_RCVBUF locked:
/// measured, a 4096 clamp read back 127,488 after 0.3 s); set again, it holds.
fn keep_clamp(bytes: u32) -> impl FnMut(&TcpStream) {
    move |sock| {
        if netio::sockopt::window_clamp(sock).is_ok_and(|now| now != bytes) {
            let _ = netio::sockopt::set_window_clamp(sock, bytes);
        }
    }
}

/// A recognisable, incompressible-enough payload.
pub(crate) fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_be_bytes()[0]).collect()
}

/// Writes until the deadline, budget or stop, at most `rate_bps` (0 = unlimited); then shuts
/// down the write side.
pub fn send_loop(mut sock: TcpStream, len: usize, rate_bps: u64, ctx: &WorkerCtx) -> WorkerOutcome {
    let buf = payload(len);
    let _ = sock.set_write_timeout(Some(CALL_SLICE));
    let mut throttle = paced::Throttle::new(rate_bps, len, &ctx.timeline);
    let mut error = None;
    loop {
        let now = Instant::now();
        if ctx.should_stop_sending(now) {
            break;
        }
        if !paced::ready(&mut throttle, ctx, now) {
            continue;
        }
        let chunk = match &ctx.budget {
            Some(b) => b.claim(len as u64) as usize,
            None => len,
        };
        if chunk == 0 {
            break;
        }
        match sock.write(&buf[..chunk]) {
            Ok(n) => {
                ctx.meter.add(n);
                refund(ctx, chunk - n);
                paced::took(&mut throttle, n);
            }
            Err(e) if is_timeout(&e) => refund(ctx, chunk),
            Err(e) => {
                error = Some(format!("stream {}: write: {e}", sock_name(&sock)));
                break;
            }
        }
    }
    ctx.meter.finish(&ctx.timeline, Instant::now());
    let _ = sock.shutdown(Shutdown::Write);
    WorkerOutcome { latency: None, error, busy_pct: None }
}

pub(crate) fn refund(ctx: &WorkerCtx, n: usize) {
    if let (Some(b), true) = (&ctx.budget, n > 0) {
        b.refund(n as u64);
    }
}

/// Reads until end of stream (or the watchdog, or a hard stop).
pub fn recv_loop(sock: TcpStream, len: usize, ctx: &WorkerCtx) -> WorkerOutcome {
    recv_loop_with(sock, len, ctx, |_| {})
}

/// [`recv_loop`] with `after` called on the socket after every read that got data.
fn recv_loop_with(
    mut sock: TcpStream,
    len: usize,
    ctx: &WorkerCtx,
    mut after: impl FnMut(&TcpStream),
) -> WorkerOutcome {
    let mut buf = vec![0u8; len];
    let _ = sock.set_read_timeout(Some(CALL_SLICE));
    let mut error = None;
    let mut last = Instant::now();
    loop {
        match sock.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                ctx.meter.add(n);
                last = Instant::now();
                after(&sock);
            }
            Err(e) if is_timeout(&e) => {
                if ctx.should_abandon(Instant::now()) {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) => {
                error = Some(format!("stream {}: read: {e}", sock_name(&sock)));
                break;
            }
        }
    }
    ctx.meter.finish(&ctx.timeline, last);
    WorkerOutcome { latency: None, error, busy_pct: None }
}

pub(crate) fn sock_name(sock: &TcpStream) -> String {
    sock.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "?".into())
}

/// The `tcp-stream` test type.
#[derive(Debug)]
pub struct TcpStreamTest;

impl TestType for TcpStreamTest {
    fn info(&self) -> &'static Info {
        &Info {
            kind: TestKind::TcpStream,
            command: "stream",
            netperf_name: "TCP_STREAM",
            about: "TCP bulk transfer: throughput, retransmits, RTT, CPU cost (netperf TCP_STREAM; -R = TCP_MAERTS; --bidir both at once)",
            transport: Transport::TcpConnections,
            headline: Metric::Goodput,
            shape: Shape::TcpBulk,
        }
    }

    fn label(&self, spec: &TestSpec) -> String {
        format!("stream{}", direction_suffix(spec.direction))
    }

    fn data(&self) -> &'static dyn registry::transport::DataTransport {
        &registry::mptcp::Streams
    }

    fn check(&self, spec: &TestSpec) -> Result<(), Rejection> {
        if registry::mptcp::asks(spec) && flag(spec, "zerocopy") {
            return Err(Rejection::field(
                "mptcp",
                "--mptcp takes no --zerocopy: MPTCP sockets have no MSG_ZEROCOPY",
            ));
        }
        let floor = clamp_floor();
        match spec.options.get("window-clamp") {
            Some(results::ParamValue::Int(n)) if !(u64::from(floor)..=1 << 30).contains(n) => {
                Err(Rejection::field(
                    results::setting::WINDOW_CLAMP.id,
                    format!(
                    "window-clamp {n} is outside {floor} … 1G bytes (below it Linux announces its floor, not \
                     the window asked)"
                ),
                ))
            }
            _ => Ok(()),
        }
    }

    fn data_connections(&self, spec: &TestSpec) -> u32 {
        match spec.direction {
            Direction::Bidir => spec.parallel.saturating_mul(2),
            Direction::Forward | Direction::Reverse => spec.parallel,
        }
    }

    fn jobs(&self, spec: &TestSpec, end: End, data: Data) -> Result<Vec<Job>, Error> {
        match data {
            Data::Tcp(sockets) if registry::mptcp::asks(spec) => {
                jobs(spec, end, sockets).and_then(registry::mptcp::with_readings).map_err(prepare_error)
            }
            Data::Tcp(sockets) => jobs(spec, end, sockets).map_err(prepare_error),
            other => Err(registry::unexpected(self, &other)),
        }
    }

    fn summarize(
        &self,
        spec: &TestSpec,
        local: &SideMeasurement,
        remote: Option<&SideMeasurement>,
    ) -> Summary {
        let mut s = crate::summarize::tcp_bulk(spec, local, remote);
        if let Some(z) = copy_modes::counts(&[Some(local), remote]) {
            s.figures.extend(copy_modes::figures(&z));
        }
        s.figures.extend(registry::mptcp::figures(local, remote));
        s
    }

    fn warnings(
        &self,
        spec: &TestSpec,
        local: &SideMeasurement,
        remote: Option<&SideMeasurement>,
    ) -> Vec<results::Warning> {
        registry::mptcp::warnings(spec, local, remote)
    }

    fn options(&self) -> &'static [TypeOption] {
        &OPTIONS
    }
}

/// ` reverse`, ` bidir` or nothing, for labels.
pub fn direction_suffix(d: Direction) -> &'static str {
    match d {
        Direction::Forward => "",
        Direction::Reverse => " reverse",
        Direction::Bidir => " bidir",
    }
}

/// An I/O error while building the jobs.
pub(crate) fn prepare_error(source: std::io::Error) -> Error {
    Error::Io { what: "preparing the streams", source }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::TestKind;

    #[test]
    fn roles_by_direction() {
        let mut s = TestSpec::new(TestKind::TcpStream);
        s.parallel = 2;
        assert_eq!(role(&s, End::Client, 0), Role::Send);
        assert_eq!(role(&s, End::Server, 0), Role::Recv);
        s.direction = Direction::Reverse;
        assert_eq!(role(&s, End::Client, 1), Role::Recv);
        assert_eq!(role(&s, End::Server, 1), Role::Send);
        s.direction = Direction::Bidir;
        assert_eq!(role(&s, End::Client, 1), Role::Send);
        assert_eq!(role(&s, End::Client, 2), Role::Recv);
        assert_eq!(role(&s, End::Server, 3), Role::Send);
    }
}
