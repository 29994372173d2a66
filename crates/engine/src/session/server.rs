//! The server's end of a control session, from an authenticated client's first message to
//! the close: which message is due in each state, its deadline, each refusal, and when the
//! handshake budget and the test slot are given back.
//!
//! ```text
//! AwaitRequest ─message─▶ AwaitSlot ─slot─▶ Preparing ─prepared─▶ AwaitData ─data─▶ AwaitStart
//!      │                     │ └─third-party─▶ ThirdParty ─measured─┐                  │ start
//!      ▼ (deadline)          ▼ busy                                 ▼                  ▼
//!    Done ◀──────────────── Done ◀──── any refusal or loss ──── Linger ◀─measured── Running
//! ```

use std::time::{Duration, Instant};

use results::TestSpec;
use wire::ctrl::{Accepted, ThirdPartyRequest};
use wire::{ErrorCode, Message, Rejection};

use crate::limits::{Limits, Policy};
use crate::{protocol, Error};

/// How long each wait may last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// For the request, and for the data connections after `accepted`.
    pub handshake: Duration,
    /// For `start` after `ready` (at least `handshake`): a file test's client reads and
    /// hashes its source then.
    pub prepare: Duration,
    /// For the client to close after the results, so its last reads are not cut by a reset.
    pub linger: Duration,
}

/// What the server allows this client: its class's policy and the server's hard limits.
#[derive(Debug, Clone)]
pub struct Rules {
    /// The client's class.
    pub policy: Policy,
    /// The server's caps.
    pub limits: Limits,
}

/// Where a session stands.
#[derive(Debug, Clone, PartialEq)]
pub enum State {
    /// Authenticated (holding a handshake budget); waiting for `setup` or `third-party`.
    AwaitRequest,
    /// A request arrived; waiting for the driver to take a test slot.
    AwaitSlot(Box<Message>),
    /// The request passed the checks here; the driver checks what needs the host
    /// (congestion controls, CPUs, quotas) and binds the data sockets.
    Preparing,
    /// `accepted` sent; waiting for the data connections (or UDP hellos).
    AwaitData,
    /// `ready` sent; waiting for `start`.
    AwaitStart,
    /// The test runs.
    Running,
    /// A third-party test runs for the client (the slot already released).
    ThirdParty,
    /// The results are sent; waiting briefly for the client to close.
    Linger,
    /// Over.
    Done(Outcome),
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The test ran and its results were sent.
    Finished,
    /// Refused, and the client told why.
    Refused(Rejection),
    /// The client went away or said it failed; nothing more to tell it.
    Lost(String),
}

/// Something that happened, passed in by the driver.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A control message arrived.
    Message(Box<Message>),
    /// The driver tried to take a test slot ([`Action::TakeSlot`]): whether it got one.
    Slot(bool),
    /// The driver's preparation ([`Action::Prepare`]): the acceptance to send, or a refusal.
    Prepared(Result<Box<Accepted>, Rejection>),
    /// Every data connection (or UDP hello) of the test arrived.
    DataReady,
    /// Data connection `index` closed before the test started.
    DataClosed(u32),
    /// The test (or the third-party test) ended; its results are ready to send.
    Measured,
    /// The client closed the control connection (or it broke): while lingering, the end it
    /// was waited for; before, a loss.
    Closed,
    /// Something the driver did failed (sending the results too), or the connection broke.
    Failed(Failure),
    /// Time passed (the driver's wait reached [`Server::deadline`]).
    Tick,
}

/// Why the driver could not go on.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// Tell the client why.
    Refused(Rejection),
    /// The client is gone or broke the protocol; nothing more to say.
    Lost(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        match e {
            Error::Protocol { detail } => Failure::Refused(Rejection::new(ErrorCode::BadMessage, detail)),
            Error::Timeout { what } => {
                Failure::Refused(Rejection::new(ErrorCode::Timeout, format!("timed out {what}")))
            }
            Error::Rejected(r) => Failure::Refused(r),
            other => Failure::Lost(other.to_string()),
        }
    }
}

/// What the driver does, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send this message on the control connection.
    Send(Box<Message>),
    /// Give back the handshake budget (the client has asked for its test, or is gone).
    ReleaseHandshake,
    /// The client asked for this test type (for the log line).
    Named(&'static str),
    /// Take a test slot, and answer [`Event::Slot`].
    TakeSlot,
    /// Give back the test slot.
    ReleaseSlot,
    /// Check `spec` against the host and prepare the data sockets; answer [`Event::Prepared`].
    Prepare(Box<TestSpec>),
    /// Wait for the data connections until this deadline; answer [`Event::DataReady`].
    CollectData(Instant),
    /// Start the test's jobs.
    StartTest,
    /// The client asked to stop: stop the jobs (they finish and report).
    StopTest,
    /// The client is gone: stop the jobs at once and keep what they measured.
    AbortTest,
    /// Run this third-party test and send its results; answer [`Event::Measured`].
    RunThirdParty(Box<ThirdPartyRequest>),
    /// Send the test's results.
    SendResults,
    /// Close the control connection.
    Close,
}

