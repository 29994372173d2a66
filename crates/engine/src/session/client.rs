//! The client's end of a control session: the [`Handshake`] (hellos and authentication,
//! shared with the third-party client) and the [`Client`] test session after it (setup,
//! data connections, ready, start, the watch during the test, results). Each state's
//! deadline, each refusal the server sends and each protocol error are decided here; the
//! socket code (`client.rs`) does the waiting, the connecting and the running.
//!
//! ```text
//! Handshake: AwaitHello ─hello─▶ AwaitAuth ─answer─▶ done (session key)
//! Client:    AwaitAccepted ─accepted─▶ OpeningData ─open─▶ AwaitReady ─ready─▶ Starting
//!            ─jobs─▶ Running ─local side done─▶ AwaitResults ─results─▶ Done
//! ```

use std::time::{Duration, Instant};

use results::SideMeasurement;
use wire::auth::{self as wa, ClientOutcome, ClientPending, ServerAuth, SessionKey};
use wire::ctrl::{Accepted, SideReport, TestRequest};
use wire::{Hello, HelloKind, Message, HELLO_LEN, PROTOCOL_VERSION};

use crate::auth::ClientKey;
use crate::{protocol, Error};

/// What the handshake's driver does.
#[derive(Debug, Clone, PartialEq)]
pub enum HandshakeAction {
    /// Send this hello.
    SendHello(Hello),
    /// Send these authentication bytes ([`wire::auth::ClientAuth`]).
    SendAuth(Vec<u8>),
}

/// What happened during the handshake.
#[derive(Debug)]
pub enum HandshakeEvent {
    /// The server's hello bytes arrived.
    Hello([u8; HELLO_LEN]),
    /// The server's answer to the authentication arrived ([`wa::SERVER_AUTH_LEN`] bytes).
    AuthReply(Vec<u8>),
    /// A control message arrived instead of the answer (a refusal: busy).
    Message(Box<Message>),
    /// Reading or writing failed.
    Failed(Error),
    /// Time passed.
    Tick,
}

#[derive(Debug)]
enum Greeting {
    AwaitHello,
    AwaitAuth(ClientPending),
    Done,
}

/// The client's hellos and authentication on a fresh control connection.
#[derive(Debug)]
pub struct Handshake {
    state: Greeting,
    deadline: Instant,
    step: Duration,
    nonce: [u8; 32],
    key: Option<ClientKey>,
    server: String,
    outcome: Option<Result<Option<SessionKey>, Error>>,
}

impl Handshake {
    /// Starts at `now` with this client's nonce; each answer has `step` to come. The first
    /// actions to perform.
    pub fn new(
        now: Instant,
        step: Duration,
        nonce: [u8; 32],
        key: Option<ClientKey>,
        server: String,
    ) -> (Handshake, Vec<HandshakeAction>) {
        let h = Handshake {
            state: Greeting::AwaitHello,
            deadline: now + step,
            step,
            nonce,
            key,
            server,
            outcome: None,
        };
        (h, vec![HandshakeAction::SendHello(Hello::control(nonce))])
    }

    /// Whether the hello is still awaited (else the authentication's answer is).
    pub fn awaits_hello(&self) -> bool {
        matches!(self.state, Greeting::AwaitHello)
    }

    /// When the wait for the next answer ends.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The session key (`None`: anonymous) or why not, once over.
    pub fn outcome(&mut self) -> Option<Result<Option<SessionKey>, Error>> {
        self.outcome.take()
    }

    /// Whether it is over.
    pub fn is_done(&self) -> bool {
        matches!(self.state, Greeting::Done)
    }

