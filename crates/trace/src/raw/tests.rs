//! Pages built here byte by byte as the kernel lays them out, with a Linux 6.18 host's
//! layout files.

use super::*;

/// The layout files of a Linux 6.18 host, verbatim.
const HEADER_PAGE: &str = include_str!("../../tests/fixtures/tracefs_format/header_page");
const PROBE_FORMAT: &str = include_str!("../../tests/fixtures/tracefs_format/tcp_probe");
const RETRANSMIT_FORMAT: &str = include_str!("../../tests/fixtures/tracefs_format/tcp_retransmit_skb");

fn decoder() -> Decoder {
    Decoder::new(HEADER_PAGE, PROBE_FORMAT, RETRANSMIT_FORMAT).unwrap_or_else(|e| panic!("{e}"))
}

/// A tcp_probe record (136 bytes) from 127.0.0.1:`sport` to 127.0.0.1:9391.
fn probe_record(sport: u16, data_len: u16, snd_nxt: u32) -> Vec<u8> {
    let mut r = vec![0u8; 136];
    r[0..2].copy_from_slice(&2273u16.to_ne_bytes());
    for (at, port) in [(8, sport), (36, 9391)] {
        r[at..at + 2].copy_from_slice(&2u16.to_ne_bytes());
        r[at + 2..at + 4].copy_from_slice(&port.to_be_bytes());
        r[at + 4..at + 8].copy_from_slice(&[127, 0, 0, 1]);
    }
    r[76..78].copy_from_slice(&data_len.to_ne_bytes());
    for (at, v) in [(80, snd_nxt), (84, 5), (88, 10), (92, 7), (96, 65536), (100, 35), (104, 1024)] {
        r[at..at + 4].copy_from_slice(&v.to_ne_bytes());
    }
    r[112..120].copy_from_slice(&42u64.to_ne_bytes());
    r
}

/// An IPv6 tcp_retransmit_skb record (80 bytes) from [::1]:1 to [::1]:2.
fn retransmit_record() -> Vec<u8> {
    let mut r = vec![0u8; 80];
    r[0..2].copy_from_slice(&2281u16.to_ne_bytes());
    r[28..30].copy_from_slice(&1u16.to_ne_bytes());
    r[30..32].copy_from_slice(&2u16.to_ne_bytes());
    r[32..34].copy_from_slice(&10u16.to_ne_bytes());
    r[57] = 1;
    r[73] = 1;
    r
}

/// An event header word.
fn header(type_len: u32, delta: u32) -> [u8; 4] {
    (type_len | (delta << 5)).to_ne_bytes()
}

/// A data event of type_len 0 (length word), as 64-bit kernels write them.
fn long_event(delta: u32, record: &[u8]) -> Vec<u8> {
    let mut e = header(0, delta).to_vec();
    e.extend_from_slice(&(record.len() as u32 + 4).to_ne_bytes());
    e.extend_from_slice(record);
    e
}

/// A page at time `ts` with `events`; `missed` sets the flags (and stores the count).
fn page(ts: u64, events: &[u8], missed: Option<u64>) -> Vec<u8> {
    let mut commit = events.len() as u64;
    let mut p = vec![0u8; 4096];
    p[16..16 + events.len()].copy_from_slice(events);
    if let Some(n) = missed {
        p[16 + events.len()..24 + events.len()].copy_from_slice(&n.to_ne_bytes());
        commit |= MISSED_EVENTS | MISSED_STORED;
    }
    p[0..8].copy_from_slice(&ts.to_ne_bytes());
    p[8..16].copy_from_slice(&commit.to_ne_bytes());
    p
}

fn decode(p: &[u8]) -> (Vec<Event>, PageSummary) {
    let mut events = Vec::new();
    let sum = decoder().page(p, &mut |e| events.push(e));
    (events, sum)
}

