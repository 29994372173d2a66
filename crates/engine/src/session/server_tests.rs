//! The server's end of the control session in virtual time: every state, every deadline,
//! every refusal, and the slot and handshake budget given back exactly once on every way out.

use std::time::{Duration, Instant};

use results::{TestKind, TestSpec};
use wire::ctrl::{Accepted, Host, ThirdPartyRequest};
use wire::{ErrorCode, Message, Rejection};

use super::server::{Action, Event, Failure, Outcome, Rules, Server, State, Timeouts};
use crate::limits::{Limits, Policy};

const T: Timeouts = Timeouts {
    handshake: Duration::from_secs(5),
    prepare: Duration::from_secs(120),
    linger: Duration::from_secs(2),
};

fn msg(m: Message) -> Event {
    Event::Message(Box::new(m))
}

fn send(m: Message) -> Action {
    Action::Send(Box::new(m))
}

type Step = fn(&mut Run);

fn rules() -> Rules {
    Rules { policy: Policy::open("anonymous"), limits: Limits::default() }
}

fn setup(spec: &TestSpec) -> Message {
    Message::Setup { spec: crate::protocol::request(spec) }
}

fn stream() -> TestSpec {
    TestSpec::new(TestKind::TcpStream)
}

fn accepted() -> Box<Accepted> {
    let host = Host { hostname: "h".into(), kernel: "k".into(), cpus: 2, ..Host::default() };
    Box::new(Accepted { token: "00".repeat(16), host, udp_ports: Vec::new() })
}

/// A session with its own virtual clock and a ledger of what it holds, as the driver keeps.
struct Run {
    s: Server,
    now: Instant,
    slots: i32,
    handshakes: i32,
    sent: Vec<Message>,
    log: Vec<Action>,
}

impl Run {
    fn new() -> Run {
        Run::with(rules())
    }

    fn with(rules: Rules) -> Run {
        let now = Instant::now();
        let s = Server::new(now, T, rules);
        Run { s, now, slots: 0, handshakes: 1, sent: Vec::new(), log: Vec::new() }
    }

    fn at(&mut self, after: Duration, e: Event) -> Vec<Action> {
        self.now += after;
        self.feed(e)
    }

    fn feed(&mut self, e: Event) -> Vec<Action> {
        let actions = self.s.handle(self.now, e);
        for a in &actions {
            match a {
                Action::ReleaseSlot => self.slots -= 1,
                Action::ReleaseHandshake => self.handshakes -= 1,
                Action::Send(m) => self.sent.push((**m).clone()),
                _ => {}
            }
            assert!(self.slots >= 0 && self.handshakes >= 0, "released twice: {actions:?}");
        }
        self.log.extend(actions.iter().cloned());
        actions
    }

    /// Feeds the slot answer, counting a taken slot.
    fn slot(&mut self, taken: bool) -> Vec<Action> {
        if taken {
            self.slots += 1;
        }
        self.feed(Event::Slot(taken))
    }

    /// A new session driven to ready: a tcp-stream request, its slot, its data connections.
    fn ready() -> Run {
        let mut r = Run::new();
        r.drive_to_ready();
        r
    }

    fn drive_to_ready(&mut self) {
        self.feed(msg(setup(&stream())));
        self.slot(true);
        self.feed(Event::Prepared(Ok(accepted())));
        self.feed(Event::DataReady);
    }

    /// Drives a tcp-stream session to the running test.
    fn start_running(&mut self) {
        self.drive_to_ready();
        assert_eq!(self.feed(msg(Message::Start {})), vec![Action::StartTest]);
    }

    fn refusal(&self) -> Rejection {
        match self.s.state() {
            State::Done(Outcome::Refused(r)) => r.clone(),
            other => panic!("not refused: {other:?}"),
        }
    }

    /// The session is over and holds nothing.
    fn assert_clean(&self) {
        assert!(self.s.is_done(), "{:?}", self.s.state());
        assert_eq!((self.slots, self.handshakes), (0, 0), "{:?}", self.log);
        assert!(!self.s.holds_slot());
        assert_eq!(self.log.last(), Some(&Action::Close));
    }
}

