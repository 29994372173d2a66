//! A tcptrace-style time-sequence graph (one [`SeqView`]): time across, relative sequence
//! number up; each data segment (or bucket of segments) a vertical bar from its first
//! sequence number to the end of its payload, retransmissions in another colour; the ACK
//! stairs and the window stairs (ACK + announced window) of the other direction; SYN, FIN
//! and RST marked with their letter; a legend. All bars of one colour are one `<path>`, so
//! a few thousand bars stay small.

use std::fmt::Write;

use results::segment_flow::{SeqView, TimeSequence};

use super::frame::Frame;
use super::scale::{Scale, ScaleKind, TickFormat};
use super::svg::{num, Anchor, Svg};

/// Colours: data, retransmission, ACK, window, marks.
pub const DATA: &str = "#0072B2";
/// Retransmitted data.
pub const RETX: &str = "#D55E00";
/// The ACK stairs.
pub const ACK: &str = "#009E73";
/// The window stairs.
pub const WINDOW: &str = "#E69F00";
const MARK: &str = "#000000";

/// Legend entries, in drawing order.
const LEGEND: [(&str, &str); 5] = [
    ("data segment", DATA),
    ("retransmission", RETX),
    ("ACK", ACK),
    ("window edge", WINDOW),
    ("SYN / FIN / RST", MARK),
];

/// The graph as one `<svg>` element; `x_ms` draws time in ms (a zoomed slice), else in s.
pub fn render(title: &str, v: &SeqView, x_ms: bool) -> String {
    let f = Frame::new(true);
    let mut svg = Svg::new(f.width, f.height, title);
    f.title(&mut svg, title);
    let div = if x_ms { 1.0 } else { 1e3 };
    let mut ts: Vec<f64> = v.bars.iter().map(|b| b.t_ms / div).collect();
    ts.extend(v.acks.iter().map(|a| a.t_ms / div));
    ts.extend(v.marks.iter().map(|m| m.t_ms / div));
    let mut ys: Vec<f64> = v.bars.iter().flat_map(|b| [b.seq as f64, b.end as f64]).collect();
    ys.extend(v.acks.iter().flat_map(|a| [a.ack as f64, a.window_end as f64]));
    ys.extend(v.marks.iter().map(|m| m.seq as f64));
    let xs = Scale::fit(ScaleKind::Linear, &ts, !x_ms, TickFormat::Number);
    let yscale = Scale::fit(ScaleKind::Linear, &ys, false, TickFormat::Bytes);
    f.y_axis(&mut svg, &yscale, "relative sequence number (bytes)");
    f.x_axis(&mut svg, &xs, if x_ms { "time (ms)" } else { "time (s)" });
    if v.bars.is_empty() {
        f.no_data(&mut svg);
    }
    let at = |t_ms: f64, seq: u64| (f.x(xs.frac(t_ms / div)), f.y(yscale.frac(seq as f64)));
    stairs(&mut svg, "window", v.acks.iter().map(|a| at(a.t_ms, a.window_end)), WINDOW, &f);
    stairs(&mut svg, "acks", v.acks.iter().map(|a| at(a.t_ms, a.ack)), ACK, &f);
    for retx in [false, true] {
        let ends = v.bars.iter().filter(|b| b.retx == retx).map(|b| (at(b.t_ms, b.seq), at(b.t_ms, b.end).1));
        bars(&mut svg, ends, if retx { RETX } else { DATA }, v.bucket_ms.is_none() && v.bars.len() <= 400);
    }
    svg.open_group("marks");
    for m in &v.marks {
        let (x, y) = at(m.t_ms, m.seq);
        svg.circle((x, y), 3.0, MARK, Some(&format!("{} at {:.3} ms, seq {}", m.flag, m.t_ms, m.seq)));
        svg.text((x + 4.0, y - 4.0), Anchor::Start, &m.flag[..1], "font-size=\"10\"");
    }
    svg.close_group();
    legend(&mut svg, &f);
    svg.finish()
}

/// Vertical bars from `(x, y_seq)` up to `y_end`; with `ticks`, short horizontal ends (the
/// tcptrace "I").
fn bars(svg: &mut Svg, ends: impl Iterator<Item = ((f64, f64), f64)>, colour: &str, ticks: bool) {
    let mut d = String::new();
    for ((x, y0), y1) in ends {
        let y1 = if (y0 - y1).abs() < 1.0 { y0 - 1.0 } else { y1 };
        let _ = write!(d, "M{} {}V{}", num(x), num(y0), num(y1));
        if ticks {
            let _ = write!(d, "M{} {}h4M{} {}h4", num(x - 2.0), num(y0), num(x - 2.0), num(y1));
        }
    }
    if d.is_empty() {
        return;
    }
    svg.open_group(if colour == RETX { "retransmissions" } else { "segments" });
    svg.path(&d, "none", colour, None);
    svg.close_group();
}

/// A staircase through `points`: each value holds until the next one.
fn stairs(svg: &mut Svg, class: &str, points: impl Iterator<Item = (f64, f64)>, colour: &str, f: &Frame) {
    let mut line: Vec<(f64, f64)> = Vec::new();
    for (x, y) in points {
        if let Some(&(_, prev)) = line.last() {
            line.push((x, prev));
        }
        line.push((x, y.clamp(f.top, f.bottom)));
    }
    if line.is_empty() {
        return;
    }
    svg.open_group(class);
    svg.polyline(&line, colour, 1.2, "");
    svg.close_group();
}

