//! The client's end of the control session in virtual time: the handshake against the
//! server's real (pure) authentication, every state of a test, each deadline, each refusal
//! and the busy retry.

use std::time::{Duration, Instant};

use results::{SideMeasurement, TestKind, TestSpec};
use wire::auth::{self as wa, ClientAuth, KeyId, Secret};
use wire::ctrl::{Accepted, Host};
use wire::{ErrorCode, Hello, Message, Rejection, PROTOCOL_VERSION};

use super::client::{
    retry_busy, Action, Client, Event, Handshake, HandshakeAction, HandshakeEvent, Plan, State, Timeouts,
};
use crate::auth::ClientKey;
use crate::Error;

const STEP: Duration = Duration::from_secs(5);
const T: Timeouts = Timeouts { step: STEP, results: Duration::from_secs(15) };
const NC: [u8; 32] = [1; 32];
const NS: [u8; 32] = [2; 32];

fn key(secret: u8) -> ClientKey {
    ClientKey { id: KeyId::new("alice").unwrap(), secret: Secret::new(vec![secret; 32]).unwrap() }
}

/// The server's answer to the authentication the handshake sent, judged by the server's
/// own pure check against a server holding `alice`'s key `[7; 32]` (or no keys).
fn answer(sent: &[HandshakeAction], keyed_server: bool) -> (Vec<u8>, Option<wa::SessionKey>) {
    let [HandshakeAction::SendAuth(bytes)] = sent else { panic!("no authentication sent: {sent:?}") };
    let auth = ClientAuth::decode(bytes).unwrap();
    let alice = key(7);
    let find = |id: &KeyId| (id == &alice.id).then_some(&alice.secret);
    let lookup: Option<wa::Lookup<'_, '_>> = keyed_server.then_some(&find as _);
    let verdict = wa::server_check(lookup, PROTOCOL_VERSION, &NC, &NS, &auth);
    (verdict.reply.encode().to_vec(), verdict.session.map(|(_, k)| k))
}

fn shake(key: Option<ClientKey>) -> (Handshake, Instant) {
    let now = Instant::now();
    let (h, first) = Handshake::new(now, STEP, NC, key, "198.18.0.2:9180".into());
    assert_eq!(first, vec![HandshakeAction::SendHello(Hello::control(NC))]);
    (h, now)
}

fn server_hello() -> HandshakeEvent {
    HandshakeEvent::Hello(Hello::server(NS).encode())
}

fn failed(h: &mut Handshake) -> Error {
    assert!(h.is_done());
    h.outcome().expect("an outcome").expect_err("a failure")
}

#[test]
fn an_anonymous_handshake_sends_hello_then_authentication_and_ends_without_a_key() {
    let (mut h, t0) = shake(None);
    assert!(h.awaits_hello());
    assert_eq!(h.deadline(), t0 + STEP);
    let t1 = t0 + Duration::from_secs(1);
    let sent = h.handle(t1, server_hello());
    assert!(!h.awaits_hello() && !h.is_done());
    assert_eq!(h.deadline(), t1 + STEP, "each answer has its own deadline");
    let (reply, _) = answer(&sent, false);
    assert_eq!(h.handle(t1, HandshakeEvent::AuthReply(reply)), vec![]);
    assert!(matches!(h.outcome(), Some(Ok(None))));
}

#[test]
fn a_keyed_handshake_ends_with_the_servers_session_key() {
    let (mut h, t0) = shake(Some(key(7)));
    let sent = h.handle(t0, server_hello());
    let (reply, server_key) = answer(&sent, true);
    h.handle(t0, HandshakeEvent::AuthReply(reply));
    let Some(Ok(Some(client_key))) = h.outcome() else { panic!("not keyed") };
    let token = wire::Token([3; 16]);
    assert_eq!(wa::data_tag(&client_key, &token, 0), wa::data_tag(&server_key.unwrap(), &token, 0));
}

#[test]
fn a_wrong_key_a_missing_key_and_a_keyless_server_are_auth_failures_that_say_which() {
    let cases = [
        (Some(key(9)), true, "authentication failed: 198.18.0.2:9180 does not accept key 'alice'"),
        (None, true, "authentication required: 198.18.0.2:9180 serves only clients with a key"),
        (Some(key(7)), false, "198.18.0.2:9180 does not use keys"),
    ];
    for (k, keyed_server, says) in cases {
        let (mut h, t0) = shake(k);
        let sent = h.handle(t0, server_hello());
        let (reply, _) = answer(&sent, keyed_server);
        h.handle(t0, HandshakeEvent::AuthReply(reply));
        let e = failed(&mut h);
        assert_eq!(e.code(), "auth");
        assert!(e.to_string().starts_with(says), "{e}");
    }
}

