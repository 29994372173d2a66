//! Every test type, in one table. A test type is one module beside this file (declared at
//! the top) implementing [`TestType`], plus one line in [`of`]: its settings and their checks, the client's and server's jobs, its
//! summary and headline metric, its label and the parameters a sweep may vary. The server's
//! dispatch, the client, the CLI's help and names, sweeps, confidence judging, the archive and
//! the reports all derive from this table; nothing else branches on a test's kind.

pub mod crr;
pub mod file;
pub mod mptcp;
pub mod rr;
pub mod segment_cost;
pub mod stream;
pub mod transport;
pub mod udp;
pub mod udp_rr;

use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc::Receiver;

use results::setting::ValueKind;
use results::{
    IntervalLayout, Metric, Plot, Produces, Shape, SideMeasurement, Summary, SummaryTable, TestKind, TestSpec,
};
use wire::Rejection;

use crate::side::{DataSocket, End, Job};
use crate::udp_flow::UdpFlow;
use crate::Error;

/// How a test's data travels; the client and server set its connections up by this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// TCP connections opened before the start ([`TestType::data_connections`] of them).
    TcpConnections,
    /// A TCP connection per transaction, opened during the test.
    TcpPerTransaction,
    /// UDP flows, one per stream and direction.
    Udp,
}

/// What a side's jobs run on, as its [`Transport`] set it up.
#[derive(Debug)]
pub enum Data {
    /// Connected TCP data sockets, in stream order.
    Tcp(Vec<DataSocket>),
    /// Connected UDP flows, in stream order.
    Udp(Vec<UdpFlow>),
    /// Client of a per-transaction test: connect to `server`, presenting the test's token.
    Connect {
        /// The server's data address.
        server: SocketAddr,
        /// The test's token and session key: each connection opens with `auth.hello(stream)`.
        auth: crate::auth::DataAuth,
    },
    /// Server of a per-transaction test: the connections as they arrive.
    Accept(Receiver<TcpStream>),
}

/// A setting only one test type has, carried in [`TestSpec::options`] by `name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeOption {
    /// Its name in the spec, the wire and the archive.
    pub name: &'static str,
    /// How its value is written and checked.
    pub kind: ValueKind,
    /// One line for help and errors.
    pub about: &'static str,
}

/// The static facts of a test type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Info {
    /// Its kind (stable id).
    pub kind: TestKind,
    /// The subcommand that runs it (`stream`, `udp-rr`), also accepted wherever a test type
    /// is named (`history --test`, `sweep --test`).
    pub command: &'static str,
    /// netperf's name for the same test.
    pub netperf_name: &'static str,
    /// One line on what it measures (the subcommand's help).
    pub about: &'static str,
    /// How its data travels.
    pub transport: Transport,
    /// The number it is judged by.
    pub headline: Metric,
    /// How its summary and intervals are laid out.
    pub shape: Shape,
}