/// What a graph shows and what was merged, for the caption under it.
pub fn caption(ts: &TimeSequence) -> String {
    let head = format!(
        "{} data segments of connection {} as captured at the {} ({} retransmitted)",
        ts.data_segments, ts.connection, ts.at, ts.retransmissions
    );
    let (Some(width), Some(z)) = (ts.overview.bucket_ms, &ts.zoom) else {
        return format!("{head}: every segment and ACK drawn.");
    };
    let (t0, t1) = (z.bars.first().map_or(0.0, |b| b.t_ms), z.bars.last().map_or(0.0, |b| b.t_ms));
    format!(
        "{head}. Decimated: the overview merges them into {} non-empty time buckets of {width:.3} ms (per bucket one \
         bar spanning its new data, one its retransmitted data, the last ACK and the farthest window \
         edge); the zoomed graph shows {} consecutive segments ({t0:.3}–{t1:.3} ms) and their {} ACKs in \
         full detail.",
        ts.overview.bars.iter().map(|b| b.t_ms.to_bits()).collect::<std::collections::BTreeSet<_>>().len(),
        z.bars.len(),
        z.acks.len()
    )
}

/// The graphs of a test's directions (overview, then zoom) as one standalone SVG file,
/// stacked, each with its caption.
pub fn standalone(label: &str, graphs: &[&TimeSequence]) -> String {
    let f = Frame::new(true);
    let mut parts: Vec<(String, String)> = Vec::new();
    for ts in graphs {
        let title = format!("{label} {}: time-sequence", ts.direction);
        parts.push((render(&title, &ts.overview, false), caption(ts)));
        if let Some(z) = &ts.zoom {
            parts.push((render(&format!("{title}, zoomed"), z, true), String::new()));
        }
    }
    let step = f.height + 24.0;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" font-family=\"system-ui, sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
        w = num(f.width),
        h = num(step * parts.len().max(1) as f64)
    );
    for (i, (plot, caption)) in parts.iter().enumerate() {
        let y = step * i as f64;
        let _ = writeln!(out, "<g transform=\"translate(0 {})\">{plot}</g>", num(y));
        if !caption.is_empty() {
            let _ = writeln!(out, "<desc>{}</desc>", super::svg::esc(caption));
        }
    }
    out.push_str("</svg>\n");
    out
}

fn legend(svg: &mut Svg, f: &Frame) {
    svg.open_group("legend");
    let x = f.right + 14.0;
    let mut y = f.top + 6.0;
    for (name, colour) in LEGEND {
        svg.line((x + 11.0, y - 10.0), (x + 11.0, y + 2.0), colour, 2.0);
        svg.line((x, y - 4.0), (x + 22.0, y - 4.0), colour, 1.2);
        svg.text((x + 28.0, y), Anchor::Start, name, "");
        y += 17.0;
    }
    svg.close_group();
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::segment_flow::{SeqAck, SeqBar, SeqMark};

    fn view() -> SeqView {
        SeqView {
            bucket_ms: None,
            segments: 3,
            bars: vec![
                SeqBar { t_ms: 0.03, seq: 1, end: 30001, retx: false },
                SeqBar { t_ms: 0.04, seq: 30001, end: 60001, retx: false },
                SeqBar { t_ms: 0.06, seq: 30001, end: 60001, retx: true },
            ],
            acks: vec![
                SeqAck { t_ms: 0.05, ack: 30001, window_end: 90001 },
                SeqAck { t_ms: 0.07, ack: 60001, window_end: 125001 },
            ],
            marks: vec![SeqMark { t_ms: 0.0, seq: 0, flag: "SYN".into() }],
        }
    }

    #[test]
    fn bars_stairs_marks_and_legend_are_drawn() {
        let out = render("t", &view(), true);
        assert_eq!(out.matches("<g class=\"segments\">").count(), 1);
        assert_eq!(out.matches("<g class=\"retransmissions\">").count(), 1);
        let seg = out.split("<g class=\"segments\">").nth(1).unwrap_or_default();
        let d = seg.split("d=\"").nth(1).unwrap_or_default();
        assert_eq!(d.split('M').filter(|s| s.contains('V')).count(), 2, "two new-data bars: {d}");
        let acks = out.split("<g class=\"acks\">").nth(1).unwrap_or_default();
        let pts = acks.split("points=\"").nth(1).unwrap_or_default().split('"').next().unwrap_or_default();
        assert_eq!(pts.split(' ').count(), 3, "two ACKs make one stair: {pts}");
        assert!(out.contains("<g class=\"window\">") && out.contains("SYN at 0.000 ms, seq 0"));
        for (name, _) in LEGEND {
            assert!(out.contains(&format!(">{}</text>", super::super::svg::esc(name))), "{name}");
        }
        assert!(out.contains("time (ms)") && out.contains("relative sequence number"));
    }

    #[test]
    fn an_empty_view_says_no_data() {
        assert!(render("t", &SeqView::default(), false).contains("no data"));
    }
}
