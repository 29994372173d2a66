//! Pre-shared-key authentication (protocol version 3): the two fixed-layout messages that
//! follow the hellos on a control connection, the tags they carry, and the session key that
//! authenticates the test's data connections. Pure: nonces come in as arguments, nothing
//! here reads a clock, a socket or the OS RNG. Built on RustCrypto's `hmac`, `sha2` and
//! `hkdf`; tags are compared in constant time (`hmac`'s `verify_slice`, `subtle`).
//!
//! # Handshake
//!
//! ```text
//! client                                              server
//!   hello  kind 1, version, Nc (32 random bytes)  ──▶
//!                                               ◀──  hello  kind 3, version, Ns (32 random bytes)
//!   ClientAuth (98 B): anonymous, or key id + Tc  ──▶
//!                                               ◀──  ServerAuth (37 B): "AUTH", status, Ts
//!   … frames (setup, accepted, …) as in version 2
//! ```
//!
//! With `K` the pre-shared key (≥ 32 bytes), `id` the key id and `v` the protocol version:
//!
//! - transcript `T = "tcplab-auth" ‖ v (u16 BE) ‖ len(id) (u8) ‖ id ‖ Nc ‖ Ns`;
//! - client tag `Tc = HMAC-SHA256(K, "client→server" ‖ T)`;
//! - server tag `Ts = HMAC-SHA256(K, "server→client" ‖ T ‖ Tc)`, sent only once `Tc` checked;
//! - session key `S = HKDF-SHA256(salt = Nc ‖ Ns, ikm = K, info = "tcplab session" ‖ T)`;
//! - a data connection (TCP or UDP flow) of the test sends its 44-byte data hello followed by
//!   `HMAC-SHA256(S, "tcplab data" ‖ token ‖ stream (u32 BE))` ([`crate::hello::DataHello`]);
//!   anonymous tests send 32 zero bytes there.
//!
//! Both nonces are fresh per connection on each side, so a recorded `ClientAuth` fails against
//! any other server nonce and a recorded `ServerAuth` against any other client nonce: replay
//! fails without a clock window. The role labels make a tag useless in the other direction
//! (a reflected `Tc` is not a `Ts`), and a client refuses a server nonce equal to its own.
//! An unknown key id and a wrong tag get the same answer ([`Status::Failed`]) after the same
//! work. What is not protected: confidentiality, and the integrity of the JSON frames after
//! the handshake (an on-path attacker who can rewrite the stream can rewrite the test).
//!
//! # Layouts
//!
//! `ClientAuth`, 98 bytes: mode (u8: 0 anonymous, 1 keyed) ‖ id length (u8, 0 anonymous,
//! 1 … 64 keyed) ‖ id (64 bytes, the id then zeros; `[A-Za-z0-9._-]`) ‖ `Tc` (32 bytes, zeros
//! when anonymous). `ServerAuth`, 37 bytes: `AUTH` ‖ status (u8) ‖ `Ts` (32 bytes, zeros unless
//! the status is ok and the client keyed). Read as a frame length, `AUTH` is over a GiB, so
//! a client can tell the answer from an error frame the server sent instead (busy).

use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;
use thiserror::Error;
use zeroize::Zeroizing;

use crate::hello::Token;

/// Bytes of a tag (HMAC-SHA256, untruncated).
pub const TAG_LEN: usize = 32;
/// Bytes of a nonce.
pub const NONCE_LEN: usize = 32;
/// Longest key id.
pub const MAX_KEY_ID: usize = 64;
/// Shortest pre-shared key (256 bits).
pub const MIN_SECRET: usize = 32;
/// Longest pre-shared key accepted (a bound, not a recommendation).
pub const MAX_SECRET: usize = 1024;
/// Bytes of a [`ClientAuth`].
pub const CLIENT_AUTH_LEN: usize = 2 + MAX_KEY_ID + TAG_LEN;
/// Bytes of a [`ServerAuth`].
pub const SERVER_AUTH_LEN: usize = 4 + 1 + TAG_LEN;
/// The first four bytes of a [`ServerAuth`].
pub const SERVER_AUTH_MAGIC: &[u8; 4] = b"AUTH";

