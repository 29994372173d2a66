//! Control-connection state bytes (one signed byte each) and the SERVER_ERROR payload.

use super::Iperf3Error;

/// One control message of the iperf3 protocol. Values are iperf3's (`src/iperf_api.h`); the
/// codes iperf3 defines but never sends (3, 5–8, 15) are not decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Server: all streams accepted, counters start (1).
    TestStart,
    /// Server: start transferring (2).
    TestRunning,
    /// Client: end condition reached, its senders stopped (4).
    TestEnd,
    /// Server: send the parameter document (9).
    ParamExchange,
    /// Server: open the data streams (10).
    CreateStreams,
    /// Server: it caught a signal and ends the test (11).
    ServerTerminate,
    /// Client: it caught a signal and ends the test (12).
    ClientTerminate,
    /// Server: the results exchange begins; the client sends first (13).
    ExchangeResults,
    /// Server: the client may print and finish (14).
    DisplayResults,
    /// Client: finished; the server resets for the next test (16).
    IperfDone,
    /// Server: busy with another test, or a data stream's cookie is wrong (−1, 0xFF).
    AccessDenied,
    /// Server: an error; eight bytes follow ([`ServerError`]) (−2, 0xFE).
    ServerError,
}

const TABLE: [(State, i8); 12] = [
    (State::TestStart, 1),
    (State::TestRunning, 2),
    (State::TestEnd, 4),
    (State::ParamExchange, 9),
    (State::CreateStreams, 10),
    (State::ServerTerminate, 11),
    (State::ClientTerminate, 12),
    (State::ExchangeResults, 13),
    (State::DisplayResults, 14),
    (State::IperfDone, 16),
    (State::AccessDenied, -1),
    (State::ServerError, -2),
];

impl State {
    /// The byte on the wire.
    pub fn to_byte(self) -> u8 {
        TABLE.iter().find(|(s, _)| *s == self).map_or(0, |(_, v)| *v as u8)
    }

    /// Decodes one byte; anything iperf3 does not send is [`Iperf3Error::UnknownState`]
    /// (iperf3's `IEMESSAGE`).
    pub fn from_byte(byte: u8) -> Result<State, Iperf3Error> {
        let value = byte as i8;
        TABLE.iter().find(|(_, v)| *v == value).map(|(s, _)| *s).ok_or(Iperf3Error::UnknownState(byte))
    }

    /// iperf3's name for the state, for messages.
    pub fn name(self) -> &'static str {
        match self {
            State::TestStart => "TEST_START",
            State::TestRunning => "TEST_RUNNING",
            State::TestEnd => "TEST_END",
            State::ParamExchange => "PARAM_EXCHANGE",
            State::CreateStreams => "CREATE_STREAMS",
            State::ServerTerminate => "SERVER_TERMINATE",
            State::ClientTerminate => "CLIENT_TERMINATE",
            State::ExchangeResults => "EXCHANGE_RESULTS",
            State::DisplayResults => "DISPLAY_RESULTS",
            State::IperfDone => "IPERF_DONE",
            State::AccessDenied => "ACCESS_DENIED",
            State::ServerError => "SERVER_ERROR",
        }
    }
}

/// Bytes that follow a SERVER_ERROR state byte.
pub const SERVER_ERROR_PAYLOAD_LEN: usize = 8;

/// The payload of SERVER_ERROR: iperf3's error number and the server's OS errno, each a
/// big-endian int32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerError {
    /// iperf3's `i_errno` (see [`error_text`]).
    pub i_errno: i32,
    /// The server's `errno` (Linux numbering) or 0.
    pub errno: i32,
}

impl ServerError {
    /// Decodes the eight payload bytes.
    pub fn decode(bytes: [u8; SERVER_ERROR_PAYLOAD_LEN]) -> ServerError {
        let [a, b, c, d, e, f, g, h] = bytes;
        ServerError { i_errno: i32::from_be_bytes([a, b, c, d]), errno: i32::from_be_bytes([e, f, g, h]) }
    }

    /// The state byte and payload, nine bytes, as a server sends them.
    pub fn encode(&self) -> [u8; 1 + SERVER_ERROR_PAYLOAD_LEN] {
        let mut out = [0u8; 9];
        out[0] = State::ServerError.to_byte();
        out[1..5].copy_from_slice(&self.i_errno.to_be_bytes());
        out[5..9].copy_from_slice(&self.errno.to_be_bytes());
        out
    }
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (iperf3 error {}", error_text(self.i_errno), self.i_errno)?;
        if self.errno != 0 {
            write!(f, ", errno {}", self.errno)?;
        }
        f.write_str(")")
    }
}

/// A short text for iperf3's error numbers that cross the wire (§12 of the reference).
pub fn error_text(i_errno: i32) -> &'static str {
    match i_errno {
        5 => "test duration out of range",
        6 => "too many parallel streams",
        7 => "block size out of range",
        8 => "socket buffer size too large",
        10 => "MSS too large",
        11 => "the server cannot sendfile",
        12 => "bad omit value",
        15 => "bad burst count",
        20 => "UDP block size invalid",
        21 => "bad TOS value",
        27 => "requested rate above the server's limit",
        34 => "the server refuses file transfer over UDP",
        37 => "duration above the server's maximum",
        39 => "--skip-rx-copy not supported by the server",
        106 => "the server did not receive the cookie",
        109 => "the control connection was closed",
        110 => "unknown control message",
        114 => "the server could not read the parameters",
        117 => "the server could not read the results",
        119 => "the client terminated the test",
        120 => "the server terminated the test",
        121 => "the server is busy running a test",
        134 => "the server could not set the congestion control",
        142 => "authorization failed",
        144 => "no data received for the receive timeout",
        160 => "the server's test-duration watchdog expired",
        200..=208 => "a data stream failed on the server",
        _ => "server error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_roundtrips_and_signed_values_are_ff_fe() {
        for (s, v) in TABLE {
            assert_eq!(State::from_byte(s.to_byte()), Ok(s));
            assert_eq!(s.to_byte(), v as u8);
        }
        assert_eq!(State::AccessDenied.to_byte(), 0xff);
        assert_eq!(State::ServerError.to_byte(), 0xfe);
        assert_eq!(State::ParamExchange.to_byte(), 0x09);
    }

    #[test]
    fn unknown_and_never_sent_values_are_errors() {
        for b in [0u8, 3, 5, 6, 7, 8, 15, 17, 0x80, 0xfd] {
            assert_eq!(State::from_byte(b), Err(Iperf3Error::UnknownState(b)));
        }
    }

    #[test]
    fn server_error_payload_is_two_big_endian_ints() {
        let e = ServerError { i_errno: 160, errno: 0 };
        let bytes = e.encode();
        assert_eq!(bytes, [0xfe, 0, 0, 0, 160, 0, 0, 0, 0]);
        assert_eq!(ServerError::decode([0, 0, 0, 121, 0, 0, 0, 11]), ServerError { i_errno: 121, errno: 11 });
        assert_eq!(e.to_string(), "the server's test-duration watchdog expired (iperf3 error 160)");
    }
}
