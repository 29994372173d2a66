//! Tables of `tcplab model`: itemised overhead, goodput versus message size, window, BDP and
//! loss bounds, as text for people, CSV for spreadsheets and JSON for programs. Rates are
//! printed in Mbit/s with two decimals, the precision of theory.md's worked numbers.

use std::fmt::Write;

use model::goodput::{AckLoad, CurvePoint, Goodput};
use model::loss::{Comparison, LossBudget};
use model::window::{Bdp, Bound, WindowLimit};
use model::{Link, Stack};
use serde::Serialize;

/// Any model result as pretty JSON.
pub fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value)
        .unwrap_or_else(|e| format!("{{\"error\":{{\"code\":\"json\",\"message\":\"{e}\"}}}}"))
}

fn mbit(bps: f64) -> String {
    format!("{:.2} Mbit/s", bps / 1e6)
}

fn link_line(o: &mut String, link: &Link, stack: &Stack) {
    let _ = writeln!(
        o,
        "link     {link} · line {} · payload {} · MTU {} B",
        mbit(link.line_rate().bps_f64()),
        mbit(link.payload_rate().bps_f64()),
        link.mtu_bytes()
    );
    let headers = stack.header_bytes().map(|h| format!(" · {h} B of headers per packet")).unwrap_or_default();
    let _ = writeln!(o, "stack    {stack}{headers}");
}

/// The itemised goodput of one message size (the largest segment by default).
pub fn goodput_text(link: &Link, stack: &Stack, g: &Goodput, ack: Option<&AckLoad>) -> String {
    let mut o = String::new();
    link_line(&mut o, link, stack);
    let cells = g.cells.map(|c| format!(" · {c} cells")).unwrap_or_default();
    let _ = writeln!(
        o,
        "message  {} B → {} packet{}{cells} · {} B on the wire",
        g.message_bytes,
        g.packets,
        if g.packets == 1 { "" } else { "s" },
        g.wire_bytes
    );
    let _ = writeln!(
        o,
        "goodput  {} · {:.2}% of the payload rate · {:.2}% of the line rate",
        mbit(g.goodput_bps),
        g.efficiency * 100.0,
        g.goodput_bps / g.line_rate_bps.max(1) as f64 * 100.0
    );
    let _ = writeln!(
        o,
        "         {:.1} messages/s · {:.1} packets/s · {:.2} µs per message",
        g.messages_per_s,
        g.packets_per_s,
        g.wire_time_ns / 1e3
    );
    let _ = writeln!(o, "\n  {:<28}{:>10}{:>12}", "per message", "bytes", "% of wire");
    let share = |b: i64| b as f64 / g.wire_bytes.max(1) as f64 * 100.0;
    for item in &g.items {
        let _ = writeln!(o, "  {:<28}{:>10}{:>12.2}", item.kind.label(), item.bytes, share(item.bytes));
    }
    let payload = i64::try_from(g.message_bytes).unwrap_or(i64::MAX);
    let _ = writeln!(o, "  {:<28}{:>10}{:>12.2}", "application data", payload, share(payload));
    let _ = writeln!(o, "  {:<28}{:>10}{:>12.2}", "total on the wire", g.wire_bytes, 100.0);
    if let Some(a) = ack {
        let cells = a.ack_cells.map(|c| format!(" ({c} cells)")).unwrap_or_default();
        let _ = writeln!(
            o,
            "\nACKs     one per {} segments: {} B IP, {} B on the wire{cells}; {} = {:.2}% of the reverse link",
            a.segments_per_ack,
            a.ack_ip_bytes,
            a.ack_wire_bytes,
            mbit(a.ack_rate_bps),
            a.reverse_fraction * 100.0
        );
    }
    o
}

/// The itemised goodput as CSV: `item,bytes`.
pub fn goodput_csv(g: &Goodput) -> String {
    let mut o = String::from("item,bytes\n");
    for item in &g.items {
        let _ = writeln!(o, "{},{}", item.kind.label(), item.bytes);
    }
    let _ = writeln!(o, "application data,{}\ntotal on the wire,{}", g.message_bytes, g.wire_bytes);
    let _ = writeln!(o, "goodput_bps,{:.0}", g.goodput_bps);
    o
}

/// Goodput versus message size as a table.
pub fn curve_text(link: &Link, stack: &Stack, points: &[CurvePoint]) -> String {
    let mut o = String::new();
    link_line(&mut o, link, stack);
    let _ = writeln!(
        o,
        "\n{:>10}{:>9}{:>12}{:>18}{:>18}",
        "message B", "packets", "wire B", "own segments", "coalesced"
    );
    for p in points {
        let _ = writeln!(
            o,
            "{:>10}{:>9}{:>12}{:>18}{:>18}",
            p.message_bytes,
            p.packets,
            p.wire_bytes,
            mbit(p.goodput_bps),
            mbit(p.coalesced_goodput_bps)
        );
    }
    let _ = writeln!(o, "\n(own segments: each write sent alone, as with -N or request/response; coalesced: bulk TCP with Nagle, full-size segments)");
    o
}

/// Goodput versus message size as CSV.
pub fn curve_csv(points: &[CurvePoint]) -> String {
    let mut o = String::from("message_bytes,packets,wire_bytes,goodput_bps,coalesced_goodput_bps\n");
    for p in points {
        let _ = writeln!(
            o,
            "{},{},{},{:.0},{:.0}",
            p.message_bytes, p.packets, p.wire_bytes, p.goodput_bps, p.coalesced_goodput_bps
        );
    }
    o
}

