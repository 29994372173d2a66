//! The asking side of a third-party test: ask server A to run a test against server B, wait
//! for both ends' measurements, and sum them up here as [`crate::run_test`] does its own.
//! A runs the test's client end with [`crate::run_test`]; B sees an ordinary client.

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use results::{HostInfo, Status, TestError, TestResult, TestSpec, ThirdParty};
use wire::ctrl::{ThirdPartyReport, ThirdPartyRequest, ThirdPartyStatus};
use wire::Message;

use crate::client::{resolve, ClientOptions};
use crate::control::Control;
use crate::stop::StopFlag;
use crate::{protocol, registry, Error};

/// Beyond the test's length: A's handshake with B, B's results, A's summary.
const SLACK: Duration = Duration::from_secs(30);
/// How often the wait looks at the stop flag.
const POLL: Duration = Duration::from_millis(200);

/// Where a third-party test runs: `from` runs its client end against `to`.
#[derive(Debug, Clone)]
pub struct Ends {
    /// Server A, asked to run the test (its client end).
    pub from: ClientOptions,
    /// Server B's host, as A resolves it.
    pub to_host: String,
    /// Server B's control port.
    pub to_port: u16,
}

impl Ends {
    /// `host:port` of A, and of B as asked.
    pub fn labels(&self) -> (String, String) {
        (format!("{}:{}", self.from.host, self.from.port), format!("{}:{}", self.to_host, self.to_port))
    }
}

/// Runs `spec` from `ends.from` against `ends.to_*`. Never panics on peer input; failures are
/// inside the result, which records both ends in `third_party`. The host returned is B's.
pub fn run(ends: &Ends, spec: &TestSpec, stop: &StopFlag) -> (TestResult, Option<HostInfo>) {
    let started = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
    let (from, to) = ends.labels();
    let mut out = TestResult::new(registry::label(spec), spec.clone(), to.clone(), started);
    out.third_party = Some(ThirdParty { from, to, from_name: None, to_name: None });
    let give_up = Instant::now() + ends.from.busy_wait;
    let mut outcome = ask(ends, spec, stop);
    while matches!(&outcome, Err(e) if e.code() == "busy") && Instant::now() < give_up && !stop.is_set() {
        std::thread::sleep(Duration::from_millis(100));
        outcome = ask(ends, spec, stop);
    }
    match outcome.and_then(|report| settle(&mut out, *report)) {
        Ok(host) => (out, host),
        Err(e) => {
            out.status = if matches!(e, Error::Interrupted) { Status::Interrupted } else { Status::Failed };
            let message = format!("client end {}:{}: {e}", ends.from.host, ends.from.port);
            out.error = Some(TestError { code: e.code().into(), message });
            crate::client::finish(&mut out, false, &netio::host::host_info());
            (out, None)
        }
    }
}

/// One request to A: its report, or why there is none. A report of a failed test whose code
/// is `busy` (B was busy) comes back as that error, so that the caller retries it.
fn ask(ends: &Ends, spec: &TestSpec, stop: &StopFlag) -> Result<Box<ThirdPartyReport>, Error> {
    crate::limits::validate(spec, &crate::limits::Limits::default()).map_err(Error::Rejected)?;
    let addr = resolve(&ends.from)?;
    let mut ctrl = connect(addr, &ends.from)?;
    let req = ThirdPartyRequest {
        spec: protocol::request(spec),
        to_host: ends.to_host.clone(),
        to_port: ends.to_port,
    };
    ctrl.send(&Message::ThirdParty(req))?;
    let report = wait(&mut ctrl, spec, stop)?;
    match &report.error {
        Some((code, message)) if code == "busy" && report.status == ThirdPartyStatus::Failed => {
            Err(Error::Rejected(wire::Rejection::new(wire::ErrorCode::Busy, message.clone())))
        }
        _ => Ok(report),
    }
}

fn connect(addr: SocketAddr, from: &ClientOptions) -> Result<Control, Error> {
    let stream = TcpStream::connect_timeout(&addr, from.timeout)
        .map_err(|source| Error::Connect { addr: addr.to_string(), source })?;
    let mut ctrl = Control::client(stream);
    crate::client::handshake(&mut ctrl, addr, from.key.as_ref(), from.timeout)?;
    Ok(ctrl)
}

/// Waits for A's report, passing a stop on to A.
fn wait(ctrl: &mut Control, spec: &TestSpec, stop: &StopFlag) -> Result<Box<ThirdPartyReport>, Error> {
    let length = match spec.duration_ms {
        0 => crate::limits::Limits::default().max_duration_ms,
        ms => ms,
    };
    let deadline = Instant::now() + Duration::from_millis(length) + SLACK;
    let mut stop_sent = false;
    while Instant::now() < deadline {
        if stop.is_set() && !stop_sent {
            stop_sent = true;
            ctrl.send(&Message::Stop { reason: "interrupted".into() })?;
        }
        match ctrl.poll_by(Instant::now() + POLL)? {
            None => {}
            Some(Message::ThirdPartyResults(report)) => return Ok(report),
            Some(Message::Error(r)) => return Err(Error::Rejected(r)),
            Some(other) => tracing::debug!("ignoring {} while waiting for a third-party test", other.name()),
        }
    }
    Err(Error::Timeout { what: "waiting for the third-party test's results" })
}

/// Fills `out` from A's report and sums it up; returns B's host description.
fn settle(out: &mut TestResult, report: ThirdPartyReport) -> Result<Option<HostInfo>, Error> {
    out.server = report.server;
    out.started_unix_ms = report.started_unix_ms;
    out.local = protocol::measurement(report.client)?;
    out.remote = report.server_side.map(protocol::measurement).transpose()?;
    out.status = match report.status {
        ThirdPartyStatus::Completed => Status::Completed,
        ThirdPartyStatus::Failed => Status::Failed,
        ThirdPartyStatus::Interrupted => Status::Interrupted,
    };
    let from = out.third_party.as_ref().map(|t| t.from.clone()).unwrap_or_default();
    out.error =
        report.error.map(|(code, message)| TestError { code, message: format!("from {from}: {message}") });
    let client_host = protocol::host_info(report.client_host);
    crate::client::finish(out, report.same_host, &client_host);
    Ok(report.server_host.map(protocol::host_info))
}

/// A's report of a test it ran as the client end (`result`) against B (`host`).
pub(crate) fn report(result: TestResult, host: Option<&HostInfo>, same_host: bool) -> ThirdPartyReport {
    let status = match result.status {
        Status::Completed => ThirdPartyStatus::Completed,
        Status::Failed => ThirdPartyStatus::Failed,
        Status::Interrupted => ThirdPartyStatus::Interrupted,
    };
    ThirdPartyReport {
        status,
        error: result.error.map(|e| (e.code, e.message)),
        server: result.server,
        started_unix_ms: result.started_unix_ms,
        client_host: protocol::host(&netio::host::host_info()),
        server_host: host.map(protocol::host),
        client: protocol::report(result.local),
        server_side: result.remote.map(protocol::report),
        same_host,
    }
}