#[test]
fn a_page_of_probes_time_extensions_and_a_retransmission() {
    let mut data = long_event(100, &probe_record(35932, 44, 0x6b4e_46f0));
    data.extend_from_slice(&header(TYPE_TIME_EXTEND, 5));
    data.extend_from_slice(&1u32.to_ne_bytes()); // + (1 << 27) + 5 ns
    data.extend_from_slice(&long_event(7, &retransmit_record()));
    let mut short = header(2, 1).to_vec(); // another event's 8-byte record: skipped
    short.extend_from_slice(&[9, 9, 0, 0, 0, 0, 0, 0]);
    data.extend_from_slice(&short);
    data.extend_from_slice(&long_event(0, &probe_record(35932, 0, 1)));
    let (events, sum) = decode(&page(1_000, &data, None));
    assert_eq!(sum, PageSummary { events: 3, missed: None, malformed: false });
    let Event::Probe(p) = events[0] else { panic!("{:?}", events[0]) };
    assert_eq!(p.t_ns, 1_100);
    assert_eq!(p.src, "127.0.0.1:35932".parse().unwrap_or(p.dst));
    assert_eq!(p.dst.port(), 9391);
    assert_eq!((p.data_len, p.snd_nxt, p.snd_una, p.snd_cwnd, p.ssthresh), (44, 0x6b4e_46f0, 5, 10, 7));
    assert_eq!((p.snd_wnd, p.srtt_us, p.rcv_wnd, p.sock_cookie), (65536, 35, 1024, 42));
    let Event::Retransmit(r) = events[1] else { panic!("{:?}", events[1]) };
    assert_eq!(r.t_ns, 1_100 + (1 << 27) + 5 + 7);
    assert_eq!(r.src, "[::1]:1".parse().unwrap_or(r.dst));
    assert_eq!(r.dst, "[::1]:2".parse().unwrap_or(r.src));
    assert!(matches!(events[2], Event::Probe(p) if p.t_ns == 1_100 + (1 << 27) + 5 + 8));
}

#[test]
fn missed_events_and_padding() {
    let mut data = long_event(1, &probe_record(1, 0, 0));
    data.extend_from_slice(&header(TYPE_PADDING, 3));
    data.extend_from_slice(&12u32.to_ne_bytes());
    data.extend_from_slice(&[0u8; 8]);
    data.extend_from_slice(&long_event(1, &probe_record(2, 0, 0)));
    let (events, sum) = decode(&page(0, &data, Some(17)));
    assert_eq!(sum, PageSummary { events: 2, missed: Some(17), malformed: false });
    assert!(matches!(events[1], Event::Probe(p) if p.t_ns == 5 && p.src.port() == 2));
    // The flag without a stored count: missed, number unknown here.
    let mut p = page(0, &data, None);
    p[8..16].copy_from_slice(&(data.len() as u64 | MISSED_EVENTS).to_ne_bytes());
    assert_eq!(decode(&p).1.missed, Some(0));
    // Padding with delta 0 ends the page.
    let mut end = header(TYPE_PADDING, 0).to_vec();
    end.extend_from_slice(&long_event(1, &probe_record(3, 0, 0)));
    assert_eq!(decode(&page(0, &end, None)).1, PageSummary::default());
}

#[test]
fn cut_or_lying_pages_are_malformed_not_a_panic() {
    let data = long_event(1, &probe_record(1, 0, 0));
    let whole = page(0, &data, None);
    assert!(decode(&whole[..20]).1.malformed, "commit longer than the page");
    assert!(decode(&whole[..4]).1.malformed, "no header");
    let mut lying = whole.clone();
    lying[20..24].copy_from_slice(&9999u32.to_ne_bytes());
    assert!(decode(&lying).1.malformed, "record longer than the data");
    let mut bad_family = whole;
    bad_family[24 + 8..24 + 10].copy_from_slice(&99u16.to_ne_bytes());
    assert!(decode(&bad_family).1.malformed, "no such address family");
    assert_eq!(decode(&[]).1, PageSummary::default());
}

#[test]
fn formats_without_a_needed_field_are_refused() {
    let cut = PROBE_FORMAT.replace("snd_wnd", "other");
    assert_eq!(Decoder::new(HEADER_PAGE, &cut, RETRANSMIT_FORMAT).err(), Some(FormatError::Field("snd_wnd")));
    assert!(Decoder::new("", PROBE_FORMAT, RETRANSMIT_FORMAT).is_err());
    assert_eq!(decoder().page_bytes(), 4096);
}

proptest::proptest! {
    #[test]
    fn never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
        let mut n = 0u64;
        let sum = decoder().page(&bytes, &mut |_| n += 1);
        proptest::prop_assert_eq!(sum.events, n);
    }

    #[test]
    fn never_panics_on_valid_headers(words in proptest::collection::vec(proptest::prelude::any::<u32>(), 0..64), commit in 0u64..4096) {
        let mut p = vec![0u8; 16];
        p[8..16].copy_from_slice(&commit.to_ne_bytes());
        for w in words {
            p.extend_from_slice(&w.to_ne_bytes());
        }
        let _ = decoder().page(&p, &mut |_| {});
    }
}
