//! Where a run's tests go, started: a remote server, an embedded loopback server, or an
//! emulated path with a server of its own. Every test is measured through [`Place::measure`],
//! which runs it on the client side of the path and charges it its share of the emulator's
//! counters.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use engine::client::ClientOptions;
use engine::server::ServerHandle;
use engine::{Observer, Server, ServerConfig, StopFlag};
use results::{ConfidenceTarget, Direction, EmuReport, HostInfo, Reference, TestResult, TestSpec};

use crate::config::Target;
use crate::emulated::{self, Session};
use crate::segment_capture::Where;
use crate::segment_trace::Tracing;
use crate::HANDSHAKE_TIMEOUT;

/// The server label an embedded loopback server is stored under.
pub const EMBEDDED: &str = "embedded";
/// What an emulated path's server label starts with, before the path spec.
const PATH_LABEL: &str = "path ";
/// Between a third-party test's server end and its client end in its server label.
const FROM_LABEL: &str = " from ";
/// What a mesh's server label starts with, before the inventory.
pub const MESH_LABEL: &str = "mesh ";
/// What an iperf3 server's label starts with, before `host:port`.
const IPERF3_LABEL: &str = "iperf3 ";

/// Where a run's tests went, as its archive row names it: `host:port`, `embedded` or
/// `path SPEC`, and read back so that a resumed sweep goes to the same place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    /// A server at `host`, on `port` when the label has one.
    Remote {
        /// Host name or address.
        host: String,
        /// Control port.
        port: Option<u16>,
    },
    /// The embedded loopback server.
    Loopback,
    /// An emulated path with this spec.
    Path(String),
}

impl Stored {
    /// The label stored for `target`.
    pub fn label(target: &Target) -> String {
        match target {
            Target::Remote(o) => format!("{}:{}", o.host, o.port),
            Target::Loopback => EMBEDDED.into(),
            Target::Path(p) => format!("{PATH_LABEL}{}", p.spec),
            Target::ThirdParty(ends) => {
                let (from, to) = ends.labels();
                format!("{to}{FROM_LABEL}{from}")
            }
            Target::Mesh { inventory, .. } => format!("{MESH_LABEL}{inventory}"),
            Target::Iperf3(o) => format!("{IPERF3_LABEL}{}:{}", o.host, o.port),
        }
    }

    /// A stored label read back.
    pub fn parse(label: &str) -> Stored {
        if label == EMBEDDED {
            return Stored::Loopback;
        }
        if let Some(spec) = label.strip_prefix(PATH_LABEL) {
            return Stored::Path(spec.to_string());
        }
        let label = label.split_once(FROM_LABEL).map_or(label, |(to, _)| to);
        match label.rsplit_once(':') {
            Some((host, port)) if port.parse::<u16>().is_ok() => {
                Stored::Remote { host: host.trim_matches(['[', ']']).to_string(), port: port.parse().ok() }
            }
            _ => Stored::Remote { host: label.to_string(), port: None },
        }
    }
}

/// A started place.
#[derive(Debug)]
pub struct Place {
    kind: Kind,
    opts: ClientOptions,
    trace: Option<Tracing>,
}

#[derive(Debug)]
enum Kind {
    Remote,
    Iperf3,
    Embedded(ServerHandle),
    Emulated(Box<Session>),
    ThirdParty(engine::third_party::Ends),
    Mesh,
}

impl Place {
    /// Starts what `target` needs. `busy_wait` is how long a test retries a busy server
    /// (runs of several tests need a moment: the server frees its slot as it sends results).
    pub fn start(target: &Target, busy_wait: Duration) -> Result<Place> {
        let (kind, opts) = match target {
            Target::Remote(opts) => (Kind::Remote, opts.clone()),
            Target::Iperf3(opts) => (Kind::Iperf3, opts.clone()),
            Target::Loopback => {
                // Four at once, as on an emulated path: `compare-cc --concurrent` runs its
                // controls side by side.
                let bind = SocketAddr::from(([127, 0, 0, 1], 0));
                let cfg = ServerConfig { bind, max_concurrent: 4, ..ServerConfig::default() };
                let server = Server::bind(cfg)
                    .and_then(Server::spawn)
                    .context("starting the embedded server on 127.0.0.1")?;
                let opts = loopback_options(server.addr.port());
                (Kind::Embedded(server), opts)
            }
            Target::Path(p) => {
                let session = Session::start(p)?;
                let opts = session.client_options(loopback_options(0));
                (Kind::Emulated(Box::new(session)), opts)
            }
            Target::ThirdParty(ends) => (Kind::ThirdParty(ends.clone()), ends.from.clone()),
            Target::Mesh { .. } => (Kind::Mesh, loopback_options(0)),
        };
        let opts = ClientOptions { busy_wait: opts.busy_wait.max(busy_wait), ..opts };
        Ok(Place { kind, opts, trace: None })
    }

