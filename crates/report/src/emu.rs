//! Text for the link emulator: its per-direction counters and the list of path presets.

use std::fmt::Write;

use results::{EmuDirection, EmuReport, EmuTally};

/// The counters of an emulated path, one block of lines per direction.
pub fn text(r: &EmuReport) -> String {
    let offload = if r.offload { " (TUN offload: super-packets, counted per segment)" } else { "" };
    let mut out = format!("emulated path: {}{offload}\n", r.path);
    for d in &r.directions {
        direction_lines(&mut out, d);
    }
    for d in r.late_directions() {
        let _ = writeln!(
            out,
            "  warning: {} released late (p99 {:.0} µs > {:.0} µs): the emulator, not the protocol, may have limited the result",
            d.direction,
            d.lateness_p99_us.unwrap_or(0.0),
            results::emu::LATE_P99_US
        );
    }
    if let Some(second) = &r.second_path {
        out.push_str(&text(second).replacen("emulated path:", "second emulated path:", 1));
    }
    out
}

fn direction_lines(out: &mut String, d: &EmuDirection) {
    let arrow = if d.direction == "up" { "client → server" } else { "server → client" };
    let _ = writeln!(
        out,
        "  {:<4} {arrow}: offered {}, delivered {}, wire {} B",
        d.direction,
        tally(d.offered),
        tally(d.delivered),
        d.wire_bytes
    );
    let _ = writeln!(
        out,
        "       drops: loss model {}, queue overflow {}, cell loss {} ({} cells); duplicates {}",
        tally(d.drops_loss_model),
        tally(d.drops_queue_overflow),
        tally(d.drops_cell_loss),
        d.lost_cells,
        d.duplicates.packets
    );
    let pct = |v: Option<f64>| v.map_or_else(|| "–".into(), |v| format!("{v:.0} µs"));
    let _ = writeln!(
        out,
        "       release lateness: mean {:.1} µs, p50 {}, p99 {}, max {:.1} µs",
        d.lateness_mean_us,
        pct(d.lateness_p50_us),
        pct(d.lateness_p99_us),
        d.lateness_max_us
    );
}

fn tally(t: EmuTally) -> String {
    format!("{} pkts / {} B", t.packets, t.bytes)
}

/// The preset listing: name and settings on one line, the description below.
pub fn presets(rows: &[(&str, &str, &str)]) -> String {
    let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (name, spec, description) in rows {
        let _ = writeln!(out, "{name:<width$}  {spec}");
        let _ = writeln!(out, "{:<width$}  {description}", "");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_presets_aligned() {
        let s =
            presets(&[("gige", "rate=1gbit", "1 Gbit/s"), ("transatlantic", "rate=1gbit,delay=85ms", "far")]);
        assert_eq!(s, "gige           rate=1gbit\n               1 Gbit/s\ntransatlantic  rate=1gbit,delay=85ms\n               far\n");
    }

    #[test]
    fn counters_text_names_every_cause() {
        let r = EmuReport {
            path: "rate=1mbit".into(),
            offload: false,
            directions: vec![EmuDirection { direction: "up".into(), ..Default::default() }],
            second_path: None,
        };
        let t = text(&r);
        assert!(t.contains("loss model") && t.contains("queue overflow") && t.contains("cell loss"));
        assert!(t.contains("client → server"));
        assert!(!t.contains("warning"), "nothing measured, nothing late");
        assert!(!t.contains("second"), "one path");
        let two = EmuReport {
            second_path: Some(Box::new(EmuReport { path: "rate=5mbit".into(), ..r.clone() })),
            ..r
        };
        let t = text(&two);
        assert!(
            t.contains("emulated path: rate=1mbit") && t.contains("second emulated path: rate=5mbit\n"),
            "{t}"
        );
        assert_eq!(t.matches("client → server").count(), 2, "each path's counters: {t}");
    }

    #[test]
    fn a_late_direction_is_called_out() {
        let late =
            EmuDirection { direction: "down".into(), lateness_p99_us: Some(900.0), ..Default::default() };
        let on_time =
            EmuDirection { direction: "up".into(), lateness_p99_us: Some(40.0), ..Default::default() };
        let r = EmuReport {
            path: "transatlantic".into(),
            offload: true,
            directions: vec![on_time, late],
            second_path: None,
        };
        let t = text(&r);
        assert!(t.contains("warning: down released late (p99 900 µs > 500 µs)"), "{t}");
        assert!(!t.contains("warning: up"), "{t}");
    }
}