type HmacSha256 = Hmac<Sha256>;

/// A pre-shared key: at least [`MIN_SECRET`] bytes, wiped on drop, never printed.
#[derive(Clone)]
pub struct Secret(Zeroizing<Vec<u8>>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl Secret {
    /// Takes `bytes` as a key; refuses fewer than [`MIN_SECRET`] or more than [`MAX_SECRET`].
    pub fn new(bytes: Vec<u8>) -> Result<Secret, AuthError> {
        let bytes = Zeroizing::new(bytes);
        if bytes.len() < MIN_SECRET {
            return Err(AuthError::ShortSecret { len: bytes.len() });
        }
        if bytes.len() > MAX_SECRET {
            return Err(AuthError::LongSecret { len: bytes.len() });
        }
        Ok(Secret(bytes))
    }

    /// The key's bytes (to encode it in a key file).
    pub fn expose(&self) -> &[u8] {
        &self.0
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC takes keys of any length; the error case cannot happen.
        <HmacSha256 as Mac>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable_mac())
    }
}

/// HMAC accepts every key length; this only satisfies the type.
fn unreachable_mac() -> HmacSha256 {
    #[allow(clippy::unwrap_used, reason = "HMAC-SHA256 accepts a 32-byte key")]
    <HmacSha256 as Mac>::new_from_slice(&[0u8; 32]).unwrap()
}

/// A key's name: 1 … [`MAX_KEY_ID`] of `[A-Za-z0-9._-]`. Not secret.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(String);

impl KeyId {
    /// Checks a key id.
    pub fn new(id: &str) -> Result<KeyId, AuthError> {
        let ok_char = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
        if id.is_empty() || id.len() > MAX_KEY_ID || !id.bytes().all(ok_char) {
            return Err(AuthError::BadKeyId);
        }
        Ok(KeyId(id.to_string()))
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for KeyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The key both ends derive once authenticated; authenticates data connections. Never printed.
#[derive(Clone)]
pub struct SessionKey(Zeroizing<[u8; 32]>);

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKey(<redacted>)")
    }
}

/// Why an authentication step failed (no secret in any message).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum AuthError {
    /// A key shorter than [`MIN_SECRET`].
    #[error("key is {len} bytes; at least {MIN_SECRET} (256 bits) are required")]
    ShortSecret { len: usize },
    /// A key longer than [`MAX_SECRET`].
    #[error("key is {len} bytes; at most {MAX_SECRET} are accepted")]
    LongSecret { len: usize },
    /// A key id that is empty, too long or has other characters than `[A-Za-z0-9._-]`.
    #[error("key id must be 1 to {MAX_KEY_ID} characters of A-Z a-z 0-9 . _ -")]
    BadKeyId,
    /// Fewer bytes than the message.
    #[error("authentication message too short: {len} of {want} bytes")]
    Short { len: usize, want: usize },
    /// A layout violation (mode, length, padding, magic, status).
    #[error("malformed authentication message: {what}")]
    Malformed { what: &'static str },
    /// The server's nonce equals the client's: a reflected challenge.
    #[error("the server echoed the client's nonce (reflected challenge)")]
    Reflected,
    /// The server did not prove it holds the key.
    #[error("the server failed to prove it holds the key (wrong server, or someone in between)")]
    ServerProof,
}

/// What a client presents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientAuth {
    /// No key.
    Anonymous,
    /// A key id and the client tag.
    Keyed {
        /// The key's id.
        id: KeyId,
        /// `Tc`.
        tag: [u8; TAG_LEN],
    },
}

