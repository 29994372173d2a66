//! TCP_INFO (measurement-methods.md §8): the fields tcplab reads, copied out of the kernel's
//! `struct tcp_info`. Fields the running kernel does not fill stay zero.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// A TCP_INFO sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// Smoothed RTT, µs.
    pub rtt_us: u32,
    /// RTT variance, µs.
    pub rttvar_us: u32,
    /// Windowed minimum RTT, µs.
    pub min_rtt_us: u32,
    /// Receiver-side RTT estimate, µs.
    pub rcv_rtt_us: u32,
    /// Congestion window, segments.
    pub snd_cwnd: u32,
    /// Sending MSS.
    pub snd_mss: u32,
    /// Peer's advertised window, bytes.
    pub snd_wnd: u32,
    /// Retransmitted segments over the connection's life.
    pub total_retrans: u32,
    /// Unacknowledged segments.
    pub unacked: u32,
    /// Chrono: busy, µs.
    pub busy_time_us: u64,
    /// Chrono: receive-window limited, µs.
    pub rwnd_limited_us: u64,
    /// Chrono: send-buffer limited, µs.
    pub sndbuf_limited_us: u64,
    /// Last delivery-rate sample, bytes/s.
    pub delivery_rate: u64,
    /// Data segments sent.
    pub data_segs_out: u32,
    /// Reordering events.
    pub reord_seen: u32,
    /// DSACK-reported spurious retransmissions.
    pub dsack_dups: u32,
    /// Bytes the peer acknowledged (`tcpi_bytes_acked`).
    pub bytes_acked: u64,
    /// Bytes received in order (`tcpi_bytes_received`).
    pub bytes_received: u64,
}

impl TcpInfo {
    /// Congestion window in bytes.
    pub fn cwnd_bytes(&self) -> u64 {
        u64::from(self.snd_cwnd) * u64::from(self.snd_mss)
    }
}

/// Reads TCP_INFO from a TCP socket.
pub fn read<S: AsFd>(sock: &S) -> io::Result<TcpInfo> {
    let fd = sock.as_fd().as_raw_fd();
    // SAFETY: an all-zero tcp_info is a valid value (plain integers).
    let mut raw: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `raw` is writable for `len` bytes and `len` is a valid pointer; the kernel writes
    // at most `len` bytes and updates it.
    let rc =
        unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, (&raw mut raw).cast(), &mut len) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(from_raw(&raw))
}

/// The fields tcplab reads out of a kernel `tcp_info` (also one subflow's, see [`crate::mptcp`]).
pub(crate) fn from_raw(raw: &libc::tcp_info) -> TcpInfo {
    TcpInfo {
        rtt_us: raw.tcpi_rtt,
        rttvar_us: raw.tcpi_rttvar,
        min_rtt_us: raw.tcpi_min_rtt,
        rcv_rtt_us: raw.tcpi_rcv_rtt,
        snd_cwnd: raw.tcpi_snd_cwnd,
        snd_mss: raw.tcpi_snd_mss,
        snd_wnd: raw.tcpi_snd_wnd,
        total_retrans: raw.tcpi_total_retrans,
        unacked: raw.tcpi_unacked,
        busy_time_us: raw.tcpi_busy_time,
        rwnd_limited_us: raw.tcpi_rwnd_limited,
        sndbuf_limited_us: raw.tcpi_sndbuf_limited,
        delivery_rate: raw.tcpi_delivery_rate,
        data_segs_out: raw.tcpi_data_segs_out,
        reord_seen: raw.tcpi_reord_seen,
        dsack_dups: raw.tcpi_dsack_dups,
        bytes_acked: raw.tcpi_bytes_acked,
        bytes_received: raw.tcpi_bytes_received,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_connection_has_tcp_info() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let info = read(&c).unwrap();
        assert!(info.snd_mss > 0);
        assert!(info.snd_cwnd > 0);
    }
}
