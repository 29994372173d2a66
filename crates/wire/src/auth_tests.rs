//! The handshake as a pure exchange: both ways with the right key, and every way it must fail.

use super::*;

const V: u16 = crate::PROTOCOL_VERSION;

fn secret(b: u8) -> Secret {
    Secret::new(vec![b; 32]).unwrap()
}

fn id(s: &str) -> KeyId {
    KeyId::new(s).unwrap()
}

/// A server with the keys `lab` (secret 1s) and `ops` (secret 2s).
struct Keys(Vec<(KeyId, Secret)>);

impl Keys {
    fn new() -> Keys {
        Keys(vec![(id("lab"), secret(1)), (id("ops"), secret(2))])
    }

    fn check(&self, nc: &[u8; 32], ns: &[u8; 32], auth: &ClientAuth) -> ServerVerdict {
        let lookup = |k: &KeyId| self.0.iter().find(|(i, _)| i == k).map(|(_, s)| s);
        server_check(Some(&lookup), V, nc, ns, auth)
    }
}

/// One whole exchange; returns both ends' outcomes.
fn exchange(key: Option<(&KeyId, &Secret)>, nc: [u8; 32], ns: [u8; 32]) -> (ServerVerdict, ClientOutcome) {
    let (auth, pending) = client_start(key, V, &nc, &ns).unwrap();
    let wire = ClientAuth::decode(&auth.encode()).unwrap();
    let verdict = Keys::new().check(&nc, &ns, &wire);
    let reply = ServerAuth::decode(&verdict.reply.encode()).unwrap();
    let outcome = pending.finish(&reply).unwrap();
    (verdict, outcome)
}

#[test]
fn the_right_key_authenticates_both_ways_and_both_ends_share_the_session_key() {
    let (verdict, outcome) = exchange(Some((&id("lab"), &secret(1))), [1; 32], [2; 32]);
    assert_eq!(verdict.reply.status, Status::Ok);
    let (who, server_key) = verdict.session.unwrap();
    assert_eq!(who, id("lab"));
    let ClientOutcome::Keyed(client_key) = outcome else { panic!("{outcome:?}") };
    let token = Token([9; 16]);
    let tag = data_tag(&client_key, &token, 3);
    assert!(verify_data_tag(&server_key, &token, 3, &tag));
    assert!(!verify_data_tag(&server_key, &token, 4, &tag), "a tag is bound to its stream");
    assert!(!verify_data_tag(&server_key, &Token([8; 16]), 3, &tag), "and to its token");
    // Another connection with the same key derives another session key.
    let (again, _) = exchange(Some((&id("lab"), &secret(1))), [3; 32], [4; 32]);
    assert!(!verify_data_tag(&again.session.unwrap().1, &token, 3, &tag));
}

#[test]
fn a_wrong_secret_and_an_unknown_id_get_the_same_answer() {
    for (key_id, s) in [("lab", secret(2)), ("nobody", secret(1))] {
        let (verdict, outcome) = exchange(Some((&id(key_id), &s)), [1; 32], [2; 32]);
        assert_eq!(verdict.reply, ServerAuth { status: Status::Failed, tag: [0; 32] }, "{key_id}");
        assert!(verdict.session.is_none());
        assert!(matches!(outcome, ClientOutcome::Refused(Status::Failed)));
    }
}

#[test]
fn a_keyless_client_against_keys_and_a_keyed_client_against_none() {
    let (verdict, outcome) = exchange(None, [1; 32], [2; 32]);
    assert_eq!(verdict.reply.status, Status::Required);
    assert!(matches!(outcome, ClientOutcome::Refused(Status::Required)));
    let keyed = client_start(Some((&id("lab"), &secret(1))), V, &[1; 32], &[2; 32]).unwrap().0;
    assert_eq!(server_check(None, V, &[1; 32], &[2; 32], &keyed).reply.status, Status::NoKeys);
    let anonymous = server_check(None, V, &[1; 32], &[2; 32], &ClientAuth::Anonymous);
    assert_eq!(anonymous.reply.status, Status::Ok);
}

#[test]
fn a_replayed_client_message_fails_against_a_fresh_server_nonce() {
    let (auth, _) = client_start(Some((&id("lab"), &secret(1))), V, &[1; 32], &[2; 32]).unwrap();
    assert_eq!(Keys::new().check(&[1; 32], &[2; 32], &auth).reply.status, Status::Ok);
    // The attacker replays the recorded bytes, with the same client nonce, to a new connection.
    let recorded = ClientAuth::decode(&auth.encode()).unwrap();
    assert_eq!(Keys::new().check(&[1; 32], &[5; 32], &recorded).reply.status, Status::Failed);
}

#[test]
fn a_replayed_server_answer_fails_against_a_fresh_client_nonce() {
    let key = (&id("lab"), &secret(1));
    let (auth, _) = client_start(Some(key), V, &[1; 32], &[2; 32]).unwrap();
    let recorded = Keys::new().check(&[1; 32], &[2; 32], &auth).reply;
    // A fake server reuses the old server nonce and answer against a client's new nonce.
    let (_, pending) = client_start(Some(key), V, &[6; 32], &[2; 32]).unwrap();
    assert_eq!(pending.finish(&recorded).unwrap_err(), AuthError::ServerProof);
}