#[test]
fn a_test_goes_through_every_state_and_frees_its_slot_with_the_results() {
    let mut r = Run::new();
    assert_eq!(r.s.state(), &State::AwaitRequest);
    assert_eq!(r.s.deadline(), Some(r.now + T.handshake));
    let a = r.at(Duration::from_secs(1), msg(setup(&stream())));
    assert_eq!(a, vec![Action::ReleaseHandshake, Action::TakeSlot]);
    assert!(matches!(r.s.state(), State::AwaitSlot(_)));
    let a = r.slot(true);
    assert!(
        matches!(a.as_slice(), [Action::Named("tcp-stream"), Action::Prepare(spec)] if spec.test == TestKind::TcpStream)
    );
    assert_eq!(r.s.state(), &State::Preparing);
    assert_eq!(r.s.deadline(), None);
    let a = r.at(Duration::from_millis(3), Event::Prepared(Ok(accepted())));
    let data_by = r.now + T.handshake;
    assert_eq!(a, vec![send(Message::Accepted(*accepted())), Action::CollectData(data_by)]);
    assert_eq!((r.s.state(), r.s.deadline()), (&State::AwaitData, Some(data_by)));
    assert_eq!(r.at(Duration::from_secs(4), Event::DataReady), vec![send(Message::Ready {})]);
    assert_eq!((r.s.state(), r.s.deadline()), (&State::AwaitStart, Some(r.now + T.prepare)));
    assert_eq!(r.at(Duration::from_secs(100), msg(Message::Start {})), vec![Action::StartTest]);
    assert_eq!((r.s.state(), r.s.deadline()), (&State::Running, None));
    assert!(r.s.holds_slot());
    // A test runs as long as its timeline says: no deadline of the session's ends it.
    assert_eq!(r.at(Duration::from_secs(3000), Event::Tick), vec![]);
    let stop = Message::Stop { reason: "client done".into() };
    assert_eq!(r.feed(msg(stop)), vec![Action::StopTest]);
    assert_eq!(r.feed(msg(Message::Start {})), vec![], "ignored during the test");
    assert_eq!(r.feed(Event::Measured), vec![Action::SendResults, Action::ReleaseSlot]);
    assert_eq!((r.s.state(), r.s.deadline()), (&State::Linger, Some(r.now + T.linger)));
    assert_eq!(r.slots, 0, "free while the client closes");
    assert_eq!(r.at(Duration::from_secs(1), Event::Tick), vec![], "before the linger deadline");
    assert_eq!(r.at(Duration::from_secs(1), Event::Tick), vec![Action::Close]);
    assert_eq!(r.s.state(), &State::Done(Outcome::Finished));
    r.assert_clean();
    assert_eq!(r.feed(Event::Measured), vec![], "nothing happens after the end");
}

#[test]
fn the_client_closing_during_linger_ends_the_session_finished() {
    let mut r = Run::new();
    r.start_running();
    r.feed(Event::Measured);
    assert_eq!(r.feed(Event::Closed), vec![Action::Close]);
    assert_eq!(r.s.state(), &State::Done(Outcome::Finished));
    r.assert_clean();
    // A last message ends it too.
    let mut r = Run::new();
    r.start_running();
    r.feed(Event::Measured);
    r.feed(msg(Message::Stop { reason: "client done".into() }));
    assert_eq!(r.s.state(), &State::Done(Outcome::Finished));
}

#[test]
fn results_that_could_not_be_sent_end_the_session_failed() {
    let mut r = Run::new();
    r.start_running();
    r.feed(Event::Measured);
    r.feed(Event::Failed(Failure::Lost("sending a control message: broken pipe".into())));
    assert!(matches!(r.s.state(), State::Done(Outcome::Lost(why)) if why.contains("broken pipe")));
    r.assert_clean();
}

#[test]
fn a_closed_control_connection_before_the_results_is_a_loss() {
    let mut r = Run::new();
    r.start_running();
    let a = r.feed(Event::Closed);
    assert_eq!(a, vec![Action::AbortTest, Action::ReleaseSlot, Action::Close]);
    assert_eq!(r.s.state(), &State::Done(Outcome::Lost("the peer closed the connection".into())));
    r.assert_clean();
}

#[test]
fn a_prepare_wait_shorter_than_the_handshake_is_the_handshake() {
    let short = Timeouts { prepare: Duration::from_secs(1), ..T };
    let mut s = Server::new(Instant::now(), short, rules());
    let t = Instant::now();
    s.handle(t, msg(setup(&stream())));
    s.handle(t, Event::Slot(true));
    s.handle(t, Event::Prepared(Ok(accepted())));
    s.handle(t, Event::DataReady);
    assert_eq!(s.deadline(), Some(t + T.handshake));
}

