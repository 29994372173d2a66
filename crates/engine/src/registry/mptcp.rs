//! Multipath TCP streams (`tcplab stream --mptcp`, Linux `IPPROTO_MPTCP`): a transport whose
//! data connections are MPTCP at both ends, and what each connection's MPTCP level said at
//! its end (subflows, announcements, data-level retransmits, bytes per subflow) as the
//! stream type's figures. A connection that fell back to plain TCP is said in a warning,
//! never reported as MPTCP.
//!
//! The server's data listener must be MPTCP (`tcplab server --mptcp`, which also takes plain
//! TCP clients): a server whose listener is not refuses the test ([`refusal`]).

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};

use netio::mptcp::{self, Level};
use results::{Combine, Figure, FigureValue, ParamValue, SideMeasurement, TestSpec, Warning, WarningKind};
use serde::{Deserialize, Serialize};
use socket2::SockAddr;
use wire::{ErrorCode, Rejection};

use super::transport::{self, ClientEnd, DataTransport, ServerEnd, Traits};
use super::{Data, Transport};
use crate::session::server::Event;
use crate::side::{DataSocket, Job, WorkDebug};
use crate::Error;

/// Each stream's section, suffixed with its stream number (`mptcp-0`, …).
const SECTION_PREFIX: &str = "mptcp-";

/// Whether `spec` asks for MPTCP (`--mptcp`).
pub fn asks(spec: &TestSpec) -> bool {
    matches!(
        spec.options.get(results::setting::MPTCP.option.unwrap_or("mptcp")),
        Some(ParamValue::Bool(true))
    )
}

/// Why a server refuses `spec`, if it does: it asks for MPTCP and this server's listener is
/// not MPTCP (`listening_mptcp`), or its kernel has none.
pub fn refusal(spec: &TestSpec, listening_mptcp: bool) -> Option<Rejection> {
    if !asks(spec) {
        return None;
    }
    let msg = match mptcp::available() {
        Err(e) => format!("this server cannot take MPTCP tests: {e}"),
        Ok(()) if !listening_mptcp => {
            "this server does not listen for MPTCP: start it with `tcplab server --mptcp`".to_string()
        }
        Ok(()) => return None,
    };
    Some(Rejection { field: Some("mptcp".into()), ..Rejection::new(ErrorCode::Unsupported, msg) })
}

/// A stream's connections: MPTCP where the spec asks for it, else TCP connections.
#[derive(Debug)]
pub struct Streams;

impl DataTransport for Streams {
    fn open(&self, c: ClientEnd<'_>) -> Result<(Data, bool), Error> {
        if !asks(c.spec) {
            return transport::of(Transport::TcpConnections).open(c);
        }
        let n = super::of(c.spec.test).data_connections(c.spec);
        Ok((Data::Tcp((0..n).map(|i| connect(&c, i)).collect::<Result<_, _>>()?), false))
    }
    fn bind(&self, spec: &TestSpec, local: IpAddr) -> Result<Vec<UdpSocket>, Error> {
        transport::of(Transport::TcpConnections).bind(spec, local)
    }
    fn accept(&self, s: ServerEnd<'_>) -> Result<Data, Event> {
        // The server's listener made them MPTCP (or fallen back, which the jobs report).
        transport::of(Transport::TcpConnections).accept(s)
    }
    fn traits(&self) -> Traits {
        transport::of(Transport::TcpConnections).traits()
    }
}

