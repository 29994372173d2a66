//! Pre-shared-key authentication, engine side: the server's judgement of a client (the
//! client's side is [`crate::session::client::Handshake`]; the messages and tags are
//! [`wire::auth`]'s), the keys file ([`keys`]), the key store a
//! server re-reads on SIGHUP, and how data connections prove they belong to their test.

pub mod keys;

use std::sync::{Arc, RwLock};

use wire::auth::{self as wa, ClientAuth, SessionKey, Status};
use wire::{DataHello, Token, DATA_HELLO_LEN, PROTOCOL_VERSION};

pub use keys::{ClientKey, Keyring};
pub use wire::auth::{KeyId, Secret};

/// The keys a server checks against; replaced whole when the keys file is re-read.
#[derive(Debug, Default)]
pub struct KeyStore(RwLock<Arc<Keyring>>);

impl KeyStore {
    /// A store holding `ring`.
    pub fn new(ring: Keyring) -> KeyStore {
        KeyStore(RwLock::new(Arc::new(ring)))
    }

    /// The keys now (a test keeps the snapshot it authenticated with).
    pub fn current(&self) -> Arc<Keyring> {
        self.0.read().map(|g| g.clone()).unwrap_or_else(|p| p.into_inner().clone())
    }

    /// Replaces the keys.
    pub fn replace(&self, ring: Keyring) {
        let mut g = self.0.write().unwrap_or_else(|p| p.into_inner());
        *g = Arc::new(ring);
    }
}

/// How a test's data connections open: the token and, in an authenticated test, the session
/// key their tag is made with.
#[derive(Debug, Clone)]
pub struct DataAuth {
    /// The test's token.
    pub token: Token,
    /// The session key (`None`: anonymous test, zero tags).
    pub key: Option<SessionKey>,
}

impl DataAuth {
    /// The opening bytes of data connection `stream`.
    pub fn hello(&self, stream: u32) -> [u8; DATA_HELLO_LEN] {
        let tag = self.key.as_ref().map_or([0; wa::TAG_LEN], |k| wa::data_tag(k, &self.token, stream));
        DataHello::new(self.token, stream, tag).encode()
    }

    /// Server: whether `hello` carries this test's token and a valid tag.
    pub fn admits(&self, hello: &DataHello) -> bool {
        hello.token == self.token
            && hello.version == PROTOCOL_VERSION
            && self
                .key
                .as_ref()
                .is_none_or(|k| wa::verify_data_tag(k, &hello.token, hello.stream, &hello.tag))
    }
}

/// What a client says when the server refuses it.
pub(crate) fn refusal(status: Status, server: &str, key: Option<&ClientKey>) -> String {
    match status {
        Status::Required => format!(
            "authentication required: {server} serves only clients with a key (--key-file FILE or TCPLAB_KEY=ID:SECRET)"
        ),
        Status::Failed => format!(
            "authentication failed: {server} does not accept key '{}' (unknown id or wrong secret)",
            key.map(|k| k.id.as_str()).unwrap_or("?")
        ),
        Status::NoKeys => format!(
            "{server} does not use keys (started without --keys): leave out --key-file and TCPLAB_KEY to test anonymously"
        ),
        Status::Ok => format!("{server}: authentication ended without a verdict"),
    }
}

fn lookup<'k>(keys: Option<&'k Keyring>) -> impl Fn(&KeyId) -> Option<&'k wa::Secret> {
    move |id| keys.and_then(|k| k.get(id)).map(|e| &e.secret)
}

/// Who the server is talking to once authenticated.
#[derive(Debug)]
pub struct Peer {
    /// The key's id; `None` for an anonymous client.
    pub key_id: Option<KeyId>,
    /// Its class's name (`anonymous` without a key).
    pub class: String,
    /// The session key of a keyed client.
    pub session: Option<SessionKey>,
}

/// Why a server did not authenticate a client.
#[derive(Debug)]
pub struct Unauthenticated {
    /// The key id the client named, if any.
    pub key_id: Option<KeyId>,
    /// For the log.
    pub reason: String,
    /// An error frame to send: when the client's message never came or was malformed (a
    /// verdict has been answered already).
    pub tell: Option<wire::Rejection>,
}

fn unanswered(code: wire::ErrorCode, reason: String) -> Unauthenticated {
    Unauthenticated { key_id: None, tell: Some(wire::Rejection::new(code, reason.clone())), reason }
}

/// How a server judged a client's authentication: the answer to send (none to a malformed
/// message: [`Unauthenticated::tell`] says why instead), and who the client is, or why it is
/// refused.
#[derive(Debug)]
pub struct Judged {
    /// The [`wire::auth::ServerAuth`] to send.
    pub reply: Option<[u8; wa::SERVER_AUTH_LEN]>,
    /// The client, when accepted.
    pub peer: Result<Peer, Unauthenticated>,
}

/// Server: judges the client's authentication message `buf` (after the hellos: nonces `nc`
/// received, `ns` sent). Reads no socket and no clock, so the server's acceptor runs it for
/// every connection before any peer gets a thread.
pub fn judge(keys: Option<&Keyring>, (nc, ns): (&[u8; 32], &[u8; 32]), buf: &[u8]) -> Judged {
    let auth = match ClientAuth::decode(buf) {
        Ok(a) => a,
        Err(e) => {
            return Judged { reply: None, peer: Err(unanswered(wire::ErrorCode::BadMessage, e.to_string())) }
        }
    };
    let claimed = match &auth {
        ClientAuth::Keyed { id, .. } => Some(id.clone()),
        ClientAuth::Anonymous => None,
    };
    let find = lookup(keys);
    let find: Option<wa::Lookup<'_, '_>> = keys.map(|_| &find as _);
    let verdict = wa::server_check(find, PROTOCOL_VERSION, nc, ns, &auth);
    let reply = Some(verdict.reply.encode());
    let why = match verdict.reply.status {
        Status::Ok => None,
        Status::Required => Some("authentication required (no key)"),
        Status::Failed => Some("authentication failed (unknown key id or wrong secret)"),
        Status::NoKeys => Some("client presented a key; this server has none"),
    };
    if let Some(why) = why {
        return Judged {
            reply,
            peer: Err(Unauthenticated { key_id: claimed, reason: why.into(), tell: None }),
        };
    }
    let class = match (&verdict.session, keys) {
        (Some((id, _)), Some(k)) => k.get(id).map(|e| e.class.clone()).unwrap_or_default(),
        _ => crate::limits::ANONYMOUS.to_string(),
    };
    let (key_id, session) = verdict.session.map_or((None, None), |(id, s)| (Some(id), Some(s)));
    Judged { reply, peer: Ok(Peer { key_id, class, session }) }
}