#[test]
fn each_wait_times_out_at_its_deadline_with_a_timeout_refusal() {
    let cases: [(Step, Duration, &str); 3] = [
        (|_| {}, T.handshake, "timed out waiting for the peer"),
        (
            |r| {
                r.feed(msg(setup(&stream())));
                r.slot(true);
                r.feed(Event::Prepared(Ok(accepted())));
            },
            T.handshake,
            "timed out waiting for the data connections",
        ),
        (
            |r| {
                r.drive_to_ready();
            },
            T.prepare,
            "timed out waiting for start",
        ),
    ];
    for (to, wait, message) in cases {
        let mut r = Run::new();
        to(&mut r);
        let state = r.s.state().clone();
        assert_eq!(r.at(wait - Duration::from_millis(1), Event::Tick), vec![], "{state:?}: early");
        let a = r.at(Duration::from_millis(1), Event::Tick);
        let refusal = r.refusal();
        assert_eq!((refusal.code, refusal.message.as_str()), (ErrorCode::Timeout, message), "{state:?}");
        assert_eq!(a.last(), Some(&Action::Close));
        assert!(a.contains(&send(Message::Error(refusal))), "{state:?}: the client is told");
        r.assert_clean();
    }
}

#[test]
fn a_request_without_a_free_slot_is_refused_busy_with_a_retry_hint() {
    let mut r = Run::new();
    r.feed(msg(setup(&stream())));
    let a = r.slot(false);
    let busy = r.refusal();
    assert_eq!((busy.code, busy.retry_after_ms), (ErrorCode::Busy, Some(1000)));
    assert_eq!(a, vec![send(Message::Error(busy)), Action::Close], "no slot to release");
    r.assert_clean();
}

#[test]
fn a_request_over_the_limits_or_the_class_policy_is_refused_and_frees_the_slot() {
    let mut long = stream();
    long.duration_ms = 7_200_000;
    let mut r = Run::new();
    r.feed(msg(setup(&long)));
    let a = r.slot(true);
    assert_eq!(
        a[..2],
        [Action::Named("tcp-stream"), Action::ReleaseSlot],
        "the slot is free before the client hears why"
    );
    assert_eq!(r.refusal().code, ErrorCode::BadField);
    r.assert_clean();

    let mut wide = stream();
    wide.parallel = 4;
    let policy = Policy { max_parallel: Some(2), ..Policy::open("lab") };
    let mut r = Run::with(Rules { policy, limits: Limits::default() });
    r.feed(msg(setup(&wide)));
    r.slot(true);
    let refusal = r.refusal();
    assert_eq!(refusal.code, ErrorCode::Limit, "{refusal:?}");
    r.assert_clean();
}

#[test]
fn a_malformed_request_is_refused_as_a_bad_field() {
    let mut req = crate::protocol::request(&stream());
    req.settings.insert("parallel".into(), Some(wire::ctrl::OptionValue::Int(0)));
    let mut r = Run::new();
    r.feed(msg(Message::Setup { spec: req }));
    r.slot(true);
    assert_eq!(r.refusal().code, ErrorCode::BadField);
    r.assert_clean();
}

#[test]
fn a_refusal_of_the_host_checks_frees_the_slot_and_is_told() {
    let mut r = Run::new();
    r.feed(msg(setup(&stream())));
    r.slot(true);
    let limit = Rejection::new(ErrorCode::Limit, "a test beyond 1 a minute");
    let a = r.feed(Event::Prepared(Err(limit.clone())));
    assert_eq!(a, vec![Action::ReleaseSlot, send(Message::Error(limit.clone())), Action::Close]);
    assert_eq!(r.refusal(), limit);
    r.assert_clean();
}

#[test]
fn a_message_out_of_its_state_is_refused_and_a_clients_error_just_ends() {
    // Anything but a request first.
    let mut r = Run::new();
    r.feed(msg(Message::Start {}));
    r.slot(true);
    let refusal = r.refusal();
    assert_eq!(
        (refusal.code, refusal.message.as_str()),
        (ErrorCode::OutOfState, "expected setup, got start")
    );
    r.assert_clean();
    // Anything but start after ready.
    let mut r = Run::ready();
    r.feed(msg(Message::Setup { spec: crate::protocol::request(&stream()) }));
    assert_eq!(r.refusal().message, "expected start, got setup");
    r.assert_clean();
    // The client's own error is not answered.
    let mut r = Run::ready();
    let a = r.feed(msg(Message::Error(Rejection::new(ErrorCode::Internal, "disk full"))));
    assert_eq!(a, vec![Action::ReleaseSlot, Action::Close]);
    assert!(matches!(r.s.state(), State::Done(Outcome::Lost(why)) if why.contains("disk full")));
    r.assert_clean();
}

