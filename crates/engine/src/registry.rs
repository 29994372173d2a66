//! Every test type, in one table: id, netperf name, what it measures. The CLI's help, the
//! server's dispatch and reports read this table; a new test type adds one row here and one
//! file beside this one.

use results::{Direction, TestKind, TestSpec};

/// Description of a test type.
#[derive(Debug, Clone, Copy)]
pub struct TestType {
    /// The test kind.
    pub kind: TestKind,
    /// netperf's name for the same test.
    pub netperf_name: &'static str,
    /// One line on what it measures.
    pub about: &'static str,
}

/// All test types.
pub const TESTS: &[TestType] = &[
    TestType {
        kind: TestKind::TcpStream,
        netperf_name: "TCP_STREAM",
        about: "TCP bulk transfer: throughput, retransmits, RTT, CPU cost",
    },
    TestType {
        kind: TestKind::TcpRr,
        netperf_name: "TCP_RR",
        about: "TCP request/response on one connection: transactions/s and latency",
    },
    TestType {
        kind: TestKind::TcpCrr,
        netperf_name: "TCP_CRR",
        about: "TCP connect/request/response: connections/s and latency",
    },
    TestType {
        kind: TestKind::UdpStream,
        netperf_name: "UDP_STREAM",
        about: "paced UDP datagrams: achieved rate, loss, reordering, duplicates, jitter, receiver overrun",
    },
    TestType {
        kind: TestKind::UdpRr,
        netperf_name: "UDP_RR",
        about: "UDP request/response: transactions/s, latency, lost requests",
    },
];

/// Looks a test type up by kind.
pub fn find(kind: TestKind) -> Option<&'static TestType> {
    TESTS.iter().find(|t| t.kind == kind)
}

/// A short label for tables: `stream`, `stream reverse`, `rr 64/64`, `crr 1/1`.
pub fn label(spec: &TestSpec) -> String {
    match spec.test {
        TestKind::TcpStream => match spec.direction {
            Direction::Forward => "stream".into(),
            Direction::Reverse => "stream reverse".into(),
            Direction::Bidir => "stream bidir".into(),
        },
        TestKind::TcpRr => format!("rr {}/{}", spec.request_len, spec.response_len),
        TestKind::TcpCrr => format!("crr {}/{}", spec.request_len, spec.response_len),
        TestKind::UdpStream => {
            let dir = match spec.direction {
                Direction::Forward => "",
                Direction::Reverse => " reverse",
                Direction::Bidir => " bidir",
            };
            format!("udp {}{dir}", spec.send_len)
        }
        TestKind::UdpRr => format!("udp-rr {}/{}", spec.request_len, spec.response_len),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_kind_is_listed() {
        let mut ids: Vec<_> = TESTS.iter().map(|t| t.kind.id()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), TESTS.len());
        for k in
            [TestKind::TcpStream, TestKind::TcpRr, TestKind::TcpCrr, TestKind::UdpStream, TestKind::UdpRr]
        {
            assert!(find(k).is_some_and(|t| !t.about.is_empty()));
        }
    }
}