/// The server's end of one control session.
#[derive(Debug)]
pub struct Server {
    state: State,
    deadline: Option<Instant>,
    timeouts: Timeouts,
    rules: Rules,
    handshake_held: bool,
    slot_held: bool,
}

impl Server {
    /// A session whose client authenticated at `now`, holding a handshake budget.
    pub fn new(now: Instant, timeouts: Timeouts, rules: Rules) -> Server {
        Server {
            state: State::AwaitRequest,
            deadline: Some(now + timeouts.handshake),
            timeouts,
            rules,
            handshake_held: true,
            slot_held: false,
        }
    }

    /// Where the session stands.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// When the wait of this state ends (`None`: the test's own timeline bounds it).
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Whether the session is over.
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done(_))
    }

    /// Whether it holds a test slot now.
    pub fn holds_slot(&self) -> bool {
        self.slot_held
    }

    /// Takes in `event`, which happened at `now`; what the driver does next.
    pub fn handle(&mut self, now: Instant, event: Event) -> Vec<Action> {
        if let Event::Tick = event {
            return self.tick(now);
        }
        if let Event::Failed(f) = event {
            return self.failed(f);
        }
        if let Event::Closed = event {
            return match self.state {
                State::Linger => self.end(Outcome::Finished),
                _ => self.failed(Failure::Lost(Error::PeerClosed.to_string())),
            };
        }
        match std::mem::replace(&mut self.state, State::Preparing) {
            State::AwaitRequest => self.on_request(event),
            State::AwaitSlot(msg) => self.on_slot(event, *msg),
            State::Preparing => self.on_prepared(now, event),
            State::AwaitData => self.on_data(now, event),
            State::AwaitStart => self.on_start(event),
            State::Running => self.on_running(now, event),
            State::ThirdParty => self.on_third_party(now, event),
            State::Linger => self.end(Outcome::Finished),
            done @ State::Done(_) => {
                self.state = done;
                Vec::new()
            }
        }
    }

    /// A deadline check: past it, the wait of this state ends.
    fn tick(&mut self, now: Instant) -> Vec<Action> {
        if self.deadline.is_none_or(|d| now < d) {
            return Vec::new();
        }
        let what = match &self.state {
            State::AwaitRequest => "waiting for the peer",
            State::AwaitData => "waiting for the data connections",
            State::AwaitStart => "waiting for start",
            State::Linger => return self.end(Outcome::Finished),
            _ => return Vec::new(),
        };
        self.refuse(Rejection::new(ErrorCode::Timeout, format!("timed out {what}")))
    }

    fn failed(&mut self, f: Failure) -> Vec<Action> {
        match (&self.state, f) {
            (State::Done(_), _) => Vec::new(),
            (State::Running, Failure::Lost(why)) => {
                let mut out = vec![Action::AbortTest];
                out.extend(self.end(Outcome::Lost(why)));
                out
            }
            (_, Failure::Refused(r)) => self.refuse(r),
            (_, Failure::Lost(why)) => self.end(Outcome::Lost(why)),
        }
    }

    fn on_request(&mut self, event: Event) -> Vec<Action> {
        match event {
            Event::Message(msg) => {
                self.state = State::AwaitSlot(msg);
                self.handshake_held = false;
                vec![Action::ReleaseHandshake, Action::TakeSlot]
            }
            other => self.unexpected(&other, State::AwaitRequest),
        }
    }

    fn on_slot(&mut self, event: Event, msg: Message) -> Vec<Action> {
        let Event::Slot(taken) = event else {
            return self.unexpected(&event, State::AwaitSlot(Box::new(msg)));
        };
        if !taken {
            return self.refuse(busy());
        }
        self.slot_held = true;
        self.deadline = None;
        match msg {
            Message::Setup { spec } => match protocol::spec(spec) {
                Ok(spec) => self.check(spec),
                Err(r) => self.refuse(r),
            },
            Message::ThirdParty(req) => {
                // A measures as a client (B may be A itself): the slot is freed first.
                self.state = State::ThirdParty;
                self.slot_held = false;
                vec![Action::ReleaseSlot, Action::Named("third-party"), Action::RunThirdParty(Box::new(req))]
            }
            other => self.out_of_state(&other, "setup"),
        }
    }

    /// The checks that need nothing but the request and the rules.
    fn check(&mut self, spec: TestSpec) -> Vec<Action> {
        let mut out = vec![Action::Named(spec.test.id())];
        let checked = crate::limits::check_policy(&spec, &self.rules.policy)
            .and_then(|()| crate::limits::validate(&spec, &self.rules.limits));
        match checked {
            Ok(()) => {
                self.state = State::Preparing;
                out.push(Action::Prepare(Box::new(spec)));
            }
            Err(r) => out.extend(self.refuse(r)),
        }
        out
    }

    fn on_prepared(&mut self, now: Instant, event: Event) -> Vec<Action> {
        match event {
            Event::Prepared(Ok(accepted)) => {
                let deadline = now + self.timeouts.handshake;
                self.enter(State::AwaitData, Some(deadline));
                vec![Action::Send(Box::new(Message::Accepted(*accepted))), Action::CollectData(deadline)]
            }
            Event::Prepared(Err(r)) => self.refuse(r),
            other => self.unexpected(&other, State::Preparing),
        }
    }

    fn on_data(&mut self, now: Instant, event: Event) -> Vec<Action> {
        match event {
            Event::DataReady => {
                let wait = self.timeouts.handshake.max(self.timeouts.prepare);
                self.enter(State::AwaitStart, Some(now + wait));
                vec![Action::Send(Box::new(Message::Ready {}))]
            }
            Event::Message(m) => self.out_of_state(&m, "the data connections"),
            other => self.unexpected(&other, State::AwaitData),
        }
    }

    fn on_start(&mut self, event: Event) -> Vec<Action> {
        match event {
            Event::Message(m) if matches!(*m, Message::Start {}) => {
                self.enter(State::Running, None);
                vec![Action::StartTest]
            }
            Event::Message(m) => self.out_of_state(&m, "start"),
            Event::DataClosed(index) => {
                let why = format!("data connection {index} closed before the test started");
                self.refuse(Rejection::new(ErrorCode::OutOfState, why))
            }
            other => self.unexpected(&other, State::AwaitStart),
        }
    }

    fn on_running(&mut self, now: Instant, event: Event) -> Vec<Action> {
        self.state = State::Running;
        match event {
            Event::Message(m) if matches!(*m, Message::Stop { .. }) => vec![Action::StopTest],
            Event::Message(_) => Vec::new(),
            Event::Measured => {
                // The slot is free as soon as the results are out: the next test may start
                // while this client closes.
                self.enter(State::Linger, Some(now + self.timeouts.linger));
                self.slot_held = false;
                vec![Action::SendResults, Action::ReleaseSlot]
            }
            other => self.unexpected(&other, State::Running),
        }
    }

    fn on_third_party(&mut self, now: Instant, event: Event) -> Vec<Action> {
        match event {
            Event::Measured => {
                self.enter(State::Linger, Some(now + self.timeouts.linger));
                Vec::new()
            }
            other => self.unexpected(&other, State::ThirdParty),
        }
    }

    fn enter(&mut self, state: State, deadline: Option<Instant>) {
        self.state = state;
        self.deadline = deadline;
    }

    /// An event the driver should not have passed in this state: the session stays where
    /// it was, and the event is dropped.
    fn unexpected(&mut self, event: &Event, state: State) -> Vec<Action> {
        tracing::debug!("session: ignoring {event:?} in {state:?}");
        self.state = state;
        Vec::new()
    }

    fn out_of_state(&mut self, got: &Message, wanted: &str) -> Vec<Action> {
        if let Message::Error(r) = got {
            return self.end(Outcome::Lost(Error::Rejected(r.clone()).to_string()));
        }
        let why = format!("expected {wanted}, got {}", got.name());
        self.refuse(Rejection::new(ErrorCode::OutOfState, why))
    }

    /// Ends with `r` told to the client, after the slot is free (its next attempt is
    /// admitted).
    fn refuse(&mut self, r: Rejection) -> Vec<Action> {
        let mut out = self.release();
        out.push(Action::Send(Box::new(Message::Error(r.clone()))));
        out.push(Action::Close);
        self.enter(State::Done(Outcome::Refused(r)), None);
        out
    }

    fn end(&mut self, outcome: Outcome) -> Vec<Action> {
        let mut out = self.release();
        out.push(Action::Close);
        self.enter(State::Done(outcome), None);
        out
    }

    /// Gives back what the session still holds.
    fn release(&mut self) -> Vec<Action> {
        let mut out = Vec::new();
        if std::mem::take(&mut self.handshake_held) {
            out.push(Action::ReleaseHandshake);
        }
        if std::mem::take(&mut self.slot_held) {
            out.push(Action::ReleaseSlot);
        }
        out
    }
}

/// The answer to a client while every test slot is taken.
pub fn busy() -> Rejection {
    Rejection {
        retry_after_ms: Some(1000),
        ..Rejection::new(ErrorCode::Busy, "the server is busy running another test; try again later")
    }
}