#[test]
fn a_reflected_challenge_or_tag_is_refused() {
    let key = (&id("lab"), &secret(1));
    // The "server" echoes the client's own nonce.
    assert_eq!(client_start(Some(key), V, &[1; 32], &[1; 32]).unwrap_err(), AuthError::Reflected);
    // The "server" sends the client's tag back as its proof.
    let (auth, pending) = client_start(Some(key), V, &[1; 32], &[2; 32]).unwrap();
    let ClientAuth::Keyed { tag, .. } = auth else { panic!() };
    let reflected = ServerAuth { status: Status::Ok, tag };
    assert_eq!(pending.finish(&reflected).unwrap_err(), AuthError::ServerProof);
    // An "ok" without a proof fails a keyed client too.
    let (_, pending) = client_start(Some(key), V, &[1; 32], &[2; 32]).unwrap();
    let bare = ServerAuth { status: Status::Ok, tag: [0; 32] };
    assert_eq!(pending.finish(&bare).unwrap_err(), AuthError::ServerProof);
}

#[test]
fn the_version_is_part_of_the_transcript() {
    let (nc, ns, s, k) = ([1; 32], [2; 32], secret(1), id("lab"));
    let t = |version| Transcript { version, id: &k, client_nonce: &nc, server_nonce: &ns };
    assert_ne!(t(V).client_tag(&s), t(V - 1).client_tag(&s));
    assert_ne!(t(V).client_tag(&s), t(V).server_tag(&s, &[0; 32]), "roles differ");
}

#[test]
fn every_truncation_of_both_messages_is_refused() {
    let keyed = ClientAuth::Keyed { id: id("lab"), tag: [7; 32] }.encode();
    for len in 0..CLIENT_AUTH_LEN {
        let err = ClientAuth::decode(&keyed[..len]).unwrap_err();
        assert_eq!(err, AuthError::Short { len, want: CLIENT_AUTH_LEN });
    }
    let reply = ServerAuth { status: Status::Ok, tag: [7; 32] }.encode();
    for len in 0..SERVER_AUTH_LEN {
        assert!(ServerAuth::decode(&reply[..len]).is_err(), "{len}");
    }
}

#[test]
fn client_auth_has_the_documented_layout() {
    let bytes = ClientAuth::Keyed { id: id("ab"), tag: [0xEE; 32] }.encode();
    let mut expected = vec![1, 2, b'a', b'b'];
    expected.extend([0; 62]);
    expected.extend([0xEE; 32]);
    assert_eq!(bytes.to_vec(), expected);
    assert_eq!(ClientAuth::Anonymous.encode(), [0; CLIENT_AUTH_LEN]);
    let reply = ServerAuth { status: Status::NoKeys, tag: [0; 32] }.encode();
    assert_eq!(&reply[..5], b"AUTH\x03");
}

#[test]
fn oversize_and_malformed_fields_are_refused() {
    let good = ClientAuth::Keyed { id: id("lab"), tag: [7; 32] }.encode();
    let broken = |at: usize, v: u8| {
        let mut b = good;
        b[at] = v;
        ClientAuth::decode(&b)
    };
    for len in [0u8, 65, 200, 255] {
        assert!(broken(1, len).is_err(), "key id length {len}");
    }
    assert!(broken(0, 2).is_err(), "mode 2");
    assert!(broken(2, b' ').is_err(), "a space in the id");
    assert!(broken(2 + 10, 1).is_err(), "junk in the padding");
    assert!(broken(2, 0xFF).is_err(), "not UTF-8");
    let mut anon = [0u8; CLIENT_AUTH_LEN];
    anon[CLIENT_AUTH_LEN - 1] = 1;
    assert!(ClientAuth::decode(&anon).is_err(), "an anonymous message with a tag");
    let mut reply = ServerAuth { status: Status::Ok, tag: [0; 32] }.encode();
    reply[4] = 9;
    assert!(ServerAuth::decode(&reply).is_err());
    assert!(KeyId::new(&"a".repeat(65)).is_err());
    assert!(KeyId::new(&"a".repeat(64)).is_ok());
    assert_eq!(Secret::new(vec![0; 31]).unwrap_err(), AuthError::ShortSecret { len: 31 });
    assert!(Secret::new(vec![0; MAX_SECRET + 1]).is_err());
}

#[test]
fn secrets_and_session_keys_never_print() {
    let s = secret(0x41);
    assert_eq!(format!("{s:?}"), "Secret(<redacted>)");
    let (verdict, _) = exchange(Some((&id("lab"), &secret(1))), [1; 32], [2; 32]);
    let shown = format!("{verdict:?}");
    assert!(shown.contains("SessionKey(<redacted>)"), "{shown}");
    let (_, pending) = client_start(Some((&id("lab"), &s)), V, &[1; 32], &[2; 32]).unwrap();
    assert!(!format!("{pending:?}").contains("65, 65"), "the pending state shows no key bytes");
}
