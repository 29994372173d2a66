//! Listening sockets: a server bound to `::` takes IPv4 and IPv6 clients on one socket.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};

use socket2::{Domain, Socket, Type};

/// Listens on `addr`. On the IPv6 wildcard (`::`) the socket is dual-stack (`IPV6_V6ONLY`
/// off, whatever `net.ipv6.bindv6only` says), so IPv4 clients are accepted too, as
/// IPv4-mapped addresses; where IPv6 is unavailable (no IPv6 in the kernel or namespace) it
/// listens on `0.0.0.0` instead. The answer's `local_addr` says which.
pub fn tcp(addr: SocketAddr) -> io::Result<TcpListener> {
    let wildcard_v6 = matches!(addr, SocketAddr::V6(a) if a.ip().is_unspecified());
    match bind(addr, wildcard_v6) {
        Err(e) if wildcard_v6 && ipv6_unavailable(&e) => {
            bind(SocketAddr::from((Ipv4Addr::UNSPECIFIED, addr.port())), false)
        }
        other => other,
    }
}

fn bind(addr: SocketAddr, dual_stack: bool) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    if dual_stack {
        socket.set_only_v6(false)?;
    }
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(1024)?;
    Ok(socket.into())
}

fn ipv6_unavailable(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EAFNOSUPPORT) | Some(libc::EADDRNOTAVAIL) | Some(libc::EPROTONOSUPPORT)
    )
}

#[cfg(test)]
mod tests {
    use std::net::TcpStream;

    use super::*;

    #[test]
    fn the_ipv6_wildcard_takes_ipv4_and_ipv6_clients() {
        let l = tcp("[::]:0".parse().unwrap()).unwrap();
        let port = l.local_addr().unwrap().port();
        TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
        if l.local_addr().unwrap().is_ipv6() {
            TcpStream::connect(("::1", port)).unwrap();
        } else {
            eprintln!("IPv6 unavailable here: fell back to 0.0.0.0");
        }
    }

    #[test]
    fn a_specific_address_stays_what_it_is() {
        let l = tcp("127.0.0.1:0".parse().unwrap()).unwrap();
        assert_eq!(l.local_addr().unwrap().ip(), std::net::IpAddr::from(Ipv4Addr::LOCALHOST));
    }
}
