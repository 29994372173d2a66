//! Command lines a new user (coming from iperf3) types: each is taken, or refused with one
//! clear error line that says what to do, never a misleading suggestion.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use support::{stderr, stdout, tcplab};

/// Runs `args`, expects a usage error (exit 2) and returns its first line.
fn refused(args: &[&str]) -> String {
    let out = tcplab(args);
    assert_eq!(out.status.code(), Some(2), "{args:?} was accepted: {}", stdout(&out));
    let err = stderr(&out);
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    err.lines().next().unwrap().to_string()
}

#[test]
fn a_negative_time_is_a_bad_value_not_a_flag() {
    for flag in ["-t", "-i", "-O"] {
        let line = refused(&["stream", "127.0.0.1", flag, "-1"]);
        assert!(line.contains("'-1': seconds cannot be negative"), "{flag}: {line}");
        assert!(!stderr(&tcplab(&["stream", "127.0.0.1", flag, "-1"])).contains("-- -1"));
    }
    // Digits are still flags where they are flags: -4 / -6 after a value-less flag.
    let line = refused(&["stream", "127.0.0.1", "-t", "-2", "-4"]);
    assert!(line.contains("seconds cannot be negative"), "{line}");
}

#[test]
fn iperf3s_cport_is_explained_not_mistaken_for_port() {
    let out = tcplab(&["stream", "127.0.0.1", "--cport", "5000"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("tcplab does not pick the client's ports"), "{err}");
    assert!(!err.contains("a similar argument exists"), "{err}");
}

#[test]
fn compare_cc_rounds_from_before_the_schedule_flags_points_to_repeat() {
    let out = tcplab(&["compare-cc", "--rounds", "3", "--cc", "cubic,bbr"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("required arguments were not provided") && err.contains("--every"), "{err}");
    assert!(err.contains("`--repeat N`"), "{err}");
    // A scheduled command line with the same mistake elsewhere gets clap's message alone.
    assert!(!stderr(&tcplab(&["stream", "--rounds", "3"])).contains("--repeat"));
}

#[test]
fn server_takes_iperf3s_dash_d() {
    // -D is --daemon, which needs --pidfile: the error is about that, not about -D.
    refused(&["server", "-D"]);
    let err = stderr(&tcplab(&["server", "-D"]));
    assert!(err.contains("--pidfile") && !err.contains("unexpected argument"), "{err}");
    let help = stdout(&tcplab(&["server", "--help"]));
    assert!(help.contains("-D, --daemon"), "{help}");
}

#[test]
fn help_shows_no_empty_default_for_host() {
    for cmd in ["stream", "rr", "udp", "file"] {
        let help = stdout(&tcplab(&[cmd, "--help"]));
        assert!(help.contains("[HOST]") || help.contains("<HOST>"), "{cmd}: {help}");
        assert!(!help.contains("[default: \"\"]"), "{cmd} --help shows an empty default: {help}");
    }
}

#[test]
fn json_formats_are_one_at_a_time() {
    for (a, b) in [("--iperf3-json", "--json"), ("--json", "--iperf3-json"), ("-J", "--json-stream")] {
        for cmd in ["stream", "udp", "run"] {
            let line = refused(&[cmd, "127.0.0.1", a, b, "-t", "0.1"]);
            assert!(line.contains("cannot be used with"), "{cmd} {a} {b}: {line}");
        }
    }
}

/// The NDJSON events on stdout, parsed.
fn events(out: &std::process::Output) -> Vec<serde_json::Value> {
    stdout(out).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn json_stream_says_every_failure_once_as_an_error_event() {
    // Refused by the parser, by the settings, and by the run (nothing listens on port 1).
    let cases: [(&[&str], &str); 3] = [
        (&["stream", "127.0.0.1", "-l", "0", "--json-stream"], "usage"),
        (&["stream", "--path", "rate=fast", "--json-stream"], "error"),
        (&["stream", "127.0.0.1", "-p", "1", "-t", "0.2", "--json-stream"], "connect"),
    ];
    for (args, code) in cases {
        let out = tcplab(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let errors: Vec<_> = events(&out).into_iter().filter(|e| e["event"] == "error").collect();
        assert_eq!(errors.len(), 1, "{args:?}: {}", stdout(&out));
        assert_eq!(errors[0]["error"]["code"], code, "{args:?}");
        let message = errors[0]["error"]["message"].as_str().unwrap();
        assert!(stderr(&out).contains(message), "{args:?}: stderr and the event differ");
    }
    let out = tcplab(&["stream", "127.0.0.1", "-l", "0", "--iperf3-json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["error"].as_str().unwrap().contains("'0'"), "{doc}");
}
