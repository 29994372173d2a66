//! Property tests: whatever the codec writes, it reads back unchanged.

use proptest::prelude::*;

use super::*;

fn opt_int() -> impl Strategy<Value = Option<i64>> {
    proptest::option::of(any::<i64>())
}

fn params() -> impl Strategy<Value = Params> {
    (
        any::<[bool; 6]>(),
        [opt_int(), opt_int(), opt_int(), opt_int(), opt_int(), opt_int()],
        proptest::option::of(".{0,12}"),
    )
        .prop_map(|(f, n, s)| Params {
            tcp: f[0],
            udp: f[1],
            reverse: f[2],
            bidirectional: f[3],
            nodelay: f[4],
            mptcp: f[5],
            time: n[0],
            num: n[1],
            parallel: n[2],
            len: n[3],
            bandwidth: n[4],
            window: n[5],
            congestion: s.clone(),
            client_version: s,
            ..Params::default()
        })
}

fn stream() -> impl Strategy<Value = StreamResults> {
    (
        any::<(i64, u64, i64, i64, i64)>(),
        proptest::option::of(any::<(i64, i64)>()),
        (-1_000_000_000i64..1_000_000_000).prop_map(|n| n as f64 / 1024.0),
    )
        .prop_map(|((id, bytes, retransmits, errors, packets), omitted, f)| StreamResults {
            id,
            bytes: bytes >> 1,
            retransmits,
            jitter: f,
            errors,
            omitted_errors: omitted.map(|o| o.0),
            packets,
            omitted_packets: omitted.map(|o| o.1),
            start_time: Some(0.0),
            end_time: Some(f.abs()),
        })
}

proptest! {
    #[test]
    fn params_roundtrip(p in params()) {
        let bytes = p.encode().unwrap();
        prop_assert_eq!(Params::decode(&bytes).unwrap(), p);
    }

    #[test]
    fn results_roundtrip(streams in proptest::collection::vec(stream(), 0..5), cpu in (0u32..400_000).prop_map(|n| f64::from(n) / 1024.0)) {
        let r = Results { cpu_util_total: cpu, cpu_util_user: cpu / 2.0, cpu_util_system: cpu / 2.0,
            sender_has_retransmits: -1, congestion_used: Some("cubic".into()), streams, ..Results::default() };
        let bytes = r.encode().unwrap();
        prop_assert_eq!(Results::decode(&bytes).unwrap(), r);
    }

    #[test]
    fn frames_roundtrip_and_heads_bound_lengths(body in proptest::collection::vec(any::<u8>(), 1..300), max in 1usize..400) {
        match frame::encode(&body, max) {
            Ok(bytes) => prop_assert_eq!(frame::decode_head([bytes[0], bytes[1], bytes[2], bytes[3]], max), Ok(frame::Head::Body(body.len()))),
            Err(_) => prop_assert!(body.len() > max),
        }
    }

    #[test]
    fn udp_headers_roundtrip(us in 0u64..(u64::from(u32::MAX) * 1_000_000), seq in any::<u64>(), wide in any::<bool>()) {
        let h = udp::Header::at(us, if wide { seq } else { seq & 0xffff_ffff });
        let mut buf = [0u8; 16];
        prop_assert!(h.write(&mut buf, wide));
        prop_assert_eq!(udp::Header::read(&buf, wide).unwrap(), h);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = Params::decode(&bytes);
        let _ = Results::decode(&bytes);
        let _ = Cookie::decode(&bytes);
        let _ = udp::Header::read(&bytes, false);
    }
}