/// Opens data connection `index` as MPTCP, with the spec's socket options, and authenticates it.
fn connect(c: &ClientEnd<'_>, index: u32) -> Result<DataSocket, Error> {
    let io = |what| move |source| Error::Io { what, source };
    let spec = c.spec;
    let opts = crate::side::socket_opts(crate::side::End::Client, spec);
    let sock = mptcp::socket(c.server).map_err(io("creating an MPTCP socket"))?;
    netio::sockopt::apply(&sock, &opts)?;
    if let Some(ip) = c.bind {
        sock.bind(&SockAddr::from(SocketAddr::new(ip, 0))).map_err(io("binding the local address"))?;
    }
    sock.connect_timeout(&SockAddr::from(c.server), c.timeout)
        .map_err(|source| Error::Connect { addr: c.server.to_string(), source })?;
    let mut stream: TcpStream = sock.into();
    stream.write_all(&c.auth.hello(index)).map_err(io("sending a data hello"))?;
    let report = netio::sockopt::report(&stream, &opts);
    Ok(DataSocket { index, stream, report })
}

/// What one connection's MPTCP level said at one end when its stream ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reading {
    /// The connection went on as plain TCP.
    pub fallback: bool,
    /// Subflows open at the end, the first included.
    pub subflows: u32,
    /// ADD_ADDR announcements accepted from the peer.
    pub add_addr_accepted: u32,
    /// Data-level retransmissions (kernel 6.5+).
    pub retransmits: Option<u32>,
    /// Bytes each subflow carried (its TCP_INFO: acknowledged where it sent, received
    /// where it received), in the kernel's subflow order.
    pub subflow_bytes: Vec<u64>,
}

/// The reading of `sock` now; `None` where the socket cannot say (closed, not a socket).
pub fn read(sock: &TcpStream) -> Option<Reading> {
    match mptcp::info(sock).ok()? {
        Level::Fallback => Some(Reading { fallback: true, ..Reading::default() }),
        Level::Mptcp(i) => {
            let flows = mptcp::subflows(sock).map(|(f, _)| f).unwrap_or_default();
            Some(Reading {
                fallback: false,
                subflows: i.open_subflows(),
                add_addr_accepted: u32::from(i.add_addr_accepted),
                retransmits: i.retransmits,
                subflow_bytes: flows.iter().map(|f| f.bytes_acked.max(f.bytes_received)).collect(),
            })
        }
    }
}

/// `jobs` with each stream's MPTCP reading left as its section when its worker ends.
pub fn with_readings(jobs: Vec<Job>) -> std::io::Result<Vec<Job>> {
    let mut out = Vec::with_capacity(jobs.len());
    for mut job in jobs {
        let Some(probe) = job.socket.as_ref().map(|(s, _)| s.try_clone()).transpose()? else {
            out.push(job);
            continue;
        };
        let (index, inner) = (job.index, job.work.0);
        job.work = WorkDebug(Box::new(move |ctx| {
            let outcome = inner(ctx);
            if let Some(v) = read(&probe).and_then(|r| serde_json::to_value(r).ok()) {
                ctx.meter.set_section(&format!("{SECTION_PREFIX}{index}"), v);
            }
            outcome
        }));
        out.push(job);
    }
    Ok(out)
}

/// Every stream's readings at both ends, by stream number: (client's, server's).
fn readings(sides: [Option<&SideMeasurement>; 2]) -> Vec<Vec<Reading>> {
    sides
        .iter()
        .map(|m| {
            m.iter()
                .flat_map(|m| m.sections.iter())
                .filter(|(name, _)| name.starts_with(SECTION_PREFIX))
                .filter_map(|(_, v)| serde_json::from_value::<Reading>(v.clone()).ok())
                .collect()
        })
        .collect()
}