/// One test type. Implementations are unit structs, one per module, registered in [`of`].
pub trait TestType: Sync + std::fmt::Debug {
    /// What it is: id, command, names, transport, headline metric, shape.
    fn info(&self) -> &'static Info;
    /// The stable id's kind.
    fn kind(&self) -> TestKind {
        self.info().kind
    }
    /// The subcommand that runs it.
    fn command(&self) -> &'static str {
        self.info().command
    }
    /// netperf's name for the same test.
    fn netperf_name(&self) -> &'static str {
        self.info().netperf_name
    }
    /// One line on what it measures.
    fn about(&self) -> &'static str {
        self.info().about
    }
    /// How its data travels.
    fn transport(&self) -> Transport {
        self.info().transport
    }
    /// Whether its data flows read the path's counters at setup (bulk UDP: its summary sets
    /// datagrams beside packets).
    fn probes_path(&self) -> bool {
        self.shape() == Shape::UdpBulk
    }
    /// Whether a server's rate cap (`max-rate`) applies to it (paced UDP bulk).
    fn rate_capped(&self) -> bool {
        self.shape() == Shape::UdpBulk
    }
    /// How its data travels, as the object that opens and accepts its data connections.
    fn data(&self) -> &'static dyn transport::DataTransport {
        transport::of(self.transport())
    }
    /// The number it is judged by.
    fn headline(&self) -> Metric {
        self.info().headline
    }
    /// How its summary and intervals are laid out.
    fn shape(&self) -> Shape {
        self.info().shape
    }
    /// What its results hold and how the reports show them: its metrics, summary tables,
    /// interval plots and live interval columns. By default from its shape; a type with
    /// views of its own overrides it.
    fn produces(&self) -> Produces {
        let (table, plot, intervals) = match self.shape() {
            Shape::TcpBulk => (SummaryTable::Streams, Plot::StreamTimeline, IntervalLayout::Bulk),
            Shape::UdpBulk => (SummaryTable::Datagrams, Plot::DatagramTimeline, IntervalLayout::Datagrams),
            Shape::Transactions => {
                (SummaryTable::Transactions, Plot::TransactionTimeline, IntervalLayout::Transactions)
            }
        };
        Produces {
            metrics: vec![self.headline()],
            tables: vec![table],
            plots: vec![plot],
            intervals: Some(intervals),
        }
    }
    /// How to make a test of this type last longer, when its own settings decide (a file
    /// transfer's size); `None`: by `-t` or `-n` as every test.
    fn longer(&self) -> Option<&'static str> {
        None
    }
    /// Whether its data travels in UDP datagrams (a model of its link counts UDP headers).
    fn over_udp(&self) -> bool {
        self.transport() == Transport::Udp
    }
    /// Its default settings (iperf3's and netperf's where they have the test).
    fn defaults(&self) -> TestSpec {
        TestSpec::new(self.kind())
    }
    /// A short label for tables: `stream reverse`, `rr 64/64`.
    fn label(&self, spec: &TestSpec) -> String;
    /// Checks what only this type knows: the ranges and combinations of its settings (which
    /// settings it takes at all, the settings table says). Called by
    /// [`crate::limits::validate`] after the checks every test shares.
    fn check(&self, _spec: &TestSpec) -> Result<(), Rejection> {
        Ok(())
    }
    /// Data connections (or flows) the client opens before the start.
    fn data_connections(&self, spec: &TestSpec) -> u32 {
        spec.parallel
    }
    /// The jobs of one side.
    fn jobs(&self, spec: &TestSpec, end: End, data: Data) -> Result<Vec<Job>, Error>;
    /// Both ends' measurements summed up, with the headline set.
    fn summarize(
        &self,
        spec: &TestSpec,
        local: &SideMeasurement,
        remote: Option<&SideMeasurement>,
    ) -> Summary;
    /// The settings a sweep may vary for this type: ids of spec fields in
    /// [`results::setting`] (a combined setting such as `len` is taken when one of its parts
    /// is), as the settings table declares which types take each.
    fn sweep_params(&self) -> Vec<&'static str> {
        results::setting::taken_by(self.kind())
    }
    /// Settings only this type has ([`TestSpec::options`]); any other name is refused.
    fn options(&self) -> &'static [TypeOption] {
        &[]
    }
    /// Whether a completed test's result holds up (e.g. a file arrived intact); an error
    /// fails the test with this message. Most types have nothing to check.
    fn verify(&self, _summary: &Summary) -> Result<(), String> {
        Ok(())
    }
    /// Warnings only this type knows to give (an MPTCP stream that fell back to TCP).
    fn warnings(
        &self,
        _spec: &TestSpec,
        _local: &SideMeasurement,
        _remote: Option<&SideMeasurement>,
    ) -> Vec<results::Warning> {
        Vec::new()
    }
}

/// The test type of `kind`: the registry's one line per type. The match is exhaustive, so a
/// new kind does not build until it has its test type.
pub fn of(kind: TestKind) -> &'static dyn TestType {
    match kind {
        TestKind::TcpStream => &crate::stream::TcpStreamTest,
        TestKind::TcpRr => &crate::rr::TcpRrTest,
        TestKind::TcpCrr => &crate::crr::TcpCrrTest,
        TestKind::UdpStream => &crate::udp::UdpStreamTest,
        TestKind::UdpRr => &crate::udp_rr::UdpRrTest,
        TestKind::File => &file::FileTest,
        TestKind::SegmentCost => &segment_cost::SegmentCostTest,
    }
}

/// Every test type, in [`TestKind::ALL`]'s order.
pub fn all() -> impl Iterator<Item = &'static dyn TestType> {
    TestKind::ALL.into_iter().map(of)
}

