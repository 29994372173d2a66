//! The fixed-layout hello that opens every connection to a tcplab server.
//!
//! Layout (44 bytes, big-endian):
//!
//! | offset | len | field |
//! |---|---|---|
//! | 0 | 6 | magic `TCPLAB` |
//! | 6 | 1 | kind: 1 control (client), 2 data, 3 control (server reply) |
//! | 7 | 1 | flags: [`MACHINE_FLAG`], else zero |
//! | 8 | 2 | protocol version |
//! | 10 | 2 | reserved, zero |
//! | 12 | 32 | body: a nonce (control) or token (16) + stream index (u32) + zeros (data) |
//!
//! Since version 3 a data connection's hello is followed by a 32-byte tag ([`DataHello`],
//! 76 bytes in all, in one UDP datagram for a UDP flow): an HMAC under the session key of an
//! authenticated test ([`crate::auth`]), zeros in an anonymous one.
//!
//! A client may set [`MACHINE_FLAG`] in its control hello to ask which machine the server runs
//! on; a server that knows the flag sets it in its reply too and follows the reply with a
//! 16-byte machine id ([`machine_id`]: the Linux boot id hashed with the client's nonce), so
//! that a client can tell servers that are one machine apart. Servers that predate the flag
//! ignore the byte (it was reserved and never checked) and send the plain 44 bytes; a client
//! that does not set it gets the plain 44 bytes from every server: no version change.

use thiserror::Error;

/// Bytes of every hello.
pub const HELLO_LEN: usize = 44;
/// The protocol version this build speaks. Both ends check it in the hello and refuse any
/// other, so a change to a message's fields or meaning needs a new number.
///
/// - 1: messages carried the archive's own structs (`results::TestSpec` …).
/// - 2: messages carry the protocol's own types ([`crate::ctrl`]); the client checks the
///   server's hello before sending `setup`.
/// - 3: pre-shared-key authentication after the hellos ([`crate::auth`]); data hellos carry a
///   tag ([`DataHello`]); error code `limit`.
pub const PROTOCOL_VERSION: u16 = 3;
/// Bytes of a data connection's opening: its hello and the tag ([`DataHello`]).
pub const DATA_HELLO_LEN: usize = HELLO_LEN + crate::auth::TAG_LEN;
/// Flag in byte 7: the client asks for, or the server sends, a machine id after the hello.
pub const MACHINE_FLAG: u8 = 0x01;
/// Bytes of the machine id that follows a server hello carrying [`MACHINE_FLAG`].
pub const MACHINE_ID_LEN: usize = 16;
const MAGIC: &[u8; 6] = b"TCPLAB";
const KIND: usize = 6;
const FLAGS: usize = 7;
const VERSION: std::ops::Range<usize> = 8..10;
const BODY: std::ops::Range<usize> = 12..44;
const TOKEN: std::ops::Range<usize> = 12..28;
const STREAM: std::ops::Range<usize> = 28..32;

/// A test's random token: 128 bits, shown to data connections as proof of membership.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Token(pub [u8; 16]);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(")?;
        for b in &self.0[..4] {
            write!(f, "{b:02x}")?;
        }
        f.write_str("…)")
    }
}

impl Token {
    /// Lower-case hex, as carried in JSON messages.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Parses 32 hex digits.
    pub fn from_hex(s: &str) -> Option<Token> {
        if s.len() != 32 || !s.is_ascii() {
            return None;
        }
        let mut out = [0u8; 16];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(Token(out))
    }
}

/// What a connection says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelloKind {
    /// A client opening a control connection, with its nonce.
    Control { nonce: [u8; 32] },
    /// A data connection of the test holding `token`, stream number `stream`.
    Data { token: Token, stream: u32 },
    /// The server's answer to a control hello, with its nonce.
    Server { nonce: [u8; 32] },
}

/// A parsed hello.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    /// Protocol version of the sender.
    pub version: u16,
    /// Byte 7: [`MACHINE_FLAG`] or zero.
    pub flags: u8,
    /// Kind and body.
    pub kind: HelloKind,
}

/// Why 44 bytes are not a hello.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum HelloError {
    /// The first six bytes are not `TCPLAB`: not a tcplab peer (an iperf3 client, a port scan).
    #[error("not a tcplab peer (bad magic)")]
    BadMagic,
    /// The kind byte is not 1, 2 or 3.
    #[error("unknown hello kind {kind}")]
    UnknownKind { kind: u8 },
    /// Fewer bytes than a hello.
    #[error("hello too short: {len} bytes")]
    Short { len: usize },
    /// A control or server hello where a data hello was expected.
    #[error("not a data hello")]
    NotData,
}