/// `quantity,value` lines.
pub fn pairs_csv(pairs: &[(&str, String)]) -> String {
    let mut o = String::from("quantity,value\n");
    for (k, v) in pairs {
        let _ = writeln!(o, "{k},{v}");
    }
    o
}

/// The window limit as `quantity,value` pairs (for text and CSV alike).
pub fn window_pairs(w: &WindowLimit) -> Vec<(&'static str, String)> {
    let mut v = vec![
        ("window_bytes", w.window_bytes.to_string()),
        ("rtt_ms", format!("{}", w.rtt_ns as f64 / 1e6)),
        ("window_rate_bps", format!("{:.0}", w.window_rate_bps)),
    ];
    if let Some(l) = w.link_rate_bps {
        v.push(("link_rate_bps", format!("{l:.0}")));
    }
    v.push(("limit_bps", format!("{:.0}", w.limit_bps)));
    v.push(("bound", if w.bound == Bound::Window { "window" } else { "link" }.into()));
    v
}

/// The window limit in words.
pub fn window_text(w: &WindowLimit) -> String {
    let mut o = format!(
        "window {} B over RTT {} ms: ≤ {}\n",
        w.window_bytes,
        w.rtt_ns as f64 / 1e6,
        mbit(w.window_rate_bps)
    );
    if let Some(l) = w.link_rate_bps {
        let bound = if w.bound == Bound::Window { "the window" } else { "the link" };
        let _ = writeln!(o, "link limit {}: {} bounds it at {}", mbit(l), bound, mbit(w.limit_bps));
    }
    o
}

/// The bandwidth-delay product as pairs.
pub fn bdp_pairs(b: &Bdp) -> Vec<(&'static str, String)> {
    vec![
        ("rate_bps", format!("{:.0}", b.rate_bps)),
        ("rtt_ms", format!("{}", b.rtt_ns as f64 / 1e6)),
        ("bdp_bytes", format!("{:.0}", b.bdp_bytes)),
        ("mss_bytes", b.mss_bytes.to_string()),
        ("bdp_segments", format!("{:.1}", b.bdp_segments)),
        ("min_window_scale", b.min_window_scale.map_or("none".into(), |s| s.to_string())),
    ]
}

/// The bandwidth-delay product in words.
pub fn bdp_text(b: &Bdp) -> String {
    let scale = match b.min_window_scale {
        Some(s) => format!("window scale ≥ {s} (65,535 × 2^{s} = {})", crate::units::bytes(65_535u64 << s)),
        None => "more than window scaling can advertise (shift 14)".into(),
    };
    format!(
        "BDP {} × {} ms = {} ({:.0} B) = {:.0} segments of {} B\nneeds {scale}\n",
        mbit(b.rate_bps),
        b.rtt_ns as f64 / 1e6,
        crate::units::bytes(b.bdp_bytes as u64),
        b.bdp_bytes,
        b.bdp_segments,
        b.mss_bytes
    )
}

/// The loss models as pairs.
pub fn loss_pairs(c: &Comparison, budget: Option<&LossBudget>) -> Vec<(&'static str, String)> {
    let mut v = vec![
        ("mathis_bps", format!("{:.0}", c.mathis_bps)),
        ("mathis_delayed_ack_bps", format!("{:.0}", c.mathis_delayed_ack_bps)),
        ("padhye_bps", format!("{:.0}", c.padhye_bps)),
        ("tfrc_bps", format!("{:.0}", c.tfrc_bps)),
        ("cubic_bps", format!("{:.0}", c.cubic.rate_bps)),
    ];
    if let Some(b) = budget {
        v.push(("target_loss_probability", format!("{:e}", b.loss_probability)));
    }
    v
}

/// The loss models side by side.
pub fn loss_text(c: &Comparison, budget: Option<(f64, &LossBudget)>) -> String {
    let p = &c.path;
    let mut o = format!(
        "MSS {} B · RTT {} ms · p = {:.1e}\n\n",
        p.mss_bytes,
        p.rtt_ns as f64 / 1e6,
        p.loss_probability
    );
    let t0 = c.padhye.rto_ns as f64 / 1e9;
    let rows = [
        ("Mathis, C = 1.22 (every segment ACKed)".to_string(), c.mathis_bps),
        ("Mathis, C = 0.87 (delayed ACKs)".to_string(), c.mathis_delayed_ack_bps),
        (format!("Padhye, b = {}, T0 = {t0} s", c.padhye.segments_per_ack), c.padhye_bps),
        ("RFC 5348 (TFRC), b = 1, T0 = 4·RTT".to_string(), c.tfrc_bps),
        (format!("CUBIC, mean window {:.1} segments", c.cubic.window_segments), c.cubic.rate_bps),
    ];
    for (name, bps) in rows {
        let _ = writeln!(o, "  {name:<44}{:>16}", mbit(bps));
    }
    if let Some((target, b)) = budget {
        let _ = writeln!(
            o,
            "\nfor {} (Mathis, C = 1.22): p ≤ {:.1e}, one loss per {:.3e} segments, every {:.0} s",
            mbit(target),
            b.loss_probability,
            b.segments_per_loss,
            b.seconds_between_losses
        );
    }
    let _ = writeln!(o, "\n(reference bounds for Reno-like behaviour; BBR does not follow them)");
    o
}