#[test]
fn a_data_connection_closed_before_start_refuses_the_test() {
    let mut r = Run::ready();
    r.feed(Event::DataClosed(3));
    let refusal = r.refusal();
    assert_eq!(refusal.code, ErrorCode::OutOfState);
    assert_eq!(refusal.message, "data connection 3 closed before the test started");
    r.assert_clean();
}

#[test]
fn a_client_lost_in_any_state_frees_everything_and_a_running_test_is_aborted() {
    let lost = || Event::Failed(Failure::Lost("the peer closed the connection".into()));
    let steps: [Event; 4] =
        [msg(setup(&stream())), Event::Slot(true), Event::Prepared(Ok(accepted())), Event::DataReady];
    for n in 0..=steps.len() + 1 {
        let mut r = Run::new();
        for e in steps.iter().take(n).cloned() {
            if e == Event::Slot(true) {
                r.slot(true);
            } else {
                r.feed(e);
            }
        }
        if n > steps.len() {
            r.feed(msg(Message::Start {}));
        }
        let state = r.s.state().clone();
        let a = r.feed(lost());
        assert_eq!(a.contains(&Action::AbortTest), state == State::Running, "{state:?}: {a:?}");
        assert!(matches!(r.s.state(), State::Done(Outcome::Lost(_))), "{state:?}");
        assert!(!r.sent.iter().any(|m| matches!(m, Message::Error(_))), "{state:?}: nobody to tell");
        r.assert_clean();
    }
}

#[test]
fn a_failure_of_the_driver_is_told_and_frees_the_slot() {
    let mut r = Run::new();
    r.start_running();
    let panicked = Rejection::new(ErrorCode::Internal, "the test thread panicked");
    let a = r.feed(Event::Failed(Failure::Refused(panicked.clone())));
    assert_eq!(a, vec![Action::ReleaseSlot, send(Message::Error(panicked)), Action::Close]);
    r.assert_clean();
}

#[test]
fn a_third_party_request_frees_the_slot_before_it_runs_then_lingers() {
    let req = ThirdPartyRequest {
        to_host: "198.18.0.2".into(),
        to_port: 9180,
        spec: crate::protocol::request(&stream()),
    };
    let mut r = Run::new();
    r.feed(msg(Message::ThirdParty(req.clone())));
    let a = r.slot(true);
    let run = Action::RunThirdParty(Box::new(req.clone()));
    assert_eq!(a, vec![Action::ReleaseSlot, Action::Named("third-party"), run]);
    assert_eq!((r.s.state(), r.slots), (&State::ThirdParty, 0));
    assert_eq!(r.at(Duration::from_secs(3600), Event::Tick), vec![], "bounded by the test it runs");
    assert_eq!(r.feed(Event::Measured), vec![]);
    assert_eq!(r.s.state(), &State::Linger);
    r.at(T.linger, Event::Tick);
    assert_eq!(r.s.state(), &State::Done(Outcome::Finished));
    r.assert_clean();
    // Refused by the third-party checks (the flag is off): told, nothing left to release.
    let mut r = Run::new();
    r.feed(msg(Message::ThirdParty(req)));
    r.slot(true);
    let off = Rejection::new(ErrorCode::Unsupported, crate::server::THIRD_PARTY_OFF);
    assert_eq!(
        r.feed(Event::Failed(Failure::Refused(off.clone()))),
        vec![send(Message::Error(off)), Action::Close]
    );
    r.assert_clean();
}

#[test]
fn events_out_of_order_are_ignored_and_leave_the_state_alone() {
    let mut r = Run::new();
    assert_eq!(r.feed(Event::DataReady), vec![]);
    assert_eq!(r.feed(Event::Measured), vec![]);
    assert_eq!(r.s.state(), &State::AwaitRequest);
    r.feed(msg(setup(&stream())));
    assert_eq!(r.feed(Event::DataReady), vec![]);
    assert!(matches!(r.s.state(), State::AwaitSlot(_)));
    r.slot(true);
    assert_eq!(r.feed(msg(Message::Start {})), vec![]);
    assert_eq!(r.s.state(), &State::Preparing);
}

#[test]
fn engine_errors_become_refusals_or_losses() {
    use crate::Error;
    let f = Failure::from(Error::Timeout { what: "waiting for the UDP hellos" });
    assert_eq!(
        f,
        Failure::Refused(Rejection::new(ErrorCode::Timeout, "timed out waiting for the UDP hellos"))
    );
    let f = Failure::from(Error::Protocol { detail: "frame too long".into() });
    assert!(matches!(f, Failure::Refused(r) if r.code == ErrorCode::BadMessage));
    assert_eq!(Failure::from(Error::PeerClosed), Failure::Lost("the peer closed the connection".into()));
}
