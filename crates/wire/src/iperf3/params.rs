//! The parameter document the client sends after PARAM_EXCHANGE (iperf3's
//! `send_parameters()` / `get_parameters()`).
//!
//! Field names are iperf3's, including its capitals (`MSS`, `TOS`). Reading follows iperf3
//! 3.18+: unknown keys are ignored and a key with the wrong JSON type is treated as absent.
//! Numbers keep their sign so that a server can refuse negative counts (`IERECVPARAMS`).
//! Flags are written only when set: iperf3 3.12 takes a flag's mere presence as "on".

use serde::{Deserialize, Serialize};

use super::number::{de_flag, de_opt_int, de_opt_string, is_false};
use super::Iperf3Error;

/// The data-stream protocol a test asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `"tcp": true`.
    Tcp,
    /// `"udp": true`.
    Udp,
    /// `"sctp": true` (not spoken by tcplab; decoded so that a server can refuse it).
    Sctp,
}

/// The client's test parameters. `Params::default()` has every field absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[allow(non_snake_case)] // iperf3's own key names.
pub struct Params {
    /// TCP data streams.
    #[serde(default, deserialize_with = "de_flag", skip_serializing_if = "is_false")]
    pub tcp: bool,
    /// UDP data streams.
    #[serde(default, deserialize_with = "de_flag", skip_serializing_if = "is_false")]
    pub udp: bool,
    /// SCTP data streams.
    #[serde(default, deserialize_with = "de_flag", skip_serializing_if = "is_false")]
    pub sctp: bool,
    /// Seconds omitted from the start of the results.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub omit: Option<i64>,
    /// CPU the server should run on.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub server_affinity: Option<i64>,
    /// Test duration in seconds, 0 = until `num`/`blockcount` or forever.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub time: Option<i64>,
    /// Bytes to send (`-n`), 0 = unused.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub num: Option<i64>,
    /// Blocks to send (`-k`), 0 = unused.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub blockcount: Option<i64>,
    /// TCP maximum segment size.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub MSS: Option<i64>,
    /// TCP_NODELAY on data streams.
    #[serde(default, deserialize_with = "de_flag", skip_serializing_if = "is_false")]
    pub nodelay: bool,
    /// Streams per direction.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub parallel: Option<i64>,
    /// The server sends (`-R`).
    #[serde(default, deserialize_with = "de_flag", skip_serializing_if = "is_false")]
    pub reverse: bool,
    /// Both directions (`--bidir`).
    #[serde(default, deserialize_with = "de_flag", skip_serializing_if = "is_false")]
    pub bidirectional: bool,
    /// MPTCP sockets.
    #[serde(default, deserialize_with = "de_flag", skip_serializing_if = "is_false")]
    pub mptcp: bool,
    /// SO_SNDBUF/SO_RCVBUF in bytes.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub window: Option<i64>,
    /// Block (TCP) or datagram (UDP) size in bytes.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub len: Option<i64>,
    /// Target rate per stream in bit/s; absent = unlimited (TCP).
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<i64>,
    /// Kernel pacing rate in bit/s (SO_MAX_PACING_RATE = fqrate/8).
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub fqrate: Option<i64>,
    /// Pacing timer in µs.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub pacing_timer: Option<i64>,
    /// Packets per burst.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub burst: Option<i64>,
    /// IP TOS byte.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub TOS: Option<i64>,
    /// IPv6 flow label.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub flowlabel: Option<i64>,
    /// Title echoed into JSON output.
    #[serde(default, deserialize_with = "de_opt_string", skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Extra data echoed into JSON output.
    #[serde(default, deserialize_with = "de_opt_string", skip_serializing_if = "Option::is_none")]
    pub extra_data: Option<String>,
    /// Congestion control to set (`-C`).
    #[serde(default, deserialize_with = "de_opt_string", skip_serializing_if = "Option::is_none")]
    pub congestion: Option<String>,
    /// Congestion control in use, informational.
    #[serde(default, deserialize_with = "de_opt_string", skip_serializing_if = "Option::is_none")]
    pub congestion_used: Option<String>,
    /// 1: the server returns its own output with its results.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub get_server_output: Option<i64>,
    /// 1: 64-bit UDP sequence numbers.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub udp_counters_64bit: Option<i64>,
    /// 1: a repeating payload pattern.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub repeating_payload: Option<i64>,
    /// 1: sendfile().
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub zerocopy: Option<i64>,
    /// 1: IP don't-fragment.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub dont_fragment: Option<i64>,
    /// RSA-encrypted, base64 authentication token.
    #[serde(default, deserialize_with = "de_opt_string", skip_serializing_if = "Option::is_none")]
    pub authtoken: Option<String>,
    /// 1: receive with MSG_TRUNC.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub skip_rx_copy: Option<i64>,
    /// UDP GSO on (3.21+).
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub gso: Option<i64>,
    /// UDP GSO datagram size.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub gso_dg_size: Option<i64>,
    /// UDP GSO buffer size.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub gso_bf_size: Option<i64>,
    /// UDP GRO on (3.21+).
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub gro: Option<i64>,
    /// UDP GRO buffer size.
    #[serde(default, deserialize_with = "de_opt_int", skip_serializing_if = "Option::is_none")]
    pub gro_bf_size: Option<i64>,
    /// The client's iperf3 version, e.g. `"3.12"`.
    #[serde(default, deserialize_with = "de_opt_string", skip_serializing_if = "Option::is_none")]
    pub client_version: Option<String>,
}

