//! The keys file: pre-shared keys by id, each with a limits class, and the classes.
//!
//! One entry per line; `#` starts a comment; words are separated by blanks:
//!
//! ```text
//! # classes (optional): caps a key's tests; a key without class= is in class "default"
//! class lab max-duration=60 max-rate=1G max-streams=8 max-concurrent=2 tests-per-minute=30
//! # keys: id, secret (base64 or hex, at least 32 bytes), class
//! key alice 3q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= class=lab
//! ```
//!
//! Durations are seconds (`60` or `60s`), rates take k/M/G (powers of 1000). A secret made
//! only of hex digits is hex, anything else standard base64 (`tcplab keygen` writes base64).
//! Class `default` exists without caps unless the file defines it. Every error names its line
//! and never shows a secret.

use std::collections::BTreeMap;
use std::path::Path;

use wire::auth::{KeyId, Secret};

use crate::limits::Policy;

/// The class of a key that names none.
pub const DEFAULT_CLASS: &str = "default";

/// A server's key.
#[derive(Debug, Clone)]
pub struct KeyEntry {
    /// The secret.
    pub secret: Secret,
    /// Its class's name.
    pub class: String,
}

/// Keys and classes, as read from a keys file.
#[derive(Debug, Clone, Default)]
pub struct Keyring {
    keys: BTreeMap<KeyId, KeyEntry>,
    classes: BTreeMap<String, Policy>,
}

impl Keyring {
    /// The key with id `id`.
    pub fn get(&self, id: &KeyId) -> Option<&KeyEntry> {
        self.keys.get(id)
    }