impl Hello {
    /// A client's control hello at this build's version.
    pub fn control(nonce: [u8; 32]) -> Hello {
        Hello { version: PROTOCOL_VERSION, flags: 0, kind: HelloKind::Control { nonce } }
    }

    /// The server's reply at this build's version.
    pub fn server(nonce: [u8; 32]) -> Hello {
        Hello { version: PROTOCOL_VERSION, flags: 0, kind: HelloKind::Server { nonce } }
    }

    /// A data connection's hello.
    pub fn data(token: Token, stream: u32) -> Hello {
        Hello { version: PROTOCOL_VERSION, flags: 0, kind: HelloKind::Data { token, stream } }
    }

    /// Encodes into exactly [`HELLO_LEN`] bytes.
    pub fn encode(&self) -> [u8; HELLO_LEN] {
        let mut out = [0u8; HELLO_LEN];
        out[..6].copy_from_slice(MAGIC);
        out[VERSION].copy_from_slice(&self.version.to_be_bytes());
        out[FLAGS] = self.flags;
        match self.kind {
            HelloKind::Control { nonce } => {
                out[KIND] = 1;
                out[BODY].copy_from_slice(&nonce);
            }
            HelloKind::Data { token, stream } => {
                out[KIND] = 2;
                out[TOKEN].copy_from_slice(&token.0);
                out[STREAM].copy_from_slice(&stream.to_be_bytes());
            }
            HelloKind::Server { nonce } => {
                out[KIND] = 3;
                out[BODY].copy_from_slice(&nonce);
            }
        }
        out
    }

    /// Parses the first [`HELLO_LEN`] bytes of `buf`.
    pub fn decode(buf: &[u8]) -> Result<Hello, HelloError> {
        let Some(buf) = buf.get(..HELLO_LEN) else {
            if buf.len() >= MAGIC.len() && &buf[..MAGIC.len()] != MAGIC {
                return Err(HelloError::BadMagic);
            }
            return Err(HelloError::Short { len: buf.len() });
        };
        if &buf[..6] != MAGIC {
            return Err(HelloError::BadMagic);
        }
        let version = u16::from_be_bytes([buf[8], buf[9]]);
        let body = |r: std::ops::Range<usize>| buf[r].to_vec();
        let kind = match buf[KIND] {
            1 => HelloKind::Control { nonce: array32(&body(BODY)) },
            2 => HelloKind::Data {
                token: Token(array16(&body(TOKEN))),
                stream: u32::from_be_bytes([buf[28], buf[29], buf[30], buf[31]]),
            },
            3 => HelloKind::Server { nonce: array32(&body(BODY)) },
            kind => return Err(HelloError::UnknownKind { kind }),
        };
        Ok(Hello { version, flags: buf[FLAGS], kind })
    }

    /// The same hello with `flag` set.
    pub fn with(self, flag: u8) -> Hello {
        Hello { flags: self.flags | flag, ..self }
    }

    /// Whether `flag` is set.
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// The machine id a server sends after its hello to a client that set [`MACHINE_FLAG`]: the
/// first 16 bytes of SHA-256 over a label, the client's nonce and the server's boot id
/// (`/proc/sys/kernel/random/boot_id`). Two servers on one machine (one kernel, one boot)
/// give one client the same id; the boot id itself is not disclosed, and a nonce the
/// client did not choose gives ids that match nothing else.
pub fn machine_id(boot_id: &str, client_nonce: &[u8; 32]) -> [u8; MACHINE_ID_LEN] {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new()
        .chain_update(b"tcplab machine id")
        .chain_update(client_nonce)
        .chain_update(boot_id.trim().as_bytes())
        .finalize();
    let mut out = [0u8; MACHINE_ID_LEN];
    out.copy_from_slice(&digest[..MACHINE_ID_LEN]);
    out
}

/// A data connection's opening since version 3: the data hello and a 32-byte tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataHello {
    /// Protocol version of the sender.
    pub version: u16,
    /// The test's token.
    pub token: Token,
    /// Stream number.
    pub stream: u32,
    /// [`crate::auth::data_tag`] in an authenticated test, zeros in an anonymous one.
    pub tag: [u8; crate::auth::TAG_LEN],
}

impl DataHello {
    /// At this build's version.
    pub fn new(token: Token, stream: u32, tag: [u8; crate::auth::TAG_LEN]) -> DataHello {
        DataHello { version: PROTOCOL_VERSION, token, stream, tag }
    }

    /// Exactly [`DATA_HELLO_LEN`] bytes.
    pub fn encode(&self) -> [u8; DATA_HELLO_LEN] {
        let mut hello = Hello::data(self.token, self.stream);
        hello.version = self.version;
        let mut out = [0u8; DATA_HELLO_LEN];
        out[..HELLO_LEN].copy_from_slice(&hello.encode());
        out[HELLO_LEN..].copy_from_slice(&self.tag);
        out
    }

