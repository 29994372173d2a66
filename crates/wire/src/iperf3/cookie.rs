//! The 37-byte cookie: 36 characters from `a`–`z` and `2`–`7`, then one NUL, all on the wire.

use super::Iperf3Error;

/// Bytes of the cookie on the wire, NUL included.
pub const COOKIE_LEN: usize = 37;
/// Characters of the cookie (without the NUL).
pub const COOKIE_CHARS: usize = 36;
const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// A validated cookie (36 characters from iperf3's alphabet).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cookie([u8; COOKIE_CHARS]);

impl std::fmt::Debug for Cookie {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cookie({}…)", &self.as_str()[..6])
    }
}

impl Cookie {
    /// Makes a cookie from 36 random bytes (the caller draws them, e.g. from
    /// `netio::random_bytes`: this crate reads no entropy). Each byte picks one of 32 letters,
    /// so the cookie carries 180 bits.
    pub fn from_random(bytes: [u8; COOKIE_CHARS]) -> Cookie {
        Cookie(bytes.map(|b| ALPHABET[usize::from(b % 32)]))
    }

    /// Checks the 37 wire bytes: 36 alphabet characters then NUL.
    pub fn decode(bytes: &[u8]) -> Result<Cookie, Iperf3Error> {
        if bytes.len() != COOKIE_LEN {
            return Err(Iperf3Error::Cookie("wrong length"));
        }
        if bytes[COOKIE_CHARS] != 0 {
            return Err(Iperf3Error::Cookie("no terminating NUL"));
        }
        Cookie::parse(&bytes[..COOKIE_CHARS])
    }

    /// Checks 36 characters (the form in `-J` output, without the NUL).
    pub fn parse(chars: &[u8]) -> Result<Cookie, Iperf3Error> {
        let arr: [u8; COOKIE_CHARS] = chars.try_into().map_err(|_| Iperf3Error::Cookie("wrong length"))?;
        if !arr.iter().all(|c| ALPHABET.contains(c)) {
            return Err(Iperf3Error::Cookie("character outside a-z, 2-7"));
        }
        Ok(Cookie(arr))
    }

    /// The 37 bytes a client sends first on the control and every TCP data connection.
    pub fn encode(&self) -> [u8; COOKIE_LEN] {
        let mut out = [0u8; COOKIE_LEN];
        out[..COOKIE_CHARS].copy_from_slice(&self.0);
        out
    }

    /// The 36 characters.
    pub fn as_str(&self) -> &str {
        // The alphabet is ASCII, so this cannot fail; fall back to "" rather than panic.
        std::str::from_utf8(&self.0).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_cookies_validate_and_end_in_nul() {
        let c = Cookie::from_random(std::array::from_fn(|i| (i * 37) as u8));
        let wire = c.encode();
        assert_eq!(wire[36], 0);
        assert_eq!(Cookie::decode(&wire), Ok(c));
        assert_eq!(c.as_str().len(), 36);
    }

    #[test]
    fn bad_cookies_are_refused() {
        let good = *b"abcdefghijklmnopqrstuvwxyz234567abcd\0";
        assert!(Cookie::decode(&good).is_ok());
        let mut upper = good;
        upper[0] = b'A';
        assert!(Cookie::decode(&upper).is_err());
        let mut eight = good;
        eight[1] = b'8';
        assert!(Cookie::decode(&eight).is_err());
        let mut no_nul = good;
        no_nul[36] = b'a';
        assert!(Cookie::decode(&no_nul).is_err());
        assert!(Cookie::decode(&good[..36]).is_err());
    }
}
