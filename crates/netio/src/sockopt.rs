//! Socket options of data connections: set what was asked, then report what the kernel did.

use std::io;
use std::os::fd::AsFd;

use results::{Buffer, BufferGrant, BufferSizes, SocketReport};
use socket2::SockRef;
use thiserror::Error;

/// Options asked for on one end's data sockets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataSocketOpts {
    /// SO_SNDBUF and SO_RCVBUF.
    pub buffers: BufferSizes,
    /// TCP_NODELAY.
    pub nodelay: bool,
    /// TCP_MAXSEG.
    pub mss: Option<u32>,
    /// TCP_CONGESTION.
    pub congestion: Option<String>,
}

/// A socket option the kernel refused.
#[derive(Debug, Error)]
pub enum SockError {
    /// The congestion control is not available here.
    #[error("congestion control '{name}' is not available on this host (available: {available})")]
    Congestion { name: String, available: String, source: io::Error },
    /// Another option failed.
    #[error("setting {option} to {value}: {source}")]
    Option { option: &'static str, value: String, source: io::Error },
}

/// Applies `opts` to a socket; call before connect (client) or right after accept (server).
pub fn apply<S: AsFd>(sock: &S, opts: &DataSocketOpts) -> Result<(), SockError> {
    let s = SockRef::from(sock);
    let fail = |option, value: String| move |source| SockError::Option { option, value, source };
    set_buffers(sock, opts.buffers)?;
    if opts.nodelay {
        s.set_tcp_nodelay(true).map_err(fail("TCP_NODELAY", "1".into()))?;
    }
    if let Some(n) = opts.mss {
        s.set_tcp_mss(n).map_err(fail("TCP_MAXSEG", n.to_string()))?;
    }
    if let Some(name) = &opts.congestion {
        set_congestion(sock, name)?;
    }
    Ok(())
}

/// Sets TCP_WINDOW_CLAMP: the receive window this socket announces never exceeds `bytes`,
/// whatever its receive buffer. Below [`window_clamp_floor`] the kernel keeps its floor
/// instead.
pub fn set_window_clamp<S: AsFd>(sock: &S, bytes: u32) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let value = libc::c_int::try_from(bytes).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    let fd = sock.as_fd().as_raw_fd();
    // SAFETY: `value` outlives the call and `len` is its size.
    let rc = unsafe {
        libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, (&raw const value).cast(), len)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The smallest TCP_WINDOW_CLAMP this kernel keeps, read from a fresh socket: Linux raises a
/// smaller clamp to SOCK_MIN_RCVBUF / 2 (1152 bytes on Linux 6.x, x86-64), so no receiver
/// announces a smaller window. `None` when no socket can be made.
pub fn window_clamp_floor() -> Option<u32> {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).ok()?;
    set_window_clamp(&s, 1).ok()?;
    window_clamp(&s).ok()
}

/// Reads TCP_WINDOW_CLAMP.
pub fn window_clamp<S: AsFd>(sock: &S) -> io::Result<u32> {
    use std::os::fd::AsRawFd;
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    let fd = sock.as_fd().as_raw_fd();
    // SAFETY: `value` and `len` outlive the call; `len` is `value`'s size.
    let rc = unsafe {
        libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, (&raw mut value).cast(), &raw mut len)
    };
    if rc == 0 {
        Ok(u32::try_from(value).unwrap_or(0))
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sets TCP_CONGESTION, with the list of available algorithms in the error.
pub fn set_congestion<S: AsFd>(sock: &S, name: &str) -> Result<(), SockError> {
    SockRef::from(sock).set_tcp_congestion(name.as_bytes()).map_err(|source| SockError::Congestion {
        name: name.to_string(),
        available: crate::host::congestion_available().join(", "),
        source,
    })
}

/// Sets the socket buffers asked for (SO_SNDBUF, SO_RCVBUF); one not asked for keeps the OS
/// default and its autotuning.
pub fn set_buffers<S: AsFd>(sock: &S, sizes: BufferSizes) -> Result<(), SockError> {
    let s = SockRef::from(sock);
    for b in Buffer::ALL {
        let Some(n) = sizes.get(b) else { continue };
        let (option, set) = match b {
            Buffer::Send => ("SO_SNDBUF", s.set_send_buffer_size(n as usize)),
            Buffer::Receive => ("SO_RCVBUF", s.set_recv_buffer_size(n as usize)),
        };
        set.map_err(|source| SockError::Option { option, value: n.to_string(), source })?;
    }
    Ok(())
}

/// Buffer `b` of a socket as `asked` requested it and as getsockopt reports it (0 when it
/// cannot be read).
pub fn granted<S: AsFd>(sock: &S, b: Buffer, asked: BufferSizes) -> BufferGrant {
    let s = SockRef::from(sock);
    let actual = match b {
        Buffer::Send => s.send_buffer_size(),
        Buffer::Receive => s.recv_buffer_size(),
    };
    BufferGrant {
        requested: asked.get(b),
        actual: actual.map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
    }
}

/// What the kernel reports for a socket after [`apply`].
pub fn report<S: AsFd>(sock: &S, opts: &DataSocketOpts) -> SocketReport {
    let s = SockRef::from(sock);
    let congestion = s
        .tcp_congestion()
        .map(|v| String::from_utf8_lossy(&v).trim_end_matches('\0').to_string())
        .unwrap_or_default();
    SocketReport {
        send: granted(sock, Buffer::Send, opts.buffers),
        receive: granted(sock, Buffer::Receive, opts.buffers),
        mss: s.tcp_mss().unwrap_or(0),
        congestion,
        nodelay: s.tcp_nodelay().unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_clamp_reads_back_as_set() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| unreachable!("{e}"));
        let c = std::net::TcpStream::connect(l.local_addr().unwrap_or_else(|e| unreachable!("{e}")))
            .unwrap_or_else(|e| unreachable!("{e}"));
        set_window_clamp(&c, 4096).unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(window_clamp(&c).ok(), Some(4096));
    }

    #[test]
    fn a_clamp_below_the_floor_reads_back_as_the_floor() {
        let floor = window_clamp_floor().unwrap_or_else(|| unreachable!("no TCP socket"));
        assert!((512..4096).contains(&floor), "{floor}");
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
            .unwrap_or_else(|e| unreachable!("{e}"));
        set_window_clamp(&s, floor - 1).unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(window_clamp(&s).ok(), Some(floor), "a clamp below the floor is raised to it");
        set_window_clamp(&s, floor + 1).unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(window_clamp(&s).ok(), Some(floor + 1));
    }

    #[test]
    fn buffers_asked_for_are_set_and_reported_with_what_the_kernel_granted() {
        let u = std::net::UdpSocket::bind("127.0.0.1:0").unwrap_or_else(|e| unreachable!("{e}"));
        let asked = BufferSizes { send: None, receive: Some(8192) };
        set_buffers(&u, asked).unwrap_or_else(|e| unreachable!("{e}"));
        let rcv = granted(&u, Buffer::Receive, asked);
        assert_eq!(rcv, BufferGrant { requested: Some(8192), actual: 16_384 }, "Linux doubles SO_RCVBUF");
        let snd = granted(&u, Buffer::Send, asked);
        assert!(snd.requested.is_none() && snd.actual > 0, "{snd:?}");
    }
}