    /// Records the segment flow of each TCP test into `dir` (`--trace`).
    /// Per-interval summaries show live through `printer`.
    pub fn traced(self, dir: Option<std::path::PathBuf>, printer: &Arc<dyn report::live::Printer>) -> Place {
        self.traced_at(dir, printer, crate::segment_trace::TraceLevel::Both)
    }

    /// As [`Place::traced`], running only the sources of `level` (`--trace-level`).
    pub fn traced_at(
        self,
        dir: Option<std::path::PathBuf>,
        printer: &Arc<dyn report::live::Printer>,
        level: crate::segment_trace::TraceLevel,
    ) -> Place {
        Place { trace: dir.map(|d| Tracing::new(d, Some(printer.clone())).at(level)), ..self }
    }

    /// Whether client and server are this process on loopback (the loopback baseline's case).
    pub fn is_embedded(&self) -> bool {
        matches!(self.kind, Kind::Embedded(_))
    }

    /// What the emulated path (if the tests cross one) tells the diagnosis: its configured
    /// round trip, and that both ends and the emulator share this host's CPUs.
    pub fn path(&self) -> Option<diagnose::Path> {
        let Kind::Emulated(s) = &self.kind else { return None };
        let (spec, path) = s.path();
        Some(diagnosis_path(spec, path))
    }

    /// The reference of `spec`'s result over the emulated path: the link it emulates in the
    /// direction the data flows (the slower one for both), for the test's stack; an MPTCP test
    /// over two paths (`--path2`) may use both, so its reference is their sum. `None` off a
    /// path, or on a path without a rate.
    pub fn path_reference(&self, spec: &TestSpec) -> Option<Reference> {
        let Kind::Emulated(s) = &self.kind else { return None };
        let first = Self::reference_over(s.path(), spec)?;
        let second = s.second_path().filter(|_| engine::registry::mptcp::asks(spec));
        match second.map(|p| Self::reference_over(p, spec)) {
            None => Some(first),
            Some(None) => None,
            Some(Some(r)) => Some(Reference {
                description: format!("{} + {}", first.description, r.description),
                limit_bps: first.limit_bps + r.limit_bps,
                ..first
            }),
        }
    }

    /// The reference of `spec`'s result over one emulated path `(text, path)`.
    fn reference_over((text, path): (&str, &emu::PathConfig), spec: &TestSpec) -> Option<Reference> {
        let udp = engine::registry::of(spec.test).over_udp();
        let of = |d: emu::Direction| {
            let link = path.model_link(d)?;
            diagnose::reference::path_reference(text, &link, udp).ok()
        };
        match spec.direction {
            Direction::Forward => of(emu::Direction::Up),
            Direction::Reverse => of(emu::Direction::Down),
            Direction::Bidir => [of(emu::Direction::Up), of(emu::Direction::Down)]
                .into_iter()
                .flatten()
                .min_by(|a, b| a.limit_bps.total_cmp(&b.limit_bps)),
        }
    }

    /// Where the tests' clients connect to.
    pub fn client_options(&self) -> &ClientOptions {
        &self.opts
    }

    /// Runs `f` on this thread where the tests' clients run (the client side of an emulated
    /// path, or anywhere), e.g. a probe beside a test.
    pub fn in_client<T>(&self, f: impl FnOnce() -> T) -> Result<T> {
        match &self.kind {
            Kind::Emulated(s) => s.in_client(f),
            Kind::Remote | Kind::Iperf3 | Kind::Embedded(_) | Kind::ThirdParty(_) | Kind::Mesh => Ok(f()),
        }
    }

    /// Runs `spec` (repeated until `confidence` is met, if given) and returns its result with
    /// the emulated path's counters over it, and the server's description.
    pub fn measure(
        &self,
        spec: &TestSpec,
        confidence: Option<&ConfidenceTarget>,
        observer: &mut dyn Observer,
        stop: &StopFlag,
    ) -> Result<(TestResult, Option<HostInfo>)> {
        let session = match &self.kind {
            Kind::Emulated(s) => Some(s.as_ref()),
            Kind::ThirdParty(ends) => return Ok(crate::repeat::third_party(ends, spec, confidence, stop)),
            Kind::Mesh => anyhow::bail!("a mesh measures each of its cells as a third-party test"),
            Kind::Remote | Kind::Iperf3 | Kind::Embedded(_) => None,
        };
        let runner = match self.kind {
            Kind::Iperf3 => engine::iperf3::run_test,
            _ => engine::run_test,
        };
        let traceable = engine::registry::of(spec.test).data().traits().traceable;
        let recording = match &self.trace {
            Some(t) if traceable => Some(t.start(spec, self.opts.port, self.capture_place())?),
            _ => None,
        };
        // Against a tcplab server on another host, ask it for its end too (on this host's
        // loopback this end's sources see both).
        let traced_spec;
        let remote = recording.is_some() && matches!(self.kind, Kind::Remote);
        let spec = if remote && !self.server_is_local() {
            traced_spec = TestSpec { trace_server: true, ..spec.clone() };
            &traced_spec
        } else {
            if remote {
                say_once_why_the_local_server_is_not_asked();
            }
            spec
        };
        let before = session.map(Session::report);
        let (mut r, host) = emulated::in_client(session, || {
            crate::repeat::run_with(runner, &self.opts, spec, confidence, observer, stop)
        })?;
        if let (Some(s), Some(before)) = (session, &before) {
            r.emu = Some(emulated::delta(&s.report(), before));
        }
        if let Some(rec) = recording {
            let server = r.remote.as_ref().and_then(|m| m.sections.get(engine::server::end_trace::SECTION));
            r.segment_flow = Some(rec.finish(session, server)?);
        }
        Ok((r, host))
    }