impl Params {
    /// Decodes a parameter document (the body of one frame).
    pub fn decode(json: &[u8]) -> Result<Params, Iperf3Error> {
        super::decode_object(json, "parameters")
    }

    /// Encodes the document, unformatted (the body of one frame).
    pub fn encode(&self) -> Result<Vec<u8>, Iperf3Error> {
        serde_json::to_vec(self).map_err(|e| Iperf3Error::Json { what: "parameters", reason: e.to_string() })
    }

    /// The protocol, if exactly one of `tcp`, `udp`, `sctp` is set.
    pub fn protocol(&self) -> Option<Protocol> {
        match (self.tcp, self.udp, self.sctp) {
            (true, false, false) => Some(Protocol::Tcp),
            (false, true, false) => Some(Protocol::Udp),
            (false, false, true) => Some(Protocol::Sctp),
            _ => None,
        }
    }

    /// Streams per direction (`parallel`, at least 1).
    pub fn streams_per_direction(&self) -> u32 {
        self.parallel.map_or(1, |p| u32::try_from(p.max(1)).unwrap_or(u32::MAX))
    }

    /// How many data connections the client opens: `parallel`, twice that for `--bidir`.
    pub fn data_connections(&self) -> u32 {
        self.streams_per_direction().saturating_mul(if self.bidirectional { 2 } else { 1 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_iperf3_3_12_document_decodes() {
        // Captured from `iperf3 -c 127.0.0.1 -u -b 10M -P 2 -R -t 3` (Debian 3.12).
        let doc = br#"{"udp":true,"omit":0,"time":3,"num":0,"blockcount":0,"parallel":2,"reverse":true,"len":32768,"bandwidth":10000000,"pacing_timer":1000,"client_version":"3.12"}"#;
        let p = Params::decode(doc).unwrap();
        assert_eq!(p.protocol(), Some(Protocol::Udp));
        assert!(p.reverse && !p.bidirectional);
        assert_eq!(
            (p.time, p.len, p.bandwidth, p.parallel),
            (Some(3), Some(32768), Some(10_000_000), Some(2))
        );
        assert_eq!(p.client_version.as_deref(), Some("3.12"));
        assert_eq!(p.data_connections(), 2);
    }

    #[test]
    fn a_real_iperf3_tcp_document_with_options_decodes() {
        // Captured from `iperf3 -c 127.0.0.1 -P 2 --bidir -w 256K -M 1400 -N -C cubic -l 64K
        // -O 1 --get-server-output -n 1M` (Debian 3.12); encoding it again gives the same bytes.
        let doc = br#"{"tcp":true,"omit":1,"time":0,"num":1048576,"blockcount":0,"MSS":1400,"nodelay":true,"parallel":2,"bidirectional":true,"window":262144,"len":65536,"pacing_timer":1000,"congestion":"cubic","get_server_output":1,"client_version":"3.12"}"#;
        let p = Params::decode(doc).unwrap();
        assert_eq!(p.protocol(), Some(Protocol::Tcp));
        assert!(p.bidirectional && p.nodelay && !p.reverse);
        assert_eq!(p.data_connections(), 4);
        assert_eq!(p.encode().unwrap(), doc.to_vec());
    }

    #[test]
    fn wrong_types_are_absent_and_unknown_keys_ignored() {
        let p = Params::decode(
            br#"{"tcp":true,"reverse":1,"time":"10","MSS":1400.0,"zerocopy":true,"new_key":[1]}"#,
        )
        .unwrap();
        assert!(!p.reverse);
        assert_eq!(p.time, None);
        assert_eq!(p.MSS, Some(1400));
        assert_eq!(p.zerocopy, None);
        assert!(Params::decode(b"[1]").is_err());
        assert!(Params::decode(b"{").is_err());
    }

    #[test]
    fn flags_that_are_off_and_absent_numbers_are_not_written() {
        let p = Params { tcp: true, time: Some(10), parallel: Some(1), ..Params::default() };
        assert_eq!(p.encode().unwrap(), br#"{"tcp":true,"time":10,"parallel":1}"#.to_vec());
        let both = Params { tcp: true, udp: true, ..Params::default() };
        assert_eq!(both.protocol(), None);
    }
}