impl ClientAuth {
    /// Exactly [`CLIENT_AUTH_LEN`] bytes.
    pub fn encode(&self) -> [u8; CLIENT_AUTH_LEN] {
        let mut out = [0u8; CLIENT_AUTH_LEN];
        if let ClientAuth::Keyed { id, tag } = self {
            out[0] = 1;
            out[1] = id.0.len() as u8;
            out[2..2 + id.0.len()].copy_from_slice(id.0.as_bytes());
            out[2 + MAX_KEY_ID..].copy_from_slice(tag);
        }
        out
    }

    /// Parses the first [`CLIENT_AUTH_LEN`] bytes of `buf`, strictly.
    pub fn decode(buf: &[u8]) -> Result<ClientAuth, AuthError> {
        let buf =
            buf.get(..CLIENT_AUTH_LEN).ok_or(AuthError::Short { len: buf.len(), want: CLIENT_AUTH_LEN })?;
        let (mode, len) = (buf[0], usize::from(buf[1]));
        let (id_field, tag) = (&buf[2..2 + MAX_KEY_ID], &buf[2 + MAX_KEY_ID..]);
        match mode {
            0 if len == 0 && buf[2..].iter().all(|&b| b == 0) => Ok(ClientAuth::Anonymous),
            0 => Err(AuthError::Malformed { what: "anonymous message with a key id or tag" }),
            1 if len == 0 || len > MAX_KEY_ID => Err(AuthError::Malformed { what: "key id length" }),
            1 => {
                if id_field[len..].iter().any(|&b| b != 0) {
                    return Err(AuthError::Malformed { what: "key id padding" });
                }
                let id = std::str::from_utf8(&id_field[..len])
                    .map_err(|_| AuthError::Malformed { what: "key id" })
                    .and_then(|s| KeyId::new(s).map_err(|_| AuthError::Malformed { what: "key id" }))?;
                Ok(ClientAuth::Keyed { id, tag: array(tag) })
            }
            _ => Err(AuthError::Malformed { what: "mode" }),
        }
    }
}

/// The server's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Authenticated (or anonymous on a server without keys).
    Ok = 0,
    /// The server takes only clients with a key; this one had none.
    Required = 1,
    /// Unknown key id or wrong tag (one answer for both).
    Failed = 2,
    /// The server has no keys; the client presented one.
    NoKeys = 3,
}

/// What the server answers to a [`ClientAuth`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAuth {
    /// The verdict.
    pub status: Status,
    /// `Ts` when the status is ok and the client keyed; zeros otherwise.
    pub tag: [u8; TAG_LEN],
}

impl ServerAuth {
    /// Exactly [`SERVER_AUTH_LEN`] bytes.
    pub fn encode(&self) -> [u8; SERVER_AUTH_LEN] {
        let mut out = [0u8; SERVER_AUTH_LEN];
        out[..4].copy_from_slice(SERVER_AUTH_MAGIC);
        out[4] = self.status as u8;
        out[5..].copy_from_slice(&self.tag);
        out
    }

    /// Parses the first [`SERVER_AUTH_LEN`] bytes of `buf`.
    pub fn decode(buf: &[u8]) -> Result<ServerAuth, AuthError> {
        let buf =
            buf.get(..SERVER_AUTH_LEN).ok_or(AuthError::Short { len: buf.len(), want: SERVER_AUTH_LEN })?;
        if &buf[..4] != SERVER_AUTH_MAGIC {
            return Err(AuthError::Malformed { what: "magic" });
        }
        let status = match buf[4] {
            0 => Status::Ok,
            1 => Status::Required,
            2 => Status::Failed,
            3 => Status::NoKeys,
            _ => return Err(AuthError::Malformed { what: "status" }),
        };
        Ok(ServerAuth { status, tag: array(&buf[5..]) })
    }

    fn refuse(status: Status) -> ServerAuth {
        ServerAuth { status, tag: [0; TAG_LEN] }
    }
}

/// Everything both tags and the session key are bound to.
#[derive(Debug, Clone, Copy)]
pub struct Transcript<'a> {
    /// The protocol version both hellos carried.
    pub version: u16,
    /// The key id the client named.
    pub id: &'a KeyId,
    /// The client's nonce.
    pub client_nonce: &'a [u8; NONCE_LEN],
    /// The server's nonce.
    pub server_nonce: &'a [u8; NONCE_LEN],
}