    /// Takes in `event`, which happened at `now`.
    pub fn handle(&mut self, now: Instant, event: HandshakeEvent) -> Vec<HandshakeAction> {
        let state = std::mem::replace(&mut self.state, Greeting::Done);
        let result = match (state, event) {
            (Greeting::Done, _) => return Vec::new(),
            (s, HandshakeEvent::Tick) if now < self.deadline => {
                self.state = s;
                return Vec::new();
            }
            (_, HandshakeEvent::Tick) => Err(Error::Timeout { what: "waiting for the peer" }),
            (_, HandshakeEvent::Failed(e)) => Err(e),
            (Greeting::AwaitHello, HandshakeEvent::Hello(bytes)) => match self.on_hello(&bytes) {
                Ok((pending, auth)) => {
                    self.state = Greeting::AwaitAuth(pending);
                    self.deadline = now + self.step;
                    return vec![HandshakeAction::SendAuth(auth)];
                }
                Err(e) => Err(e),
            },
            (Greeting::AwaitAuth(pending), HandshakeEvent::AuthReply(bytes)) => {
                self.on_reply(pending, &bytes)
            }
            (Greeting::AwaitAuth(_), HandshakeEvent::Message(m)) => match *m {
                Message::Error(r) => Err(Error::Rejected(r)),
                other => Err(protocol_error(format!("expected authentication, got {}", other.name()))),
            },
            (_, other) => Err(protocol_error(format!("unexpected {other:?} in the handshake"))),
        };
        self.outcome = Some(result);
        Vec::new()
    }

    /// Checks the server's hello; what to authenticate with.
    fn on_hello(&self, bytes: &[u8; HELLO_LEN]) -> Result<(ClientPending, Vec<u8>), Error> {
        let server = &self.server;
        let hello =
            Hello::decode(bytes).map_err(|_| protocol_error(format!("{server} is not a tcplab server")))?;
        if !matches!(hello.kind, HelloKind::Server { .. }) {
            return Err(protocol_error(format!("{server} did not answer with a server hello")));
        }
        if hello.version != PROTOCOL_VERSION {
            let (theirs, ours) = (hello.version, PROTOCOL_VERSION);
            return Err(Error::ServerVersion { server: server.clone(), theirs, ours });
        }
        let HelloKind::Server { nonce: ns } = hello.kind else {
            return Err(protocol_error(format!("{server} did not answer with a server hello")));
        };
        let key = self.key.as_ref().map(|k| (&k.id, &k.secret));
        let (auth, pending) =
            wa::client_start(key, PROTOCOL_VERSION, &self.nonce, &ns).map_err(|e| self.auth_error(e))?;
        Ok((pending, auth.encode().to_vec()))
    }

    fn on_reply(&self, pending: ClientPending, bytes: &[u8]) -> Result<Option<SessionKey>, Error> {
        let reply = ServerAuth::decode(bytes).map_err(|e| self.auth_error(e))?;
        match pending.finish(&reply).map_err(|e| self.auth_error(e))? {
            ClientOutcome::Keyed(k) => Ok(Some(k)),
            ClientOutcome::Anonymous => Ok(None),
            ClientOutcome::Refused(status) => {
                Err(Error::Auth { detail: crate::auth::refusal(status, &self.server, self.key.as_ref()) })
            }
        }
    }

    fn auth_error(&self, e: wa::AuthError) -> Error {
        Error::Auth { detail: format!("{}: {e}", self.server) }
    }
}

fn protocol_error(detail: String) -> Error {
    Error::Protocol { detail }
}

/// How long the client waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// For each answer of the server before the test (`accepted`, `ready`).
    pub step: Duration,
    /// For the server's results after this end's side is done.
    pub results: Duration,
}

/// What the test's type says about its end.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The request to send.
    pub setup: TestRequest,
    /// The server's results end this end's side (its senders are done: UDP receivers here
    /// drain and finish).
    pub results_end_local: bool,
    /// This end's data connections tell the server that its side ended (their EOF); else a
    /// `stop` says so.
    pub eof_ends: bool,
}

/// Where a client session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// `setup` sent; waiting for `accepted`.
    AwaitAccepted,
    /// The driver opens the data connections.
    OpeningData,
    /// Waiting for `ready`.
    AwaitReady,
    /// The driver prepares the test's jobs.
    Starting,
    /// The test runs; the control connection is watched.
    Running,
    /// This end is done; waiting for the server's results.
    AwaitResults,
    /// Over: [`Client::outcome`].
    Done,
}

/// What happened, passed in by the driver.
#[derive(Debug)]
pub enum Event {
    /// A control message arrived.
    Message(Box<Message>),
    /// The data connections are open (a UDP test's are announced and `ready` came).
    DataOpen,
    /// The jobs are prepared.
    JobsReady,
    /// The user asked to stop.
    Interrupt,
    /// This end's side ended; its first error, if any.
    LocalDone(Option<String>),
    /// Something the driver did failed, or the connection broke.
    Failed(Error),
    /// Time passed.
    Tick,
}

