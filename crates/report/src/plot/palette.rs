//! Colour-blind-safe colours: Okabe & Ito's eight for categories (ordered so the first few
//! contrast most on white; yellow last), viridis for sequential heatmaps.

/// Okabe-Ito, reordered for white backgrounds.
pub const CATEGORICAL: [&str; 8] =
    ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"];

/// Dash patterns paired with colours, so curves differ in more than hue.
const DASHES: [&str; 4] = ["", "6 3", "2 3", "8 3 2 3"];

/// Colour of series `i`.
pub fn colour(i: usize) -> &'static str {
    CATEGORICAL[i % CATEGORICAL.len()]
}

/// Dash pattern of series `i` (solid for the first eight).
pub fn dash(i: usize) -> &'static str {
    DASHES[(i / CATEGORICAL.len()) % DASHES.len()]
}

/// Viridis anchors (0, ¼, ½, ¾, 1).
const VIRIDIS: [(u8, u8, u8); 5] =
    [(0x44, 0x01, 0x54), (0x3b, 0x52, 0x8b), (0x21, 0x91, 0x8c), (0x5e, 0xc9, 0x62), (0xfd, 0xe7, 0x25)];

/// The viridis colour at `t` in 0–1 (clamped), as `#rrggbb`.
pub fn sequential(t: f64) -> String {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let pos = t * (VIRIDIS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(VIRIDIS.len() - 2);
    let f = pos - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Black or white, whichever reads better on the viridis colour at `t`.
pub fn ink_on(t: f64) -> &'static str {
    if t.is_finite() && t > 0.55 {
        "#000000"
    } else {
        "#ffffff"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_of_viridis() {
        assert_eq!(sequential(0.0), "#440154");
        assert_eq!(sequential(1.0), "#fde725");
        assert_eq!(sequential(f64::NAN), "#440154");
        assert_eq!(sequential(7.0), "#fde725");
    }

    #[test]
    fn series_styles_cycle() {
        assert_eq!(colour(0), "#0072B2");
        assert_eq!(colour(8), "#0072B2");
        assert_eq!(dash(0), "");
        assert_eq!(dash(8), "6 3");
    }
}
