//! Each printer against the renderers it stands for: the same lines, in the same order, and
//! nothing where its format shows nothing.

use results::{IntervalLayout, TestError, TestKind, TestSpec};

use super::{printer, Ending, Start, Tick};
use crate::fixture;
use crate::Format;

const ALL: [Format; 4] = [Format::Text, Format::Json, Format::JsonStream, Format::Iperf3Json];

fn start<'a>(spec: &'a TestSpec, host: Option<&'a results::HostInfo>, show: bool) -> Start<'a> {
    Start {
        label: "tcp-stream",
        spec,
        server: "127.0.0.1:9180",
        intervals: Some(IntervalLayout::Bulk),
        server_host: host,
        point: None,
        show_intervals: show,
    }
}

#[test]
fn text_starts_with_a_line_a_header_and_the_senders_note_unless_quiet() {
    let mut spec = TestSpec::new(TestKind::TcpStream);
    spec.interval_ms = 1000;
    let lines = printer(Format::Text).test_start(&start(&spec, None, true));
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(
        lines[0],
        format!("tcplab tcp-stream → 127.0.0.1:9180 · 1 stream · {} s", spec.duration_ms as f64 / 1000.0)
    );
    assert_eq!(lines[1], crate::text::interval_header(IntervalLayout::Bulk));
    assert_eq!(lines[2], crate::text::SENDER_RATE_NOTE);
    spec.bytes_limit = Some(1 << 20);
    spec.parallel = 2;
    spec.interval_ms = 0;
    let lines = printer(Format::Text).test_start(&start(&spec, None, true));
    assert_eq!(lines, vec!["tcplab tcp-stream → 127.0.0.1:9180 · 2 streams · 1.00 MiB to send".to_string()]);
    assert!(printer(Format::Text).test_start(&start(&spec, None, false)).is_empty());
}

#[test]
fn ndjson_shows_the_hosts_once_given_and_every_event() {
    let spec = TestSpec::new(TestKind::TcpStream);
    let host = fixture::host("srv");
    let p = printer(Format::JsonStream);
    assert_eq!(p.begin(&|| fixture::host("cli")), vec![crate::ndjson::host("client", &fixture::host("cli"))]);
    let lines = p.test_start(&start(&spec, Some(&host), false));
    let event = crate::ndjson::start("tcp-stream", "127.0.0.1:9180", &spec, None);
    assert_eq!(lines, vec![crate::ndjson::host("server", &host), event.clone()]);
    assert_eq!(p.test_start(&start(&spec, None, false)), vec![event]);
    let r = fixture::stream(1000, 65536, 9.0);
    assert_eq!(p.test_done(&r, None, false), vec![crate::ndjson::end(&r, None)]);
    let e = TestError { code: "busy".into(), message: "busy".into() };
    assert_eq!(p.error_event(&e), Some(crate::ndjson::error(&e)));
    assert!(p.note("a line for people").is_empty());
}

#[test]
fn intervals_show_as_text_tables_or_events_and_never_in_documents() {
    let r = fixture::stream(1000, 65536, 9.0);
    let iv = r.local.intervals.first().expect("the fixture has intervals");
    let receives = |_| false;
    let tick = Tick {
        label: "tcp-stream",
        intervals: Some(IntervalLayout::Bulk),
        interval: iv,
        receives: &receives,
        show_intervals: true,
    };
    assert_eq!(
        printer(Format::Text).interval(&tick),
        crate::text::interval_lines(IntervalLayout::Bulk, iv, &receives)
    );
    assert_eq!(printer(Format::JsonStream).interval(&tick), vec![crate::ndjson::interval("tcp-stream", iv)]);
    assert!(printer(Format::Json).interval(&tick).is_empty());
    assert!(printer(Format::Text).interval(&Tick { show_intervals: false, ..tick }).is_empty());
}

#[test]
fn the_end_is_the_document_or_the_text_and_only_people_see_notes_and_progress() {
    let run = fixture::run(vec![fixture::stream(1000, 65536, 9.0)]);
    let end = Ending { run: &run, text: "summary\n" };
    assert_eq!(printer(Format::Json).end(&end), vec![crate::json::document(&run)]);
    assert_eq!(printer(Format::Iperf3Json).end(&end), vec![crate::iperf3_json::document(&run)]);
    assert_eq!(printer(Format::Text).end(&end), vec!["summary".to_string()]);
    assert!(printer(Format::Text).end(&Ending { text: "", ..end }).is_empty());
    assert!(printer(Format::JsonStream).end(&end).is_empty());
    for f in ALL {
        let p = printer(f);
        assert_eq!(p.for_people(), f == Format::Text, "{f:?}");
        assert_eq!(p.note("path: 1 lost").is_empty(), f != Format::Text, "{f:?}");
        assert_eq!(
            p.error_event(&TestError { code: "x".into(), message: "y".into() }).is_some(),
            f == Format::JsonStream
        );
    }
}

#[test]
fn a_failure_outside_the_tests_is_one_document_in_the_document_formats() {
    let e = TestError { code: "error".into(), message: "no route to host".into() };
    let record = || fixture::run(Vec::new());
    assert_eq!(printer(Format::Json).failure_document(&e, &record), Some(crate::json::document(&record())));
    assert_eq!(
        printer(Format::Iperf3Json).failure_document(&e, &record),
        Some(crate::iperf3_json::error_document("no route to host"))
    );
    assert_eq!(printer(Format::Text).failure_document(&e, &record), None);
    assert_eq!(printer(Format::JsonStream).failure_document(&e, &record), None);
}

#[test]
fn a_comparison_is_the_table_for_people_and_one_json_value_for_programs() {
    use crate::compare::{Comparison, Notes, Row, Verdict};
    let rows = vec![Row {
        test: "tcp-stream".into(),
        metric: "goodput".into(),
        a: "100 Mbit/s".into(),
        b: "80 Mbit/s".into(),
        diff_pct: -20.0,
        ci_pct: Some(1.5),
        verdict: Verdict::Slower,
    }];
    let notes = Notes { only_a: vec!["len=2K".into()], ..Notes::default() };
    let c = Comparison { a: "run 1", b: "run 2", level_pct: 95.0, rows: &rows, notes: &notes };
    assert_eq!(
        printer(Format::Text).shown(&c),
        vec![crate::compare::table("run 1", "run 2", 95.0, &rows, &notes)]
    );
    let [doc] = printer(Format::Json).shown(&c).try_into().expect("one document");
    let v: serde_json::Value = serde_json::from_str(&doc).unwrap();
    assert_eq!(
        (v["rows"][0]["verdict"].as_str(), v["rows"][0]["diff_pct"].as_f64()),
        (Some("slower"), Some(-20.0))
    );
    assert_eq!(v["only_a"][0], "len=2K");
    let [line] = printer(Format::JsonStream).shown(&c).try_into().expect("one event");
    assert!(!line.contains('\n'));
}