/// What the driver does, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send this message.
    Send(Box<Message>),
    /// Open the data connections this acceptance asks for; answer [`Event::DataOpen`].
    OpenData(Box<Accepted>),
    /// Prepare the test's jobs; answer [`Event::JobsReady`].
    PrepareJobs,
    /// Run the jobs (and report the start); answer [`Event::LocalDone`] when they end.
    StartTest,
    /// Ask this end's jobs to finish.
    StopLocal,
    /// Stop this end's jobs at once.
    AbortLocal,
}

/// The client's end of one test's control session, after the handshake.
#[derive(Debug)]
pub struct Client {
    state: State,
    deadline: Option<Instant>,
    timeouts: Timeouts,
    plan: Plan,
    interrupted: bool,
    stop_sent: bool,
    remote: Option<SideReport>,
    failure: Option<Error>,
    outcome: Option<(Result<(), Error>, Option<SideMeasurement>)>,
}

impl Client {
    /// Starts at `now`; the first actions (the `setup`).
    pub fn new(now: Instant, timeouts: Timeouts, plan: Plan) -> (Client, Vec<Action>) {
        let setup = Message::Setup { spec: plan.setup.clone() };
        let c = Client {
            state: State::AwaitAccepted,
            deadline: Some(now + timeouts.step),
            timeouts,
            plan,
            interrupted: false,
            stop_sent: false,
            remote: None,
            failure: None,
            outcome: None,
        };
        (c, vec![Action::Send(Box::new(setup))])
    }

    /// Where it stands.
    pub fn state(&self) -> State {
        self.state
    }