#[test]
fn a_forged_server_proof_and_a_reflected_nonce_are_refused() {
    let (mut h, t0) = shake(Some(key(7)));
    let sent = h.handle(t0, server_hello());
    let (mut reply, _) = answer(&sent, true);
    let last = reply.len() - 1;
    reply[last] ^= 1;
    h.handle(t0, HandshakeEvent::AuthReply(reply));
    assert_eq!(failed(&mut h).code(), "auth");
    // A server hello carrying the client's own nonce back.
    let (mut h, t0) = shake(Some(key(7)));
    h.handle(t0, HandshakeEvent::Hello(Hello::server(NC).encode()));
    assert_eq!(failed(&mut h).code(), "auth");
}

#[test]
fn a_server_of_another_version_is_refused_naming_both() {
    let (mut h, t0) = shake(None);
    let mut old = Hello::server(NS);
    old.version = PROTOCOL_VERSION - 1;
    h.handle(t0, HandshakeEvent::Hello(old.encode()));
    let e = failed(&mut h);
    assert_eq!(e.code(), "bad-version");
    assert!(e.to_string().contains(&format!("speaks tcplab protocol {}", PROTOCOL_VERSION - 1)), "{e}");
}

#[test]
fn something_else_than_a_server_hello_is_a_protocol_error() {
    let (mut h, t0) = shake(None);
    h.handle(t0, HandshakeEvent::Hello(*b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nabcdef"));
    assert_eq!(failed(&mut h).to_string(), "protocol error: 198.18.0.2:9180 is not a tcplab server");
    let (mut h, t0) = shake(None);
    h.handle(t0, HandshakeEvent::Hello(Hello::control(NS).encode()));
    assert!(failed(&mut h).to_string().contains("did not answer with a server hello"));
}

#[test]
fn a_busy_server_answers_the_authentication_with_a_refusal() {
    let (mut h, t0) = shake(None);
    h.handle(t0, server_hello());
    let busy = crate::session::server::busy();
    h.handle(t0, HandshakeEvent::Message(Box::new(Message::Error(busy.clone()))));
    assert!(matches!(failed(&mut h), Error::Rejected(r) if r == busy));
    let (mut h, t0) = shake(None);
    h.handle(t0, server_hello());
    h.handle(t0, HandshakeEvent::Message(Box::new(Message::Ready {})));
    assert_eq!(failed(&mut h).to_string(), "protocol error: expected authentication, got ready");
}

#[test]
fn each_handshake_wait_times_out_at_its_deadline() {
    for after_hello in [false, true] {
        let (mut h, t0) = shake(None);
        if after_hello {
            h.handle(t0, server_hello());
        }
        assert_eq!(h.handle(t0 + STEP - Duration::from_millis(1), HandshakeEvent::Tick), vec![]);
        assert!(!h.is_done());
        h.handle(t0 + STEP, HandshakeEvent::Tick);
        assert_eq!(failed(&mut h).to_string(), "timed out waiting for the peer");
    }
}

fn plan(kind: TestKind) -> Plan {
    let udp = kind == TestKind::UdpStream;
    Plan {
        setup: crate::protocol::request(&TestSpec::new(kind)),
        results_end_local: udp,
        eof_ends: kind == TestKind::TcpStream,
    }
}

fn msg(m: Message) -> Event {
    Event::Message(Box::new(m))
}

fn send(m: Message) -> Action {
    Action::Send(Box::new(m))
}

fn accepted() -> Accepted {
    Accepted { token: "ab".repeat(16), host: Host::default(), udp_ports: Vec::new() }
}

fn results() -> Message {
    let side = SideMeasurement { measured_s: 2.0, ..SideMeasurement::default() };
    Message::Results { side: Box::new(crate::protocol::report(side)) }
}

/// A client session of `kind` brought to its running test at `t0`.
fn running(kind: TestKind) -> (Client, Instant) {
    let t0 = Instant::now();
    let (mut c, _) = Client::new(t0, T, plan(kind));
    c.handle(t0, msg(Message::Accepted(accepted())));
    c.handle(t0, Event::DataOpen);
    c.handle(t0, msg(Message::Ready {}));
    c.handle(t0, Event::JobsReady);
    assert_eq!(c.state(), State::Running);
    (c, t0)
}

fn ended(c: &mut Client) -> (Result<(), Error>, Option<SideMeasurement>) {
    assert_eq!(c.state(), State::Done);
    c.outcome().expect("an outcome")
}

#[test]
fn a_stream_test_goes_through_every_state_and_its_eof_tells_the_server() {
    let t0 = Instant::now();
    let (mut c, first) = Client::new(t0, T, plan(TestKind::TcpStream));
    assert!(matches!(first.as_slice(), [Action::Send(m)] if matches!(**m, Message::Setup { .. })));
    assert_eq!((c.state(), c.deadline()), (State::AwaitAccepted, Some(t0 + STEP)));
    let t1 = t0 + Duration::from_secs(1);
    assert_eq!(
        c.handle(t1, msg(Message::Accepted(accepted()))),
        vec![Action::OpenData(Box::new(accepted()))]
    );
    assert_eq!((c.state(), c.deadline()), (State::OpeningData, None));
    let t2 = t1 + Duration::from_secs(3);
    assert_eq!(c.handle(t2, Event::DataOpen), vec![]);
    assert_eq!((c.state(), c.deadline()), (State::AwaitReady, Some(t2 + STEP)));
    assert_eq!(c.handle(t2, msg(Message::Ready {})), vec![Action::PrepareJobs]);
    assert_eq!(c.state(), State::Starting);
    assert_eq!(c.handle(t2, Event::JobsReady), vec![send(Message::Start {}), Action::StartTest]);
    assert_eq!((c.state(), c.deadline()), (State::Running, None));
    assert!(c.watching());
    assert_eq!(c.handle(t2 + Duration::from_secs(3600), Event::Tick), vec![], "the timeline bounds the test");
    assert_eq!(c.handle(t2, msg(results())), vec![], "a stream's receivers end on EOF, not on results");
    assert!(!c.watching(), "nothing more to read");
    assert_eq!(c.handle(t2, Event::LocalDone(None)), vec![], "its EOF said it: no stop");
    let (result, remote) = ended(&mut c);
    assert!(result.is_ok());
    assert_eq!(remote.map(|r| r.measured_s), Some(2.0));
}

#[test]
fn a_udp_tests_results_end_the_local_receivers_and_a_stop_tells_the_server() {
    let (mut c, t0) = running(TestKind::UdpStream);
    assert_eq!(c.handle(t0, msg(results())), vec![Action::StopLocal]);
    let stop = send(Message::Stop { reason: "client done".into() });
    assert_eq!(c.handle(t0, Event::LocalDone(None)), vec![stop]);
    assert!(ended(&mut c).0.is_ok());
}

#[test]
fn results_after_the_local_side_are_awaited_until_their_deadline() {
    let (mut c, t0) = running(TestKind::TcpRr);
    let stop = send(Message::Stop { reason: "client done".into() });
    assert_eq!(c.handle(t0, Event::LocalDone(None)), vec![stop]);
    assert_eq!((c.state(), c.deadline()), (State::AwaitResults, Some(t0 + T.results)));
    assert_eq!(c.handle(t0, msg(Message::Ready {})), vec![], "ignored while waiting");
    c.handle(t0 + T.results - Duration::from_millis(1), msg(results()));
    assert!(ended(&mut c).0.is_ok());
    // And without them.
    let (mut c, t0) = running(TestKind::TcpRr);
    c.handle(t0, Event::LocalDone(None));
    assert_eq!(c.handle(t0 + T.results - Duration::from_millis(1), Event::Tick), vec![]);
    c.handle(t0 + T.results, Event::Tick);
    let (result, remote) = ended(&mut c);
    assert_eq!(result.unwrap_err().to_string(), "timed out waiting for the peer");
    assert!(remote.is_none());
}

#[test]
fn each_answer_before_the_test_times_out_at_its_deadline() {
    let t0 = Instant::now();
    let (mut c, _) = Client::new(t0, T, plan(TestKind::TcpStream));
    c.handle(t0 + STEP, Event::Tick);
    assert_eq!(ended(&mut c).0.unwrap_err().code(), "timeout");
    let (mut c, _) = Client::new(t0, T, plan(TestKind::TcpStream));
    c.handle(t0, msg(Message::Accepted(accepted())));
    assert_eq!(c.handle(t0 + STEP * 10, Event::Tick), vec![], "opening has the connects' own timeouts");
    c.handle(t0 + STEP, Event::DataOpen);
    c.handle(t0 + STEP * 2 - Duration::from_millis(1), Event::Tick);
    assert_eq!(c.state(), State::AwaitReady);
    c.handle(t0 + STEP * 2, Event::Tick);
    assert_eq!(ended(&mut c).0.unwrap_err().code(), "timeout");
}

#[test]
fn refusals_end_the_session_with_the_servers_reason_and_only_busy_is_retried() {
    let t0 = Instant::now();
    let busy = crate::session::server::busy();
    let (mut c, _) = Client::new(t0, T, plan(TestKind::TcpStream));
    c.handle(t0, msg(Message::Error(busy.clone())));
    let result = ended(&mut c).0;
    assert!(matches!(&result, Err(Error::Rejected(r)) if r == &busy));
    let give_up = t0 + Duration::from_secs(10);
    assert!(retry_busy(&result, t0, give_up, false));
    assert!(!retry_busy(&result, give_up, give_up, false), "not past the wait");
    assert!(!retry_busy(&result, t0, give_up, true), "not after the user stopped");
    // A limit at `ready`'s place is final.
    let (mut c, _) = Client::new(t0, T, plan(TestKind::TcpStream));
    c.handle(t0, msg(Message::Accepted(accepted())));
    c.handle(t0, Event::DataOpen);
    c.handle(t0, msg(Message::Error(Rejection::new(ErrorCode::Limit, "a test beyond 1 a minute"))));
    let result = ended(&mut c).0;
    assert_eq!(result.as_ref().unwrap_err().code(), "limit");
    assert!(!retry_busy(&result, t0, give_up, false));
    assert!(!retry_busy(&Ok(()), t0, give_up, false));
}

#[test]
fn a_message_out_of_its_place_is_a_protocol_error() {
    let t0 = Instant::now();
    let (mut c, _) = Client::new(t0, T, plan(TestKind::TcpStream));
    c.handle(t0, msg(Message::Ready {}));
    assert_eq!(ended(&mut c).0.unwrap_err().to_string(), "protocol error: expected accepted, got ready");
    let (mut c, _) = Client::new(t0, T, plan(TestKind::TcpStream));
    c.handle(t0, msg(Message::Accepted(accepted())));
    c.handle(t0, Event::DataOpen);
    c.handle(t0, msg(results()));
    assert_eq!(ended(&mut c).0.unwrap_err().to_string(), "protocol error: expected ready, got results");
}

#[test]
fn an_interrupt_before_the_test_ends_it_at_ready_and_during_it_is_told_once() {
    let t0 = Instant::now();
    let (mut c, _) = Client::new(t0, T, plan(TestKind::TcpStream));
    assert_eq!(c.handle(t0, Event::Interrupt), vec![]);
    assert!(c.interrupted());
    c.handle(t0, msg(Message::Accepted(accepted())));
    c.handle(t0, Event::DataOpen);
    c.handle(t0, msg(Message::Ready {}));
    assert_eq!(ended(&mut c).0.unwrap_err().code(), "interrupted");

    let (mut c, t0) = running(TestKind::TcpStream);
    let told = vec![Action::StopLocal, send(Message::Stop { reason: "interrupted".into() })];
    assert_eq!(c.handle(t0, Event::Interrupt), told);
    assert_eq!(c.handle(t0, Event::Interrupt), vec![], "once");
    // Even a stream says it is done: its EOF may come from the interrupt.
    assert_eq!(
        c.handle(t0, Event::LocalDone(None)),
        vec![send(Message::Stop { reason: "client done".into() })]
    );
    c.handle(t0, msg(results()));
    assert!(ended(&mut c).0.is_ok(), "the caller marks it interrupted");
}

#[test]
fn a_server_lost_or_refusing_during_the_test_stops_this_end_and_fails_it() {
    let (mut c, t0) = running(TestKind::TcpStream);
    assert_eq!(c.handle(t0, Event::Failed(Error::PeerClosed)), vec![Action::StopLocal, Action::AbortLocal]);
    assert!(!c.watching());
    assert_eq!(c.state(), State::Running, "this end's measurement is still to come");
    c.handle(t0, Event::LocalDone(None));
    let (result, remote) = ended(&mut c);
    assert_eq!(result.unwrap_err().to_string(), "protocol error: the server vanished during the test");
    assert!(remote.is_none());

    let (mut c, t0) = running(TestKind::TcpStream);
    let internal = Rejection::new(ErrorCode::Internal, "the test thread panicked");
    assert_eq!(c.handle(t0, msg(Message::Error(internal))), vec![Action::AbortLocal]);
    c.handle(t0, Event::LocalDone(None));
    assert_eq!(ended(&mut c).0.unwrap_err().code(), "internal");
}

#[test]
fn a_local_error_fails_the_test_but_keeps_the_servers_measurement() {
    let (mut c, t0) = running(TestKind::TcpStream);
    c.handle(t0, msg(results()));
    c.handle(t0, Event::LocalDone(Some("stream 0: connection reset".into())));
    let (result, remote) = ended(&mut c);
    assert_eq!(result.unwrap_err().to_string(), "protocol error: stream 0: connection reset");
    assert!(remote.is_some());
}

#[test]
fn a_failure_to_open_or_prepare_ends_the_session() {
    let t0 = Instant::now();
    let (mut c, _) = Client::new(t0, T, plan(TestKind::TcpStream));
    c.handle(t0, msg(Message::Accepted(accepted())));
    c.handle(t0, Event::Failed(Error::Protocol { detail: "malformed token".into() }));
    assert_eq!(ended(&mut c).0.unwrap_err().to_string(), "protocol error: malformed token");
    assert_eq!(c.handle(t0, Event::DataOpen), vec![], "nothing after the end");
}
