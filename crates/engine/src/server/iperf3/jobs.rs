//! The server's side of an iperf3 test as tcplab jobs: TCP streams run `tcp-stream`'s own
//! workers (paced with `-b`, as tcplab's own streams); UDP streams run the
//! iperf3-format workers of [`crate::iperf3::udp_data`]. Stream roles follow tcplab's rule, which is
//! iperf3's: with `--bidir` the client's sending streams come first.

use std::net::{Shutdown, TcpStream, UdpSocket};

use results::{Role, SocketReport};

use super::plan::Plan;
use crate::iperf3::udp_data;
use crate::side::{DataSocket, End, Job};
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

/// Jobs for TCP streams, in the order they were accepted: `tcp-stream`'s own workers, whose
/// senders pace to the spec's rate (iperf3's `-b`, per stream).
pub fn tcp(plan: &Plan, sockets: Vec<DataSocket>) -> std::io::Result<(Vec<Job>, Handles)> {
    let handles = Handles {
        tcp: sockets
            .iter()
            .filter_map(|s| Some((s.stream.try_clone().ok()?, role(&plan.spec, End::Server, s.index))))
            .collect(),
    };
    let jobs = stream::jobs(&plan.spec, End::Server, sockets)?;
    // An MPTCP test (iperf3 -m) keeps each connection's MPTCP reading, as tcplab's own do.
    let jobs = if crate::registry::mptcp::asks(&plan.spec) {
        crate::registry::mptcp::with_readings(jobs)?
    } else {
        jobs
    };
    Ok((jobs, handles))
}

/// Jobs for UDP streams, in the order their hellos arrived.
pub fn udp(plan: &Plan, socks: Vec<(UdpSocket, SocketReport)>) -> Vec<Job> {
    udp_data::jobs(&plan.spec, End::Server, plan.counters_64bit, socks)
}