    /// When the wait of this state ends (`None`: the test's timeline bounds it).
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Whether the control connection is still worth reading during the test (nothing
    /// ended it yet: no results, no failure).
    pub fn watching(&self) -> bool {
        self.state == State::Running && self.remote.is_none() && self.failure.is_none()
    }

    /// Whether an interrupt was taken in.
    pub fn interrupted(&self) -> bool {
        self.interrupted
    }

    /// How the session ended, and the server's measurement when it came; once, when over.
    pub fn outcome(&mut self) -> Option<(Result<(), Error>, Option<SideMeasurement>)> {
        self.outcome.take()
    }

    /// Takes in `event`, which happened at `now`; what the driver does next.
    pub fn handle(&mut self, now: Instant, event: Event) -> Vec<Action> {
        match (self.state, event) {
            (State::Done, _) => Vec::new(),
            (_, Event::Interrupt) => self.on_interrupt(),
            (_, Event::Tick) => self.tick(now),
            (State::Running, e) => self.on_running(now, e),
            (State::AwaitResults, e) => self.on_results(e),
            (_, Event::Failed(e)) => self.end(Err(e), None),
            (State::AwaitAccepted, Event::Message(m)) => match *m {
                Message::Accepted(a) => {
                    self.enter(State::OpeningData, None, vec![Action::OpenData(Box::new(a))])
                }
                other => self.refused_or(other, "accepted"),
            },
            (State::OpeningData, Event::DataOpen) => {
                self.enter(State::AwaitReady, Some(now + self.timeouts.step), Vec::new())
            }
            (State::AwaitReady, Event::Message(m)) => match *m {
                Message::Ready {} if self.interrupted => self.end(Err(Error::Interrupted), None),
                Message::Ready {} => self.enter(State::Starting, None, vec![Action::PrepareJobs]),
                other => self.refused_or(other, "ready"),
            },
            (State::Starting, Event::JobsReady) => {
                let start = Action::Send(Box::new(Message::Start {}));
                self.enter(State::Running, None, vec![start, Action::StartTest])
            }
            (state, e) => {
                tracing::debug!("client session: ignoring {e:?} in {state:?}");
                Vec::new()
            }
        }
    }

    fn tick(&mut self, now: Instant) -> Vec<Action> {
        match self.deadline {
            Some(d) if now >= d => self.end(Err(Error::Timeout { what: "waiting for the peer" }), None),
            _ => Vec::new(),
        }
    }

    /// The user's stop: told to the server once the test runs (before, the session goes
    /// on to `ready` and ends there, as its connections are in place to close cleanly).
    fn on_interrupt(&mut self) -> Vec<Action> {
        self.interrupted = true;
        if self.state != State::Running || self.stop_sent {
            return Vec::new();
        }
        self.stop_sent = true;
        vec![Action::StopLocal, Action::Send(Box::new(Message::Stop { reason: "interrupted".into() }))]
    }

    fn on_running(&mut self, now: Instant, event: Event) -> Vec<Action> {
        match event {
            Event::Message(m) => match *m {
                Message::Results { side } => {
                    self.remote = Some(*side);
                    // The server's senders are done: receivers here drain and finish.
                    if self.plan.results_end_local {
                        return vec![Action::StopLocal];
                    }
                    Vec::new()
                }
                Message::Error(r) => {
                    self.failure = Some(Error::Rejected(r));
                    vec![Action::AbortLocal]
                }
                other => {
                    tracing::debug!("ignoring {} during the test", other.name());
                    Vec::new()
                }
            },
            Event::Failed(e) => {
                self.failure = Some(match e {
                    Error::PeerClosed => protocol_error("the server vanished during the test".into()),
                    other => other,
                });
                vec![Action::StopLocal, Action::AbortLocal]
            }
            Event::LocalDone(error) => self.local_done(now, error),
            other => {
                tracing::debug!("client session: ignoring {other:?} while running");
                Vec::new()
            }
        }
    }

    /// This end's side ended: tell the server unless its data connections did, then the
    /// results.
    fn local_done(&mut self, now: Instant, error: Option<String>) -> Vec<Action> {
        if let Some(e) = self.failure.take() {
            return self.end(Err(e), None);
        }
        let mut out = Vec::new();
        if !self.plan.eof_ends || self.interrupted {
            out.push(Action::Send(Box::new(Message::Stop { reason: "client done".into() })));
        }
        let local_error = error.map(|detail| Error::Protocol { detail });
        self.failure = local_error;
        match self.remote.take() {
            Some(side) => out.extend(self.results(side)),
            None => {
                self.state = State::AwaitResults;
                self.deadline = Some(now + self.timeouts.results);
            }
        }
        out
    }

    fn on_results(&mut self, event: Event) -> Vec<Action> {
        match event {
            Event::Message(m) => match *m {
                Message::Results { side } => self.results(*side),
                Message::Error(r) => self.end(Err(Error::Rejected(r)), None),
                other => {
                    tracing::debug!("ignoring {} while waiting for results", other.name());
                    Vec::new()
                }
            },
            Event::Failed(e) => self.end(Err(e), None),
            _ => Vec::new(),
        }
    }

    /// The server's results arrived and this end is done: the session's end.
    fn results(&mut self, side: SideReport) -> Vec<Action> {
        match protocol::measurement(side) {
            Ok(remote) => {
                let result = self.failure.take().map_or(Ok(()), Err);
                self.end(result, Some(remote))
            }
            Err(e) => self.end(Err(e), None),
        }
    }

    fn refused_or(&mut self, got: Message, wanted: &str) -> Vec<Action> {
        let e = match got {
            Message::Error(r) => Error::Rejected(r),
            other => protocol_error(format!("expected {wanted}, got {}", other.name())),
        };
        self.end(Err(e), None)
    }

    fn enter(&mut self, state: State, deadline: Option<Instant>, out: Vec<Action>) -> Vec<Action> {
        self.state = state;
        self.deadline = deadline;
        out
    }

    fn end(&mut self, result: Result<(), Error>, remote: Option<SideMeasurement>) -> Vec<Action> {
        self.outcome = Some((result, remote));
        self.enter(State::Done, None, Vec::new())
    }
}

/// Whether to try a session again after `outcome`: the server said `busy`, `give_up` has not
/// passed at `now`, and the user did not stop.
pub fn retry_busy(outcome: &Result<(), Error>, now: Instant, give_up: Instant, stopped: bool) -> bool {
    matches!(outcome, Err(Error::Rejected(r)) if r.code == wire::ErrorCode::Busy) && now < give_up && !stopped
}
