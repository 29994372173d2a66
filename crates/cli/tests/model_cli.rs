//! `tcplab model` end to end: every worked number of reference/theory.md through the real
//! binary (JSON and CSV), and one clear error line with exit 2 for bad input.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::process::Output;

use serde_json::Value;

fn tcplab(args: &[&str]) -> Output {
    support::command().arg("model").args(args).output().unwrap()
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = tcplab(&all);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Goodput in Mbit/s for a link and stack.
fn goodput(link: &str, stack: &str) -> f64 {
    json(&["goodput", "--link", link, "--stack", stack])["goodput"]["goodput_bps"].as_f64().unwrap() / 1e6
}

fn assert_near(got: f64, want: f64, tol: f64, what: &str) {
    assert!((got - want).abs() <= tol, "{what}: got {got}, want {want}");
}

#[test]
fn atm_goodput_table_1_3() {
    for (link, stack, want) in [
        ("atm:oc3c:mtu=9180", "tcp", 134.51),
        ("atm:oc3c:mtu=9180", "ipv4/tcp+ts", 134.34),
        ("atm:oc3c:vcmux", "tcp", 134.51),
        ("atm:oc3c:mtu=9152", "tcp", 134.80),
        ("atm:oc3c:lane", "tcp", 128.92),
        ("atm:oc3c:lane", "tcp+ts", 127.86),
        ("atm:oc3c:mtu=1500", "tcp", 128.92),
    ] {
        assert_near(goodput(link, stack), want, 0.005, &format!("{link} {stack}"));
    }
}

#[test]
fn taxi_goodput_table_1_4() {
    for (link, want) in [
        ("taxi:140:vcmux:mtu=9188", 125.86),
        ("taxi:140:aal34:vcmux:mtu=9188", 115.62),
        ("taxi:100", 89.82),
        ("taxi:100:aal34:vcmux:mtu=9188", 82.59),
    ] {
        assert_near(goodput(link, "tcp"), want, 0.005, link);
    }
}

#[test]
fn ethernet_goodput_table_3() {
    for (link, stack, want) in [
        ("ethernet:1g", "tcp", 949.28),
        ("ethernet:1g", "tcp+ts", 941.48),
        ("ethernet:1g:vlan", "tcp", 946.82),
        ("ethernet:1g:vlan", "tcp+ts", 939.04),
        ("ethernet:1g:jumbo", "tcp", 991.37),
        ("ethernet:1g:mtu=9000", "tcp+ts", 990.04),
        ("ethernet:1g:mtu=9000:vlan", "tcp", 990.93),
        ("ethernet:1g:mtu=9000:vlan", "tcp+ts", 989.60),
    ] {
        assert_near(goodput(link, stack), want, 0.005, &format!("{link} {stack}"));
    }
    assert_near(goodput("ethernet:10g", "tcp+ts"), 9415.0, 0.5, "10g");
    assert_near(goodput("ethernet:10g:jumbo", "tcp+ts"), 9900.0, 0.5, "10g jumbo");
}

#[test]
fn itemised_overhead_adds_up_and_acks_are_counted() {
    let v = json(&["goodput", "--link", "atm:oc3c:mtu=9180", "--stack", "tcp"]);
    let g = &v["goodput"];
    assert_eq!(g["cells"], 192);
    assert_eq!(g["wire_bytes"], 10_176);
    let items: i64 = g["items"].as_array().unwrap().iter().map(|i| i["bytes"].as_i64().unwrap()).sum();
    assert_eq!(items + 9140, 10_176);
    let pad = g["items"].as_array().unwrap().iter().find(|i| i["kind"] == "aal5-pad").unwrap();
    assert_eq!(pad["bytes"], 20);
    assert_eq!(v["acks"]["ack_cells"], 2);
    let eth = json(&["goodput", "--link", "ethernet:1g", "--stack", "tcp"]);
    assert_eq!(eth["acks"]["ack_wire_bytes"], 84);
    assert_near(eth["acks"]["reverse_fraction"].as_f64().unwrap() * 100.0, 2.7, 0.05, "ACK share");
    let text =
        String::from_utf8_lossy(&tcplab(&["goodput", "--link", "atm:oc3c:mtu=9180"]).stdout).to_string();
    for needle in ["134.51 Mbit/s", "AAL5 pad", "cell headers", "LLC/SNAP", "192 cells"] {
        assert!(text.contains(needle), "{needle} missing in:\n{text}");
    }
}

/// Goodput (Mbit/s) per message size from the CSV of `model curve`.
fn curve_csv(link: &str, sizes: &str) -> Vec<(u64, f64)> {
    let out = tcplab(&["curve", "--link", link, "--sizes", sizes, "--csv"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("message_bytes,packets,wire_bytes,goodput_bps,coalesced_goodput_bps"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[3].parse::<f64>().unwrap() / 1e6)
        })
        .collect()
}

#[test]
fn message_size_curve_table_2() {
    let sizes = "1,40,48,64,100,256,512,1024,1460,1461,2048,4096,8192,9140,9141,16384,32768,65536";
    let clip = [
        1.41, 56.51, 45.21, 60.28, 70.64, 103.34, 120.56, 125.80, 128.92, 129.01, 131.52, 133.03, 134.58,
        134.51, 133.14, 134.19, 134.38, 134.38,
    ];
    let lane = [
        1.41, 37.68, 45.21, 60.28, 70.64, 103.34, 120.56, 125.80, 128.92, 121.42, 125.80, 128.60, 128.60,
        127.85, 127.87, 128.24, 128.78, 128.87,
    ];
    for (link, want) in [("atm:oc3c", clip), ("atm:oc3c:lane", lane)] {
        let got = curve_csv(link, sizes);
        assert_eq!(got.len(), want.len());
        for ((size, mbit), w) in got.iter().zip(want) {
            assert_near(*mbit, w, 0.005, &format!("{link} M={size}"));
        }
    }
    let doubling = curve_csv("ethernet:1g", "1..65536:x2");
    assert_eq!(doubling.len(), 17);
}

#[test]
fn bdp_and_window_table_4() {
    let b = json(&["bdp", "--rate", "1g", "--rtt", "170ms"]);
    assert_eq!(b["bdp_bytes"].as_f64().unwrap().round(), 21_250_000.0);
    assert_eq!(b["bdp_segments"].as_f64().unwrap().floor(), 14_675.0);
    assert_eq!(b["min_window_scale"], 9);
    let oc3 = json(&["bdp", "--rate", "134.5m", "--rtt", "1ms"]);
    assert_near(oc3["bdp_bytes"].as_f64().unwrap() / 1e3, 16.8, 0.05, "OC-3 BDP kB");
    let text =
        String::from_utf8_lossy(&tcplab(&["bdp", "--rate", "1g", "--rtt", "170ms"]).stdout).to_string();
    assert!(text.contains("20.3 MiB (21250000 B)"), "{text}");
    let window = |w: &str, rtt: &str, extra: &[&str]| {
        let mut args = vec!["window", "--window", w, "--rtt", rtt];
        args.extend_from_slice(extra);
        json(&args)
    };
    assert_near(window("65535", "170ms", &[])["window_rate_bps"].as_f64().unwrap() / 1e6, 3.08, 0.005, "64K");
    assert_near(window("4M", "170ms", &[])["window_rate_bps"].as_f64().unwrap() / 1e6, 197.4, 0.05, "4M");
    assert_near(window("8192", "1ms", &[])["limit_bps"].as_f64().unwrap() / 1e6, 65.5, 0.05, "8K");
    let w16 = window("16384", "1ms", &["--link", "atm:oc3c"]);
    assert_eq!(w16["bound"], "window");
    let w32 = window("32768", "1ms", &["--link", "atm:oc3c"]);
    assert_eq!(w32["bound"], "link");
    assert_near(w32["limit_bps"].as_f64().unwrap() / 1e6, 134.51, 0.005, "32K capped");
}

#[test]
fn loss_models_table_5() {
    let loss = |p: &str| json(&["loss", "--mss", "1448", "--rtt", "170ms", "--loss", p]);
    for (p, mathis, delayed, padhye, tfrc) in [
        ("1e-4", 8.35, 5.90, 5.89, 8.34),
        ("1e-3", 2.64, -1.0, 1.84, 2.62),
        ("1e-2", 0.835, 0.590, 0.52, 0.77),
        ("5e-2", 0.37, -1.0, 0.15, 0.25),
    ] {
        let m = &loss(p)["models"];
        let mbit = |k: &str| m[k].as_f64().unwrap() / 1e6;
        assert_near(mbit("mathis_bps"), mathis, 0.005, "mathis");
        if delayed > 0.0 {
            assert_near(mbit("mathis_delayed_ack_bps"), delayed, 0.005, "mathis 0.87");
        }
        assert_near(mbit("padhye_bps"), padhye, 0.005, "padhye");
        assert_near(mbit("tfrc_bps"), tfrc, 0.005, "tfrc");
    }
    assert_near(loss("1e-4")["models"]["cubic"]["rate_bps"].as_f64().unwrap() / 1e6, 19.0, 0.05, "cubic");
    let budget = json(&["loss", "--rtt", "170ms", "--loss", "1e-4", "--target", "1g"]);
    assert_near(budget["budget"]["loss_probability"].as_f64().unwrap() * 1e9, 7.0, 0.05, "p for 1 Gbit/s");
}

#[test]
fn bad_input_is_one_error_line_and_exit_2() {
    for args in [
        vec!["goodput", "--link", "atm:oc3x"],
        vec!["goodput", "--link", "ethernet"],
        vec!["goodput", "--link", "ethernet:1g:mtu=20"],
        vec!["goodput", "--link", "ethernet:1g", "--stack", "udp+ts"],
        vec!["goodput", "--link", "ethernet:1g", "--size", "0"],
        vec!["curve", "--link", "ethernet:1g", "--sizes", "8..1"],
        vec!["window", "--window", "64K", "--rtt", "170"],
        vec!["bdp", "--rate", "1gbps", "--rtt", "1ms"],
        vec!["loss", "--rtt", "170ms", "--loss", "2"],
        vec!["loss", "--rtt", "170ms", "--loss", "x"],
    ] {
        let out = tcplab(&args);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: ") && err.trim_end().lines().count() == 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// One grammar of rates for every flag and spec: `100Mbps` refused everywhere with the same
/// reason, `100M` and `100mbit` the same rate everywhere.
#[test]
fn rate_strings_mean_the_same_on_every_flag_and_spec() {
    let reason = "'bps' is ambiguous (tc reads it as bytes per second): write bit/s as 100M or 100mbit";
    let refused: [&[&str]; 5] = [
        &["udp", "127.0.0.1", "-b", "100Mbps"],
        &["model", "goodput", "--link", "ethernet:100Mbps"],
        &["model", "bdp", "--rate", "100Mbps", "--rtt", "10ms"],
        &["stream", "127.0.0.1", "--link", "ethernet:100Mbps"],
        &["emu", "--path", "rate=100Mbps", "--", "true"],
    ];
    for args in refused {
        let out = support::tcplab(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(reason), "{args:?}: {err}");
    }
    let bdp = |rate: &str| tcplab(&["bdp", "--rate", rate, "--rtt", "10ms"]).stdout;
    assert_eq!(bdp("100M"), bdp("100mbit"));
    assert_eq!(bdp("100M"), bdp("100000000"));
    let goodput = |rate: &str| tcplab(&["goodput", "--link", &format!("ethernet:{rate}")]).stdout;
    assert_eq!(goodput("100M"), goodput("100mbit"));
}
