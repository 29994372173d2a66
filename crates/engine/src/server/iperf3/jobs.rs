//! The server's side of an iperf3 test as tcplab jobs: TCP streams run `tcp-stream`'s own
//! workers (or, with `-b` on a server-sending stream, a paced writer); UDP streams run the
//! iperf3-format workers of [`crate::iperf3::udp_data`]. Stream roles follow tcplab's rule, which is
//! iperf3's: with `--bidir` the client's sending streams come first.

use std::io::Write as _;
use std::net::{Shutdown, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use results::{Role, SocketReport};

use super::plan::Plan;
use crate::iperf3::udp_data;
use crate::meter::WorkerCtx;
use crate::pacing::Pacer;
use crate::side::{DataSocket, End, Job, WorkDebug, WorkerOutcome};
use crate::stream::{self, role};

/// What the session keeps to end the streams at TEST_END.
#[derive(Debug, Default)]
pub struct Handles {
    tcp: Vec<(TcpStream, Role)>,
}

impl Handles {
    /// Ends every TCP stream, as iperf3's server closes them at TEST_END, but kinder to the
    /// count: a sending stream is shut down both ways (a blocked write returns at once), a
    /// receiving one only for reading, so that its reader still takes what is queued and then
    /// sees the end.
    pub fn shutdown(&self) {
        for (s, role) in &self.tcp {
            let how = if *role == Role::Send { Shutdown::Both } else { Shutdown::Read };
            let _ = s.shutdown(how);
        }
    }
}

/// Jobs for TCP streams, in the order they were accepted.
pub fn tcp(plan: &Plan, sockets: Vec<DataSocket>) -> std::io::Result<(Vec<Job>, Handles)> {
    let handles = Handles {
        tcp: sockets
            .iter()
            .filter_map(|s| Some((s.stream.try_clone().ok()?, role(&plan.spec, End::Server, s.index))))
            .collect(),
    };
    if plan.tcp_rate_bps == 0 {
        return Ok((stream::jobs(&plan.spec, End::Server, sockets)?, handles));
    }
    let mut jobs = Vec::with_capacity(sockets.len());
    for ds in sockets {
        if role(&plan.spec, End::Server, ds.index) == Role::Recv {
            jobs.extend(stream::jobs(&plan.spec, End::Server, vec![ds])?);
            continue;
        }
        let (index, (sock, probe)) = (ds.index, ds.split()?);
        let (len, rate) = (plan.spec.send_len as usize, plan.tcp_rate_bps);
        let work: crate::side::Work = Box::new(move |ctx: &WorkerCtx| paced_send(sock, len, rate, ctx));
        jobs.push(Job { index, role: Role::Send, socket: Some(probe), work: WorkDebug(work) });
    }
    Ok((jobs, handles))
}

/// Jobs for UDP streams, in the order their hellos arrived.
pub fn udp(plan: &Plan, socks: Vec<(UdpSocket, SocketReport)>) -> Vec<Job> {
    udp_data::jobs(&plan.spec, End::Server, plan.counters_64bit, socks)
}

/// Writes `len`-byte blocks at `rate_bps` (iperf3 `-b` for TCP) until the stop, deadline or
/// budget.
fn paced_send(mut sock: TcpStream, len: usize, rate_bps: u64, ctx: &WorkerCtx) -> WorkerOutcome {
    let buf = stream::payload(len);
    let _ = sock.set_write_timeout(Some(stream::CALL_SLICE));
    let mut pacer = Pacer::new(rate_bps, len as u32, 1, 1);
    let start = ctx.timeline.start;
    let mut error = None;
    loop {
        let now = Instant::now();
        if ctx.should_stop_sending(now) {
            break;
        }
        if pacer.due(now.saturating_duration_since(start).as_nanos() as u64) == 0 {
            let next = start + Duration::from_nanos(pacer.next_ns());
            std::thread::sleep(next.saturating_duration_since(now).min(stream::CALL_SLICE));
            continue;
        }
        let chunk = ctx.budget.as_ref().map_or(len, |b| b.claim(len as u64) as usize);
        if chunk == 0 {
            break;
        }
        match sock.write(&buf[..chunk]) {
            Ok(n) => {
                ctx.meter.add(n);
                stream::refund(ctx, chunk - n);
                pacer.sent(1);
            }
            Err(e) if crate::control::is_timeout(&e) => stream::refund(ctx, chunk),
            Err(e) => {
                error = Some(format!("iperf3 stream: write: {e}"));
                break;
            }
        }
    }
    ctx.meter.finish(&ctx.timeline, Instant::now());
    let _ = sock.shutdown(Shutdown::Write);
    WorkerOutcome { error, ..WorkerOutcome::default() }
}
