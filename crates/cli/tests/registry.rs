//! The registry-wide test: every registered test type runs briefly on loopback through its
//! own command, is stored, read back, and rendered in every format of the renderer registry,
//! with one headline throughout. A test type registered without a command, a headline or a
//! renderer's support for its result fails here.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod support;

use support::{json_of, stderr, stdout, tcplab, ServerProc};

/// Formats that carry no per-test headline by design.
const WITHOUT_HEADLINE: [&str; 2] = ["intervals-csv", "mesh-csv"];

#[test]
fn every_test_type_runs_stores_and_renders_one_headline_everywhere() {
    let srv = ServerProc::start(&["--max-concurrent", "2"]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db").display().to_string();
    let port = srv.port();
    for t in engine::registry::all() {
        let id = t.kind().id();
        // A file test ends when its file has arrived; -t is only its cap, which a loaded
        // machine must not reach before a small file is across.
        let brief: &[&str] =
            if t.kind() == results::TestKind::File { &["-t", "60", "--size", "1M"] } else { &["-t", "0.5"] };
        let mut args = vec![t.command(), "127.0.0.1", "-p", &port, "--json", "--db", &db];
        args.extend_from_slice(brief);
        let out = tcplab(&args);
        assert!(out.status.success(), "{id}: {}", stderr(&out));
        let doc = json_of(&out);
        let run = doc["id"].as_i64().unwrap_or_else(|| panic!("{id}: no archive id"));
        let headline: results::Headline =
            serde_json::from_value(doc["tests"][0]["summary"]["headline"].clone()).unwrap();
        assert_eq!(headline.metric, t.headline(), "{id}");
        let value = headline.value.unwrap_or_else(|| panic!("{id}: no headline value"));
        assert!(value > 0.0, "{id}: headline {value}");
        let stored = json_of(&tcplab(&["show", &run.to_string(), "-f", "json", "--db", &db]));
        assert_eq!(stored["tests"][0]["summary"]["headline"], doc["tests"][0]["summary"]["headline"], "{id}");
        let shown = report::units::headline(Some(headline));
        for r in report::renderers().iter().filter(|r| !WITHOUT_HEADLINE.contains(&r.name)) {
            let out = tcplab(&["show", &run.to_string(), "-f", r.name, "--db", &db]);
            assert!(out.status.success(), "{id} as {}: {}", r.name, stderr(&out));
            let text = stdout(&out);
            let found = match r.name {
                "json" => json_of(&out)["tests"][0]["summary"]["headline"]["value"].as_f64() == Some(value),
                "csv" => csv_headline(&text) == Some(value),
                _ => text.contains(&shown),
            };
            assert!(found, "{id} as {}: headline {shown} ({value}) not found in:\n{text}", r.name);
        }
    }
}

/// The `headline_value` of the first row of a tests CSV.
fn csv_headline(csv: &str) -> Option<f64> {
    let mut lines = csv.lines();
    let col = lines.next()?.split(',').position(|h| h == "headline_value")?;
    lines.next()?.split(',').nth(col)?.parse().ok()
}