    /// The policy of class `name` (every key's class exists: checked when parsed).
    pub fn class(&self, name: &str) -> Policy {
        self.classes.get(name).cloned().unwrap_or_else(|| Policy::open(name))
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// No keys at all.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// A client's key: id and secret.
#[derive(Debug, Clone)]
pub struct ClientKey {
    /// The id the server knows it by.
    pub id: KeyId,
    /// The secret.
    pub secret: Secret,
}

impl ClientKey {
    /// `ID:SECRET` (the `TCPLAB_KEY` variable).
    pub fn from_pair(text: &str) -> Result<ClientKey, String> {
        let (id, secret) = text.trim().split_once(':').ok_or("expected ID:SECRET")?;
        let id = KeyId::new(id).map_err(|e| e.to_string())?;
        let secret = decode_secret(secret).map_err(|e| format!("key '{id}': {e}"))?;
        Ok(ClientKey { id, secret })
    }

    /// The one `key` line of a key file (class lines and a key's class are ignored).
    pub fn from_file_text(text: &str) -> Result<ClientKey, String> {
        let ring = parse_lines(text, false)?;
        let mut keys = ring.keys.into_iter();
        match (keys.next(), keys.next()) {
            (Some((id, entry)), None) => Ok(ClientKey { id, secret: entry.secret }),
            (None, _) => Err("no `key ID SECRET` line".into()),
            (Some(_), Some(_)) => Err("more than one key: a client key file holds one".into()),
        }
    }
}

/// Reads a keys file; the second value is a warning when the file is open to others.
pub fn load(path: &Path) -> Result<(Keyring, Option<String>), String> {
    let text = read_private(path)?;
    let ring = parse(&text.0).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((ring, text.1))
}

/// A file's text, and a warning if its mode is more open than 0600.
pub fn read_private(path: &Path) -> Result<(String, Option<String>), String> {
    use std::os::unix::fs::PermissionsExt;
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let mode = std::fs::metadata(path).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
    let warning = (mode & 0o077 != 0).then(|| {
        format!(
            "{} holds secrets but others may read it (mode {mode:04o}); run chmod 600 on it",
            path.display()
        )
    });
    Ok((text, warning))
}

/// Parses a keys file's text.
pub fn parse(text: &str) -> Result<Keyring, String> {
    parse_lines(text, true)
}

/// Parses keys and classes; `check_classes`: every key's class must be defined (a server's
/// file; a client's file names the class for the server's operator only).
fn parse_lines(text: &str, check_classes: bool) -> Result<Keyring, String> {
    let mut ring = Keyring::default();
    let mut key_lines: Vec<(usize, KeyId, String)> = Vec::new();
    for (n, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        let words: Vec<&str> = line.split('#').next().unwrap_or("").split_whitespace().collect();
        let at = |e: String| format!("line {n}: {e}");
        match words.split_first() {
            None => {}
            Some((&"key", rest)) => {
                let (id, entry) = key_line(rest).map_err(at)?;
                if ring.keys.contains_key(&id) {
                    return Err(at(format!("key '{id}' is defined twice")));
                }
                key_lines.push((n, id.clone(), entry.class.clone()));
                ring.keys.insert(id, entry);
            }
            Some((&"class", rest)) => {
                let policy = class_line(rest).map_err(at)?;
                if ring.classes.contains_key(&policy.class) {
                    return Err(at(format!("class '{}' is defined twice", policy.class)));
                }
                ring.classes.insert(policy.class.clone(), policy);
            }
            Some((word, _)) => return Err(at(format!("'{word}': expected `key` or `class`"))),
        }
    }
    for (n, id, class) in key_lines.into_iter().filter(|_| check_classes) {
        if class != DEFAULT_CLASS && !ring.classes.contains_key(&class) {
            return Err(format!("line {n}: key '{id}' names class '{class}', which no `class` line defines"));
        }
    }
    Ok(ring)
}

fn key_line(words: &[&str]) -> Result<(KeyId, KeyEntry), String> {
    let [id, secret, rest @ ..] = words else {
        return Err("expected `key ID SECRET [class=NAME]`".into());
    };
    let id = KeyId::new(id).map_err(|e| e.to_string())?;
    let secret = decode_secret(secret).map_err(|e| format!("key '{id}': {e}"))?;
    let mut class = DEFAULT_CLASS.to_string();
    for word in rest {
        match word.split_once('=') {
            Some(("class", name)) if valid_name(name) => class = name.to_string(),
            _ => return Err(format!("key '{id}': '{word}': expected class=NAME")),
        }
    }
    Ok((id, KeyEntry { secret, class }))
}

fn class_line(words: &[&str]) -> Result<Policy, String> {
    let [name, settings @ ..] = words else { return Err("expected `class NAME SETTING=VALUE …`".into()) };
    if !valid_name(name) || *name == crate::limits::ANONYMOUS {
        return Err(format!("'{name}' is not a class name (letters, digits, . _ -; not 'anonymous')"));
    }
    let mut p = Policy::open(name);
    for word in settings {
        let (k, v) = word.split_once('=').ok_or_else(|| format!("'{word}': expected SETTING=VALUE"))?;
        set(&mut p, k, v).map_err(|e| format!("class '{name}': {k}: {e}"))?;
    }
    Ok(p)
}

/// Sets one cap of a class (the names are also the server's flags for anonymous clients).
pub fn set(p: &mut Policy, name: &str, value: &str) -> Result<(), String> {
    let count =
        || value.parse::<u32>().ok().filter(|&n| n >= 1).ok_or(format!("'{value}' is not a count ≥ 1"));
    match name {
        "max-duration" => p.max_duration_ms = Some(seconds_ms(value)?),
        "max-rate" => {
            let rate = model::BitRate::parse(value).map_err(|e| e.to_string())?;
            p.max_rate_bps = Some(rate.0).filter(|&r| r > 0);
            if p.max_rate_bps.is_none() {
                return Err("a rate cap must be above 0".into());
            }
        }
        "max-streams" => p.max_parallel = Some(count()?),
        "max-concurrent" => p.max_concurrent = Some(count()?),
        "tests-per-minute" => p.tests_per_minute = Some(count()?),
        _ => {
            return Err(
                "unknown setting (max-duration, max-rate, max-streams, max-concurrent, tests-per-minute)"
                    .into(),
            )
        }
    }
    Ok(())
}

/// A time cap in the one duration grammar (`600`, `90s`, `10m`; a bare number is seconds),
/// from 1 ms to a day, as milliseconds (rounded to the nearest).
fn seconds_ms(v: &str) -> Result<u64, String> {
    let d = model::units::parse_duration(v, model::units::BareNumber::Seconds).map_err(|e| e.to_string())?;
    let ms = (d.as_nanos() + 500_000) / 1_000_000;
    match u64::try_from(ms) {
        Ok(ms) if (1..=86_400_000).contains(&ms) => Ok(ms),
        _ => Err(format!("'{v}' is not between 0.001 and 86400 seconds")),
    }
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Decodes a secret: hex if only hex digits, else standard base64; at least 32 bytes. The
/// decoders are RustCrypto's constant-time ones; errors never show the text.
pub fn decode_secret(text: &str) -> Result<Secret, String> {
    use base64ct::Encoding;
    let hex = !text.is_empty() && text.bytes().all(|b| b.is_ascii_hexdigit());
    let bytes = if hex {
        base16ct::mixed::decode_vec(text).map_err(|_| "secret is not valid hex".to_string())?
    } else {
        base64ct::Base64::decode_vec(text).map_err(|_| "secret is neither hex nor base64".to_string())?
    };
    Secret::new(bytes).map_err(|e| e.to_string().replace("key is", "secret is"))
}

/// One `key` line for a keys file (and a client's key file): `key ID BASE64 [class=CLASS]`.
pub fn entry_line(id: &KeyId, secret: &Secret, class: Option<&str>) -> String {
    use base64ct::Encoding;
    let class = class.map(|c| format!(" class={c}")).unwrap_or_default();
    format!("key {id} {}{class}", base64ct::Base64::encode_string(secret.expose()))
}

/// Whether `name` can be a class name.
pub fn is_class_name(name: &str) -> bool {
    valid_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const B64: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    const HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    #[test]
    fn a_file_with_classes_and_keys_parses() {
        let text = format!(
            "# keys\nclass lab max-duration=60 max-rate=1G max-streams=8 max-concurrent=2 tests-per-minute=30\n\n\
             key alice {B64} class=lab  # Alice\nkey bob {HEX}\n"
        );
        let ring = parse(&text).unwrap();
        assert_eq!(ring.len(), 2);
        let alice = ring.get(&KeyId::new("alice").unwrap()).unwrap();
        let bob = ring.get(&KeyId::new("bob").unwrap()).unwrap();
        assert_eq!(alice.secret.expose(), bob.secret.expose(), "hex and base64 of the same bytes");
        assert_eq!(bob.class, "default");
        let lab = ring.class("lab");
        assert_eq!(
            (
                lab.max_duration_ms,
                lab.max_rate_bps,
                lab.max_parallel,
                lab.max_concurrent,
                lab.tests_per_minute
            ),
            (Some(60_000), Some(1_000_000_000), Some(8), Some(2), Some(30))
        );
        assert_eq!(ring.class("default"), Policy::open("default"));
    }

    #[test]
    fn a_time_cap_takes_the_one_duration_grammar() {
        let cap = |v: &str| {
            let mut p = Policy::default();
            set(&mut p, "max-duration", v).map(|()| p.max_duration_ms)
        };
        assert_eq!(cap("60"), Ok(Some(60_000)), "a bare number is seconds, as before");
        assert_eq!(cap("90s"), Ok(Some(90_000)));
        assert_eq!(cap("10m"), Ok(Some(600_000)));
        assert_eq!(cap("1.0005"), Ok(Some(1001)));
        for bad in ["0", "2d", "ten", "-1"] {
            assert!(cap(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn errors_name_the_line_and_never_the_secret() {
        let short = "c2hvcnQgc2VjcmV0";
        let cases = [
            (format!("key alice {short}"), "line 1: key 'alice': secret is 12 bytes; at least 32"),
            (format!("\n\nkey a {B64} class=nope"), "line 3: key 'a' names class 'nope'"),
            (format!("key a {B64}\nkey a {B64}"), "line 2: key 'a' is defined twice"),
            ("keys a b".to_string(), "line 1: 'keys': expected `key` or `class`"),
            ("key a".to_string(), "line 1: expected `key ID SECRET"),
            (format!("key bad/id {B64}"), "line 1: key id must be"),
            (format!("key a {B64} lab"), "line 1: key 'a': 'lab': expected class=NAME"),
            ("class lab max-rate=fast".to_string(), "line 1: class 'lab': max-rate:"),
            ("class lab max-streams=0".to_string(), "line 1: class 'lab': max-streams: '0' is not a count"),
            ("class lab speed=1".to_string(), "line 1: class 'lab': speed: unknown setting"),
            ("class anonymous".to_string(), "line 1: 'anonymous' is not a class name"),
            ("key a !!!!".to_string(), "line 1: key 'a': secret is neither hex nor base64"),
        ];
        for (text, want) in cases {
            let err = parse(&text).unwrap_err();
            assert!(err.starts_with(want), "{text:?}: {err}");
            assert!(!err.contains(short) && !err.contains(B64), "a secret in {err}");
        }
    }

    #[test]
    fn a_client_key_comes_from_a_pair_or_a_one_key_file() {
        let k = ClientKey::from_pair(&format!("alice:{B64}")).unwrap();
        assert_eq!(k.id.as_str(), "alice");
        assert!(ClientKey::from_pair(B64).is_err());
        let line = entry_line(&k.id, &k.secret, Some("lab"));
        assert_eq!(line, format!("key alice {B64} class=lab"));
        let again = ClientKey::from_file_text(&format!("# mine\n{line}\n")).unwrap();
        assert_eq!(again.secret.expose(), k.secret.expose());
        assert!(ClientKey::from_file_text("# nothing\n").is_err());
        assert!(ClientKey::from_file_text(&format!("key a {B64}\nkey b {B64}\n")).is_err());
        assert_eq!(format!("{k:?}").matches("redacted").count(), 1);
    }
}