/// The MPTCP figures of a test's two ends; empty when neither end left a reading.
pub fn figures(local: &SideMeasurement, remote: Option<&SideMeasurement>) -> Vec<Figure> {
    let sides = readings([Some(local), remote]);
    let all: Vec<&Reading> = sides.iter().flatten().collect();
    if all.is_empty() {
        return Vec::new();
    }
    let fallen = sides.iter().map(|s| s.iter().filter(|r| r.fallback).count()).max().unwrap_or(0);
    let subflows = all.iter().map(|r| r.subflows).max().unwrap_or(0);
    let accepted: u64 = all.iter().map(|r| u64::from(r.add_addr_accepted)).sum();
    let mut out = vec![
        Figure::new("MPTCP subflows", FigureValue::Count(u64::from(subflows))).combined(Combine::PerRun),
        Figure::new("MPTCP ADD_ADDR accepted", FigureValue::Count(accepted)).combined(Combine::PerRun),
        Figure::new("MPTCP connections fallen back to TCP", FigureValue::Count(fallen as u64))
            .combined(Combine::PerRun),
    ];
    let retrans: Vec<u64> = all.iter().filter_map(|r| r.retransmits).map(u64::from).collect();
    if !retrans.is_empty() {
        let n = retrans.iter().sum();
        out.push(Figure::new("MPTCP data-level retransmits", FigureValue::Count(n)).combined(Combine::Mean));
    }
    for (i, bytes) in subflow_bytes(&sides).into_iter().enumerate() {
        let label = format!("MPTCP subflow {} bytes", i + 1);
        out.push(Figure::new(label, FigureValue::Bytes(bytes)).combined(Combine::Mean));
    }
    out
}

/// Bytes per subflow over all streams: per stream the larger of the two ends' counts (the
/// receiver's is exact, the sender's may miss the last unacknowledged bytes).
fn subflow_bytes(sides: &[Vec<Reading>]) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    let streams = sides.iter().map(Vec::len).max().unwrap_or(0);
    for s in 0..streams {
        let of = |side: &Vec<Reading>| side.get(s).map(|r| r.subflow_bytes.clone()).unwrap_or_default();
        let (a, b) = (of(&sides[0]), sides.get(1).map(of).unwrap_or_default());
        for i in 0..a.len().max(b.len()) {
            let n = a.get(i).copied().unwrap_or(0).max(b.get(i).copied().unwrap_or(0));
            match out.get_mut(i) {
                Some(t) => *t = t.saturating_add(n),
                None => out.push(n),
            }
        }
    }
    out
}