/// The test type named `name`: its id (`udp-stream`) or its command (`udp`).
pub fn by_name(name: &str) -> Option<&'static dyn TestType> {
    all().find(|t| t.kind().id() == name || t.command() == name)
}

/// Every name [`by_name`] accepts, commands first.
pub fn names() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = all().map(|t| t.command()).collect();
    out.extend(all().map(|t| t.kind().id()).filter(|id| !out.contains(id)).collect::<Vec<_>>());
    out
}

/// The error for jobs asked of `t` on data its transport does not set up (a mix-up in the
/// client or server, not peer input).
pub(crate) fn unexpected(t: &dyn TestType, data: &Data) -> Error {
    let what = match data {
        Data::Tcp(_) => "TCP connections",
        Data::Udp(_) => "UDP flows",
        Data::Connect { .. } => "a connect address",
        Data::Accept(_) => "accepted connections",
    };
    Error::Protocol { detail: format!("{} test set up with {what}", t.kind().id()) }
}

/// A short label for tables: `stream`, `stream reverse`, `rr 64/64`, `crr 1/1`.
pub fn label(spec: &TestSpec) -> String {
    of(spec.test).label(spec)
}

/// A spec with the defaults of `kind`'s test type.
pub fn defaults(kind: TestKind) -> TestSpec {
    of(kind).defaults()
}

/// Both ends' measurements of `spec` summed up.
pub fn summarize(spec: &TestSpec, local: &SideMeasurement, remote: Option<&SideMeasurement>) -> Summary {
    let t = of(spec.test);
    Summary { shape: Some(t.shape()), produces: t.produces(), ..t.summarize(spec, local, remote) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_registered_with_docs() {
        for kind in TestKind::ALL {
            let t = of(kind);
            assert_eq!(t.kind(), kind);
            assert!(!t.about().is_empty() && !t.netperf_name().is_empty(), "{}", kind.id());
            assert_eq!(t.defaults().test, kind);
            assert!(!t.label(&t.defaults()).is_empty());
        }
    }

    #[test]
    fn every_type_declares_what_it_produces_and_its_summary_carries_it() {
        for t in all() {
            let p = t.produces();
            assert_eq!(p.metrics.first(), Some(&t.headline()), "{}: the headline first", t.kind().id());
            assert!(!p.tables.is_empty() && !p.plots.is_empty(), "{}", t.kind().id());
            let s = summarize(&t.defaults(), &SideMeasurement::default(), None);
            assert_eq!(s.produces, p, "{}: carried with the result", t.kind().id());
        }
    }

    #[test]
    fn names_are_unique_and_resolve() {
        for name in names() {
            let owners = all().filter(|t| t.kind().id() == name || t.command() == name).count();
            assert_eq!(owners, 1, "'{name}' names {owners} test types");
        }
        assert_eq!(by_name("udp").map(|t| t.kind()), Some(TestKind::UdpStream));
        assert_eq!(by_name("udp-stream").map(|t| t.kind()), Some(TestKind::UdpStream));
        assert_eq!(by_name("stream").map(|t| t.kind()), Some(TestKind::TcpStream));
        assert!(by_name("tcp-udp").is_none());
    }

    #[test]
    fn sweep_params_are_spec_field_ids_listed_once() {
        for t in all() {
            let params = t.sweep_params();
            assert!(!params.is_empty(), "{}", t.kind().id());
            for (i, p) in params.iter().enumerate() {
                let s = results::setting::by_id(p);
                assert!(s.is_some_and(|s| !s.is_combined()), "{}: '{p}' is no spec field id", t.kind().id());
                assert!(!params[..i].contains(p), "{}: '{p}' listed twice", t.kind().id());
            }
        }
    }

    #[test]
    fn defaults_pass_their_own_checks() {
        for t in all() {
            let spec = t.defaults();
            crate::limits::validate(&spec, &crate::limits::Limits::default())
                .unwrap_or_else(|e| panic!("{}: {e}", t.kind().id()));
        }
    }

    #[test]
    fn an_empty_measurement_has_an_unknown_headline_of_the_declared_metric() {
        for t in all() {
            let s = t.summarize(&t.defaults(), &SideMeasurement::default(), None);
            let h = s.headline.unwrap_or_else(|| panic!("{} sets no headline", t.kind().id()));
            assert_eq!(h.metric, t.headline());
            assert_eq!(h.value, None, "{}: nothing measured must not read as 0", t.kind().id());
        }
    }
}