impl Transcript<'_> {
    fn feed(&self, mac: &mut impl Mac) {
        mac.update(b"tcplab-auth");
        mac.update(&self.version.to_be_bytes());
        mac.update(&[self.id.0.len() as u8]);
        mac.update(self.id.0.as_bytes());
        mac.update(self.client_nonce);
        mac.update(self.server_nonce);
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = b"tcplab-auth".to_vec();
        out.extend_from_slice(&self.version.to_be_bytes());
        out.push(self.id.0.len() as u8);
        out.extend_from_slice(self.id.0.as_bytes());
        out.extend_from_slice(self.client_nonce);
        out.extend_from_slice(self.server_nonce);
        out
    }

    fn client_mac(&self, key: &Secret) -> HmacSha256 {
        let mut mac = key.mac();
        mac.update("client→server".as_bytes());
        self.feed(&mut mac);
        mac
    }

    fn server_mac(&self, key: &Secret, client_tag: &[u8; TAG_LEN]) -> HmacSha256 {
        let mut mac = key.mac();
        mac.update("server→client".as_bytes());
        self.feed(&mut mac);
        mac.update(client_tag);
        mac
    }

    /// `Tc`.
    pub fn client_tag(&self, key: &Secret) -> [u8; TAG_LEN] {
        self.client_mac(key).finalize().into_bytes().into()
    }

    /// `Ts`.
    pub fn server_tag(&self, key: &Secret, client_tag: &[u8; TAG_LEN]) -> [u8; TAG_LEN] {
        self.server_mac(key, client_tag).finalize().into_bytes().into()
    }

    /// The session key `S`.
    pub fn session_key(&self, key: &Secret) -> SessionKey {
        let mut salt = [0u8; 2 * NONCE_LEN];
        salt[..NONCE_LEN].copy_from_slice(self.client_nonce);
        salt[NONCE_LEN..].copy_from_slice(self.server_nonce);
        let hk = Hkdf::<Sha256>::new(Some(&salt), key.expose());
        let mut info = b"tcplab session".to_vec();
        info.extend(self.bytes());
        let mut okm = Zeroizing::new([0u8; 32]);
        // 32 bytes is far below HKDF-SHA256's 8160-byte limit.
        let _ = hk.expand(&info, okm.as_mut());
        SessionKey(okm)
    }
}

/// The client's side, between sending its [`ClientAuth`] and reading the [`ServerAuth`].
#[derive(Debug)]
pub struct ClientPending {
    keyed: Option<Sent>,
    version: u16,
}

/// What a keyed client sent, to check the server's answer against.
#[derive(Debug)]
struct Sent {
    id: KeyId,
    secret: Secret,
    tag: [u8; TAG_LEN],
    nc: [u8; NONCE_LEN],
    ns: [u8; NONCE_LEN],
}

/// How a server finds a key by id.
pub type Lookup<'f, 'k> = &'f dyn Fn(&KeyId) -> Option<&'k Secret>;

/// Client: what to send after the server's hello (nonce `ns`), with `key` or anonymously.
pub fn client_start(
    key: Option<(&KeyId, &Secret)>,
    version: u16,
    nc: &[u8; NONCE_LEN],
    ns: &[u8; NONCE_LEN],
) -> Result<(ClientAuth, ClientPending), AuthError> {
    if nc.ct_eq(ns).into() {
        return Err(AuthError::Reflected);
    }
    let Some((id, secret)) = key else {
        return Ok((ClientAuth::Anonymous, ClientPending { keyed: None, version }));
    };
    let t = Transcript { version, id, client_nonce: nc, server_nonce: ns };
    let tag = t.client_tag(secret);
    let sent = Sent { id: id.clone(), secret: secret.clone(), tag, nc: *nc, ns: *ns };
    let pending = ClientPending { keyed: Some(sent), version };
    Ok((ClientAuth::Keyed { id: id.clone(), tag }, pending))
}