/// The warning when a test asked for MPTCP and a connection went on as plain TCP (or no end
/// could say what it was).
pub fn warnings(spec: &TestSpec, local: &SideMeasurement, remote: Option<&SideMeasurement>) -> Vec<Warning> {
    if !asks(spec) {
        return Vec::new();
    }
    let sides = readings([Some(local), remote]);
    let fallen = sides.iter().map(|s| s.iter().filter(|r| r.fallback).count()).max().unwrap_or(0);
    let message = if fallen > 0 {
        format!("{fallen} of the MPTCP connections fell back to plain TCP: their figures are TCP's")
    } else if sides.iter().all(Vec::is_empty) && !local.streams.is_empty() {
        "no end could read MPTCP_INFO: whether the connections were MPTCP is unknown".to_string()
    } else {
        return Vec::new();
    };
    vec![Warning {
        kind: WarningKind::MptcpFallback,
        message,
        advice: "check net.mptcp.enabled at both ends and that no middlebox strips MPTCP options".into(),
    }]
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::net::TcpListener;

    use super::*;

    fn side(readings: &[Reading]) -> SideMeasurement {
        let sections = readings
            .iter()
            .enumerate()
            .map(|(i, r)| (format!("{SECTION_PREFIX}{i}"), serde_json::to_value(r).unwrap()))
            .collect();
        SideMeasurement { sections, ..SideMeasurement::default() }
    }

    fn two_subflows(bytes: [u64; 2]) -> Reading {
        Reading {
            subflows: 2,
            add_addr_accepted: 1,
            retransmits: Some(3),
            subflow_bytes: bytes.to_vec(),
            ..Reading::default()
        }
    }

    fn asking() -> TestSpec {
        let mut spec = TestSpec::new(results::TestKind::TcpStream);
        (results::setting::MPTCP.set)(&mut spec, &ParamValue::Bool(true)).unwrap();
        spec
    }

    fn value(figures: &[Figure], label: &str) -> Option<FigureValue> {
        figures.iter().find(|f| f.label == label).map(|f| f.value.clone())
    }

    #[test]
    fn figures_add_up_streams_and_take_the_larger_end_per_subflow() {
        let client = side(&[two_subflows([100, 50]), two_subflows([10, 0])]);
        let server =
            side(&[two_subflows([90, 60]), Reading { add_addr_accepted: 0, ..two_subflows([10, 5]) }]);
        let f = figures(&client, Some(&server));
        assert_eq!(value(&f, "MPTCP subflows"), Some(FigureValue::Count(2)));
        assert_eq!(value(&f, "MPTCP ADD_ADDR accepted"), Some(FigureValue::Count(3)));
        assert_eq!(value(&f, "MPTCP data-level retransmits"), Some(FigureValue::Count(12)));
        assert_eq!(value(&f, "MPTCP subflow 1 bytes"), Some(FigureValue::Bytes(110)));
        assert_eq!(value(&f, "MPTCP subflow 2 bytes"), Some(FigureValue::Bytes(65)));
        assert_eq!(value(&f, "MPTCP connections fallen back to TCP"), Some(FigureValue::Count(0)));
        let subflows = f.iter().find(|f| f.label == "MPTCP subflows").unwrap();
        assert_eq!(subflows.combine, Combine::PerRun, "a count of paths is not averaged");
        assert!(figures(&SideMeasurement::default(), None).is_empty(), "no MPTCP, no figures");
    }

    #[test]
    fn a_fallen_back_connection_is_warned_about_and_mptcp_is_not() {
        let fallen = Reading { fallback: true, ..Reading::default() };
        let w = warnings(&asking(), &side(&[fallen.clone(), two_subflows([1, 1])]), Some(&side(&[fallen])));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].kind, WarningKind::MptcpFallback);
        assert!(w[0].message.starts_with("1 of the MPTCP connections fell back"), "{}", w[0].message);
        assert!(warnings(&asking(), &side(&[two_subflows([1, 1])]), None).is_empty());
        let plain = TestSpec::new(results::TestKind::TcpStream);
        assert!(warnings(&plain, &side(&[Reading { fallback: true, ..Reading::default() }]), None).is_empty());
    }

    /// One connection from an MPTCP client to `listener`, and the reading of each end once it
    /// carried a few bytes.
    fn readings_over(listener: TcpListener) -> (Reading, Reading) {
        let addr = listener.local_addr().unwrap();
        let sock = mptcp::socket(addr).unwrap();
        sock.connect(&SockAddr::from(addr)).unwrap();
        let mut client: TcpStream = sock.into();
        client.write_all(&[1u8; 4096]).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        server.read_exact(&mut [0u8; 4096]).unwrap();
        (read(&client).unwrap(), read(&server).unwrap())
    }

    #[test]
    fn a_reading_says_mptcp_or_fallback_as_the_connection_was() {
        let (c, s) = readings_over(mptcp::listen("127.0.0.1:0".parse().unwrap()).unwrap());
        assert!(!c.fallback && !s.fallback, "{c:?} {s:?}");
        assert_eq!((c.subflows, c.subflow_bytes.len()), (1, 1), "{c:?}");
        assert!(s.subflow_bytes[0] >= 4096, "the server's subflow received the bytes: {s:?}");
        let (c, s) = readings_over(TcpListener::bind("127.0.0.1:0").unwrap());
        assert!(c.fallback, "an MPTCP client of a plain TCP server falls back: {c:?}");
        assert!(s.fallback && s.subflow_bytes.is_empty(), "{s:?}");
    }

    #[test]
    fn a_server_that_does_not_listen_for_mptcp_refuses_its_tests() {
        let r = refusal(&asking(), false).expect("refused");
        assert_eq!(r.code, ErrorCode::Unsupported);
        assert!(r.message.contains("tcplab server --mptcp"), "{}", r.message);
        assert!(refusal(&asking(), true).is_none(), "this kernel has MPTCP");
        assert!(refusal(&TestSpec::new(results::TestKind::TcpStream), false).is_none());
    }
}
