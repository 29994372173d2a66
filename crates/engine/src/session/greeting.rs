//! The server's answer to a control connection's greeting (its hello, then its
//! authentication), before the session has a thread: a refusal for a protocol version this
//! server does not speak, for a failed or malformed authentication, and `busy` when every
//! test slot or the class's handshake budget is taken. Pure: the acceptor
//! (`server/acceptor.rs`) reads the bytes, passes in the server's nonce and counts, and sends
//! what comes back.

use wire::{ErrorCode, Hello, Message, Rejection};

use crate::auth::{Judged, Peer};

/// A refused greeting: the bytes owed to the client (the answers it waits for, then an error
/// frame where it reads one) and the reason for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Sent before the connection is closed.
    pub send: Vec<u8>,
    /// For the log line.
    pub reason: String,
    /// The key id the client named, if any (for the log line).
    pub key_id: Option<String>,
}

/// The answer to a control hello that was not answered with a server hello (its version is
/// not this server's, or the server had no randomness): a server hello with `nonce`, so the
/// client can read the version, then the refusal.
pub fn unanswered(hello: &Hello, nonce: [u8; 32]) -> Refused {
    let why = crate::protocol::check_client_hello(hello)
        .err()
        .unwrap_or_else(|| Rejection::new(ErrorCode::Internal, "the server could not read its RNG"));
    let mut send = Hello::server(nonce).encode().to_vec();
    send.extend(Message::Error(why.clone()).encode().unwrap_or_default());
    Refused { send, reason: why.to_string(), key_id: None }
}

/// The verdict on the client's authentication: who it is and the answer to send, or the
/// refusal (the answer, then an error frame only when the authentication never made sense:
/// a client that got a verdict reads it there).
pub fn authenticated(judged: Judged) -> Result<(Peer, Vec<u8>), Refused> {
    let mut send = judged.reply.map(|r| r.to_vec()).unwrap_or_default();
    match judged.peer {
        Ok(peer) => Ok((peer, send)),
        Err(why) => {
            if let Some(r) = &why.tell {
                send.extend(Message::Error(r.clone()).encode().unwrap_or_default());
            }
            Err(Refused { send, reason: why.reason, key_id: why.key_id.map(|i| i.to_string()) })
        }
    }
}

/// `busy` instead of the answer to the authentication (the client reads either): every test
/// slot is taken (`running` tests), or, with a slot free, `max` clients of `class` are
/// between their authentication and their request.
pub fn busy(running: usize, free: bool, (class, max): (&str, u32)) -> Refused {
    let reason = if free {
        format!("busy ({max} clients of class {class} between authentication and request)")
    } else {
        format!("busy ({running} test(s) running)")
    };
    let send = Message::Error(super::server::busy()).encode().unwrap_or_default();
    Refused { send, reason, key_id: None }
}

#[cfg(test)]
mod tests {
    use wire::auth::{self as wa, ClientAuth, KeyId, Secret, ServerAuth, Status};
    use wire::{FrameDecoder, HelloKind, HELLO_LEN, PROTOCOL_VERSION};

    use super::*;
    use crate::auth::{judge, Keyring};

    /// The frames in `bytes`, in order.
    fn frames(bytes: &[u8]) -> Vec<Message> {
        let mut d = FrameDecoder::new();
        d.push(bytes);
        std::iter::from_fn(|| d.next_frame().ok().flatten()).map(|f| Message::decode(&f).unwrap()).collect()
    }

    /// The one frame in `bytes`, an error.
    fn only_error(bytes: &[u8]) -> Rejection {
        match frames(bytes).as_slice() {
            [Message::Error(why)] => why.clone(),
            other => panic!("not one error frame: {other:?}"),
        }
    }

    fn ring() -> Keyring {
        crate::auth::keys::parse(
            "key alice 0707070707070707070707070707070707070707070707070707070707070707\n",
        )
        .expect("a keys file")
    }

    #[test]
    fn a_hello_of_another_version_gets_a_server_hello_then_a_bad_version_refusal() {
        let mut old = Hello::control([1; 32]);
        old.version = PROTOCOL_VERSION - 1;
        let r = unanswered(&old, [9; 32]);
        let hello = Hello::decode(&r.send[..HELLO_LEN]).unwrap();
        assert_eq!((hello.version, hello.kind), (PROTOCOL_VERSION, HelloKind::Server { nonce: [9; 32] }));
        let why = only_error(&r.send[HELLO_LEN..]);
        assert_eq!(why.code, ErrorCode::BadVersion);
        assert_eq!(r.reason, why.to_string());
        // A hello of this version was left unanswered only for want of randomness.
        let r = unanswered(&Hello::control([1; 32]), [0; 32]);
        let why = only_error(&r.send[HELLO_LEN..]);
        assert_eq!(why.code, ErrorCode::Internal);
    }

    #[test]
    fn a_failed_authentication_gets_its_verdict_and_no_error_frame() {
        let (nc, ns) = ([1; 32], [2; 32]);
        let wrong = Secret::new(vec![8; 32]).unwrap();
        let id = KeyId::new("alice").unwrap();
        let (auth, _) = wa::client_start(Some((&id, &wrong)), PROTOCOL_VERSION, &nc, &ns).unwrap();
        let ring = ring();
        let r = authenticated(judge(Some(&ring), (&nc, &ns), &auth.encode())).unwrap_err();
        assert_eq!(ServerAuth::decode(&r.send).unwrap().status, Status::Failed);
        assert_eq!(r.send.len(), wa::SERVER_AUTH_LEN, "nothing after the verdict");
        assert_eq!(
            (r.reason.as_str(), r.key_id.as_deref()),
            ("authentication failed (unknown key id or wrong secret)", Some("alice"))
        );
        // Anonymous on a keyed server: required.
        let anon = ClientAuth::Anonymous.encode();
        let r = authenticated(judge(Some(&ring), (&nc, &ns), &anon)).unwrap_err();
        assert_eq!(ServerAuth::decode(&r.send).unwrap().status, Status::Required);
    }

    #[test]
    fn a_malformed_authentication_is_told_why_in_an_error_frame() {
        let r = authenticated(judge(None, (&[1; 32], &[2; 32]), &[0xff; wa::CLIENT_AUTH_LEN])).unwrap_err();
        let why = only_error(&r.send);
        assert_eq!(why.code, ErrorCode::BadMessage);
    }

    #[test]
    fn an_accepted_client_gets_the_answer_and_its_class() {
        let anon = ClientAuth::Anonymous.encode();
        let (peer, send) = authenticated(judge(None, (&[1; 32], &[2; 32]), &anon)).unwrap();
        assert_eq!((peer.class.as_str(), peer.key_id), (crate::limits::ANONYMOUS, None));
        assert_eq!(ServerAuth::decode(&send).unwrap().status, Status::Ok);
    }

    #[test]
    fn busy_says_whether_the_tests_or_the_handshakes_are_full() {
        let r = busy(1, false, ("lab", 64));
        assert_eq!(r.reason, "busy (1 test(s) running)");
        let why = only_error(&r.send);
        assert_eq!((why.code, why.retry_after_ms), (ErrorCode::Busy, Some(1000)));
        assert_eq!(
            busy(0, true, ("lab", 64)).reason,
            "busy (64 clients of class lab between authentication and request)"
        );
    }
}