/// How a client's handshake ended.
#[derive(Debug)]
pub enum ClientOutcome {
    /// Authenticated both ways: the session key.
    Keyed(SessionKey),
    /// Anonymous on a server that allows it.
    Anonymous,
    /// The server said no.
    Refused(Status),
}

impl ClientPending {
    /// Checks the server's answer; a keyed client accepts only a valid `Ts`.
    pub fn finish(self, reply: &ServerAuth) -> Result<ClientOutcome, AuthError> {
        if reply.status != Status::Ok {
            return Ok(ClientOutcome::Refused(reply.status));
        }
        let Some(sent) = self.keyed else {
            return Ok(ClientOutcome::Anonymous);
        };
        let t = Transcript {
            version: self.version,
            id: &sent.id,
            client_nonce: &sent.nc,
            server_nonce: &sent.ns,
        };
        t.server_mac(&sent.secret, &sent.tag).verify_slice(&reply.tag).map_err(|_| AuthError::ServerProof)?;
        Ok(ClientOutcome::Keyed(t.session_key(&sent.secret)))
    }
}

/// How a server judged a [`ClientAuth`].
#[derive(Debug)]
pub struct ServerVerdict {
    /// What to send back.
    pub reply: ServerAuth,
    /// On success with a key: the key id and the session key.
    pub session: Option<(KeyId, SessionKey)>,
}

/// Server: judges `auth`. `keys` is `None` on a server without keys (anonymous only), else
/// the lookup of a key by id. An unknown id costs the same HMAC as a known one.
pub fn server_check<'k>(
    keys: Option<Lookup<'_, 'k>>,
    version: u16,
    nc: &[u8; NONCE_LEN],
    ns: &[u8; NONCE_LEN],
    auth: &ClientAuth,
) -> ServerVerdict {
    let refuse = |status| ServerVerdict { reply: ServerAuth::refuse(status), session: None };
    let (lookup, id, tag) = match (keys, auth) {
        (None, ClientAuth::Anonymous) => return refuse(Status::Ok),
        (None, ClientAuth::Keyed { .. }) => return refuse(Status::NoKeys),
        (Some(_), ClientAuth::Anonymous) => return refuse(Status::Required),
        (Some(lookup), ClientAuth::Keyed { id, tag }) => (lookup, id, tag),
    };
    let t = Transcript { version, id, client_nonce: nc, server_nonce: ns };
    let dummy = Secret(Zeroizing::new(vec![0u8; MIN_SECRET]));
    let found = lookup(id);
    let secret = found.unwrap_or(&dummy);
    let good = t.client_mac(secret).verify_slice(tag).is_ok();
    if !good || found.is_none() || nc.ct_eq(ns).into() {
        return refuse(Status::Failed);
    }
    let reply = ServerAuth { status: Status::Ok, tag: t.server_tag(secret, tag) };
    ServerVerdict { reply, session: Some((id.clone(), t.session_key(secret))) }
}

/// The tag a data connection of the test with `token` sends for stream `stream`.
pub fn data_tag(key: &SessionKey, token: &Token, stream: u32) -> [u8; TAG_LEN] {
    data_mac(key, token, stream).finalize().into_bytes().into()
}

/// Checks a data connection's tag in constant time.
pub fn verify_data_tag(key: &SessionKey, token: &Token, stream: u32, tag: &[u8; TAG_LEN]) -> bool {
    data_mac(key, token, stream).verify_slice(tag).is_ok()
}

fn data_mac(key: &SessionKey, token: &Token, stream: u32) -> HmacSha256 {
    let mut mac = <HmacSha256 as Mac>::new_from_slice(key.0.as_ref()).unwrap_or_else(|_| unreachable_mac());
    mac.update(b"tcplab data");
    mac.update(&token.0);
    mac.update(&stream.to_be_bytes());
    mac
}

fn array<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&b[..N]);
    out
}

#[cfg(test)]
#[path = "auth_tests.rs"]
mod tests;