    /// Whether the server is this host's loopback (an address or `localhost`).
    fn server_is_local(&self) -> bool {
        let host = self.opts.host.trim_start_matches('[').trim_end_matches(']');
        host.eq_ignore_ascii_case("localhost")
            || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }

    /// Where `--trace` takes its packets from.
    fn capture_place(&self) -> Where<'_> {
        match &self.kind {
            // A third-party test or a mesh returns before tracing starts.
            Kind::Remote | Kind::Iperf3 | Kind::ThirdParty(_) | Kind::Mesh => Where::Remote,
            Kind::Embedded(_) => Where::Loopback,
            Kind::Emulated(s) => Where::Path(s),
        }
    }

    /// Stops the embedded server or the emulator and its server; an emulator that failed
    /// during the run is an error here (the results measured are kept by the caller).
    pub fn finish(self) -> Result<Option<EmuReport>> {
        match self.kind {
            Kind::Remote | Kind::Iperf3 | Kind::ThirdParty(_) | Kind::Mesh => Ok(None),
            Kind::Embedded(server) => {
                server.shutdown();
                Ok(None)
            }
            Kind::Emulated(session) => (*session).finish().map(Some),
        }
    }
}

fn loopback_options(port: u16) -> ClientOptions {
    ClientOptions {
        host: "127.0.0.1".into(),
        port,
        bind: None,
        family: None,
        timeout: HANDSHAKE_TIMEOUT,
        busy_wait: Duration::ZERO,
        key: None,
    }
}

/// One line, once per run: a traced test against this host's own server gets no server table,
/// and why (a server started with --allow-trace would otherwise seem to have been ignored).
fn say_once_why_the_local_server_is_not_asked() {
    use std::sync::atomic::{AtomicBool, Ordering};
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!(
            "--trace: the server is on this host's loopback, where this end's capture and probes already \
             record both ends: the server is not asked for a table of its own"
        );
    }
}

/// What the emulated path `spec` (configured as `path`) tells the diagnosis.
fn diagnosis_path(spec: &str, path: &emu::PathConfig) -> diagnose::Path {
    let rtt = path.up.delay.saturating_add(path.down.delay);
    diagnose::Path { spec: spec.to_string(), rtt_us: rtt.as_secs_f64() * 1e6, mtu: Some(path.mtu_bytes) }
}

/// Diagnoses a stored `result` again by this tcplab's rules, against the reference it was
/// measured against, over the emulated path `path_spec` when it crossed one (its shared-host
/// warnings are made again too). An archive keeps the diagnosis of the tcplab that measured;
/// a report made again from it (a resumed study) says what this one finds. A spec that no
/// longer parses diagnoses as off any path.
pub fn diagnose_again(result: &mut TestResult, path_spec: Option<&str>) {
    let path = path_spec.and_then(|spec| Some(diagnosis_path(spec, &spec.parse().ok()?)));
    let reference = result.reference.take();
    diagnose::annotate(result, reference, path.as_ref());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PathOptions;

    #[test]
    fn stored_labels_read_back_to_the_same_place() {
        let path =
            Target::Path(PathOptions { spec: "up:rate=10mbit,delay=5ms".into(), ..PathOptions::default() });
        assert_eq!(Stored::parse(&Stored::label(&path)), Stored::Path("up:rate=10mbit,delay=5ms".into()));
        assert_eq!(Stored::parse(&Stored::label(&Target::Loopback)), Stored::Loopback);
        let remote = Target::Remote(loopback_options(9180));
        assert_eq!(
            Stored::parse(&Stored::label(&remote)),
            Stored::Remote { host: "127.0.0.1".into(), port: Some(9180) }
        );
        assert_eq!(Stored::parse("[::1]:9181"), Stored::Remote { host: "::1".into(), port: Some(9181) });
    }
}