    /// Parses the first [`DATA_HELLO_LEN`] bytes of `buf`: a data hello and its tag.
    pub fn decode(buf: &[u8]) -> Result<DataHello, HelloError> {
        let hello = Hello::decode(buf)?;
        let HelloKind::Data { token, stream } = hello.kind else {
            return Err(HelloError::NotData);
        };
        let tag = buf.get(HELLO_LEN..DATA_HELLO_LEN).ok_or(HelloError::Short { len: buf.len() })?;
        let mut out = [0u8; crate::auth::TAG_LEN];
        out.copy_from_slice(tag);
        Ok(DataHello { version: hello.version, token, stream, tag: out })
    }
}

fn array32(b: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(&b[..32]);
    out
}

fn array16(b: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    out.copy_from_slice(&b[..16]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_hello_has_the_documented_layout() {
        let token = Token([0xAB; 16]);
        let bytes = Hello::data(token, 7).encode();
        let mut expected = Vec::new();
        expected.extend_from_slice(b"TCPLAB");
        expected.extend_from_slice(&[2, 0, 0, 3, 0, 0]);
        expected.extend_from_slice(&[0xAB; 16]);
        expected.extend_from_slice(&[0, 0, 0, 7]);
        expected.extend_from_slice(&[0; 12]);
        assert_eq!(bytes.to_vec(), expected);
        assert_eq!(Hello::decode(&bytes), Ok(Hello::data(token, 7)));
    }

    #[test]
    fn a_data_hello_carries_its_tag_after_the_44_bytes() {
        let token = Token([0xAB; 16]);
        let d = DataHello::new(token, 7, [0x5A; 32]);
        let bytes = d.encode();
        assert_eq!(bytes[..HELLO_LEN], Hello::data(token, 7).encode());
        assert_eq!(bytes[HELLO_LEN..], [0x5A; 32]);
        assert_eq!(DataHello::decode(&bytes), Ok(d));
        for len in 0..DATA_HELLO_LEN {
            assert!(DataHello::decode(&bytes[..len]).is_err(), "{len} bytes accepted");
        }
        assert_eq!(DataHello::decode(&Hello::control([0; 32]).encode()), Err(HelloError::NotData));
    }

    #[test]
    fn control_and_server_hellos_round_trip() {
        let nonce = [5u8; 32];
        for h in [Hello::control(nonce), Hello::server(nonce)] {
            assert_eq!(Hello::decode(&h.encode()), Ok(h));
        }
    }

    #[test]
    fn the_machine_flag_is_byte_7_and_round_trips() {
        let h = Hello::control([5; 32]).with(MACHINE_FLAG);
        let bytes = h.encode();
        assert_eq!(bytes[7], 1);
        assert_eq!(Hello::decode(&bytes), Ok(h));
        assert!(h.has(MACHINE_FLAG) && !Hello::control([5; 32]).has(MACHINE_FLAG));
        // A hello without the flag is byte for byte what protocol 3 always sent.
        assert_eq!(Hello::server([5; 32]).encode()[7], 0);
    }

    #[test]
    fn one_boot_gives_one_machine_id_per_nonce() {
        let boot = "0f8fad5b-d9cb-469f-a165-70867728950e";
        let id = machine_id(boot, &[1; 32]);
        assert_eq!(id, machine_id(&format!("{boot}\n"), &[1; 32]));
        assert_ne!(id, machine_id("7c9e6679-7425-40de-944b-e07fc1f90ae7", &[1; 32]));
        assert_ne!(id, machine_id(boot, &[2; 32]));
    }

    #[test]
    fn an_iperf3_cookie_is_bad_magic() {
        let cookie = b"abcdefghijklmnopqrstuvwxyz234567abcdefghijkl";
        assert_eq!(Hello::decode(cookie), Err(HelloError::BadMagic));
    }

    #[test]
    fn short_and_unknown_kinds_are_rejected() {
        assert_eq!(Hello::decode(b"TCP"), Err(HelloError::Short { len: 3 }));
        let mut b = Hello::control([0; 32]).encode();
        b[6] = 9;
        assert_eq!(Hello::decode(&b), Err(HelloError::UnknownKind { kind: 9 }));
    }

    #[test]
    fn token_hex_round_trips_and_rejects_junk() {
        let t = Token([0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0, 1, 2, 3, 4, 5, 6, 255]);
        assert_eq!(Token::from_hex(&t.to_hex()), Some(t));
        assert_eq!(Token::from_hex("zz"), None);
        assert_eq!(Token::from_hex(&"é".repeat(16)), None);
    }
}
