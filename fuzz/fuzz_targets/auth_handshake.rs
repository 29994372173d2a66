//! Coverage-guided fuzzing of the authentication a server decodes before anything else: the
//! fixed-layout `ClientAuth` (and the client's `ServerAuth` and data hello), then the server's
//! verdict on whatever decodes. Nothing may panic; a verdict on made-up bytes is never ok.
//! Run: `cargo fuzz run auth_handshake` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::auth::{server_check, ClientAuth, KeyId, Secret, ServerAuth, Status};

fuzz_target!(|data: &[u8]| {
    let _ = ServerAuth::decode(data);
    let _ = wire::DataHello::decode(data);
    let Ok(auth) = ClientAuth::decode(data) else { return };
    assert_eq!(&auth.encode()[..], &data[..wire::auth::CLIENT_AUTH_LEN]);
    let (Ok(id), Ok(secret)) = (KeyId::new("lab"), Secret::new(vec![7; 32])) else { return };
    let lookup = |k: &KeyId| (k == &id).then_some(&secret);
    let verdict = server_check(Some(&lookup), wire::PROTOCOL_VERSION, &[1; 32], &[2; 32], &auth);
    assert_ne!(verdict.reply.status, Status::Ok, "made-up bytes authenticated");
});
