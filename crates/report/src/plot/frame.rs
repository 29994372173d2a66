//! The parts every chart shares: size and margins, title, grid lines, axes with ticks and
//! titles, and a legend to the right of the plotting area.

use super::palette;
use super::scale::Scale;
use super::svg::{Anchor, Svg};

/// Overall size and the plotting area inside it, in px.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// Total width.
    pub width: f64,
    /// Total height.
    pub height: f64,
    /// Left edge of the plotting area.
    pub left: f64,
    /// Right edge of the plotting area.
    pub right: f64,
    /// Top edge of the plotting area.
    pub top: f64,
    /// Bottom edge of the plotting area.
    pub bottom: f64,
}

/// Width kept for the legend when a chart has one.
const LEGEND_W: f64 = 150.0;

impl Frame {
    /// The standard frame; room for a legend when `legend` is set.
    pub fn new(legend: bool) -> Frame {
        let width = 640.0;
        let right = if legend { width - LEGEND_W - 12.0 } else { width - 20.0 };
        Frame { width, height: 340.0, left: 70.0, right, top: 34.0, bottom: 290.0 }
    }

    /// Pixel x of a 0–1 position.
    pub fn x(&self, frac: f64) -> f64 {
        self.left + frac * (self.right - self.left)
    }

    /// Pixel y of a 0–1 position (0 at the bottom).
    pub fn y(&self, frac: f64) -> f64 {
        self.bottom - frac * (self.bottom - self.top)
    }

    /// The title, centred above the plotting area.
    pub fn title(&self, svg: &mut Svg, title: &str) {
        svg.text(
            ((self.left + self.right) / 2.0, 20.0),
            Anchor::Middle,
            title,
            "font-size=\"14\" font-weight=\"600\"",
        );
    }

    /// Horizontal grid lines, y ticks and the y-axis title.
    pub fn y_axis(&self, svg: &mut Svg, scale: &Scale, label: &str) {
        svg.open_group("y-axis");
        for (v, text) in &scale.ticks {
            let y = self.y(scale.frac(*v));
            svg.line((self.left, y), (self.right, y), "#e4e4e4", 1.0);
            svg.text((self.left - 6.0, y + 4.0), Anchor::End, text, "");
        }
        svg.line((self.left, self.top), (self.left, self.bottom), "#555555", 1.0);
        svg.vtext((16.0, (self.top + self.bottom) / 2.0), label);
        svg.close_group();
    }

    /// Vertical grid lines, x ticks and the x-axis title.
    pub fn x_axis(&self, svg: &mut Svg, scale: &Scale, label: &str) {
        svg.open_group("x-axis");
        for (v, text) in &scale.ticks {
            let x = self.x(scale.frac(*v));
            svg.line((x, self.top), (x, self.bottom), "#efefef", 1.0);
            svg.line((x, self.bottom), (x, self.bottom + 4.0), "#555555", 1.0);
            svg.text((x, self.bottom + 17.0), Anchor::Middle, text, "");
        }
        svg.line((self.left, self.bottom), (self.right, self.bottom), "#555555", 1.0);
        self.x_title(svg, label);
        svg.close_group();
    }

    /// The x-axis title alone (category axes draw their own ticks).
    pub fn x_title(&self, svg: &mut Svg, label: &str) {
        svg.text(((self.left + self.right) / 2.0, self.height - 14.0), Anchor::Middle, label, "");
    }

    /// "no data" in the middle of the plotting area.
    pub fn no_data(&self, svg: &mut Svg) {
        let c = ((self.left + self.right) / 2.0, (self.top + self.bottom) / 2.0);
        svg.text(c, Anchor::Middle, "no data", "fill=\"#777777\"");
    }

    /// A legend entry per name (colour, marker and dash of its index), top right: the key of
    /// line charts.
    pub fn legend(&self, svg: &mut Svg, title: &str, names: &[String]) {
        self.keyed_legend(svg, title, names, Key::Line);
    }

    /// A legend whose keys are filled swatches of each index's colour: the key of bar charts,
    /// whose bars have no line or marker.
    pub fn swatch_legend(&self, svg: &mut Svg, names: &[String]) {
        self.keyed_legend(svg, "", names, Key::Swatch);
    }

    /// A legend of `key`s, one per name, top right.
    fn keyed_legend(&self, svg: &mut Svg, title: &str, names: &[String], key: Key) {
        if names.is_empty() {
            return;
        }
        svg.open_group("legend");
        let x = self.right + 14.0;
        let mut y = self.top + 6.0;
        if !title.is_empty() {
            svg.text((x, y), Anchor::Start, title, "font-weight=\"600\"");
            y += 18.0;
        }
        for (i, name) in names.iter().enumerate().take(14) {
            key.draw(svg, i, (x, y));
            svg.text((x + 28.0, y), Anchor::Start, &clip(name, 17), "");
            y += 17.0;
        }
        if names.len() > 14 {
            svg.text((x, y), Anchor::Start, &format!("… {} more", names.len() - 14), "fill=\"#777777\"");
        }
        svg.close_group();
    }
}

/// What a legend entry shows before its name.
#[derive(Debug, Clone, Copy)]
enum Key {
    /// The series' line with its marker.
    Line,
    /// A filled swatch of the series' colour.
    Swatch,
}

impl Key {
    /// Entry `i`'s key left of `(x, y)`, the baseline where its name starts.
    fn draw(self, svg: &mut Svg, i: usize, (x, y): (f64, f64)) {
        match self {
            Key::Line => {
                svg.polyline(&[(x, y - 4.0), (x + 22.0, y - 4.0)], palette::colour(i), 2.0, palette::dash(i));
                marker(svg, i, (x + 11.0, y - 4.0), palette::colour(i), None);
            }
            Key::Swatch => svg.rect((x + 4.0, y - 10.0), (14.0, 11.0), palette::colour(i), None),
        }
    }
}

/// Series `i`'s marker at a point: circle, square, triangle, diamond in turn.
pub fn marker(svg: &mut Svg, i: usize, (x, y): (f64, f64), colour: &str, tooltip: Option<&str>) {
    use super::svg::num;
    let r = 3.5;
    match i % 4 {
        0 => svg.circle((x, y), r, colour, tooltip),
        1 => svg.rect((x - r, y - r), (2.0 * r, 2.0 * r), colour, tooltip),
        2 => {
            let d = format!(
                "M{} {}L{} {}L{} {}Z",
                num(x),
                num(y - r - 1.0),
                num(x + r + 0.5),
                num(y + r),
                num(x - r - 0.5),
                num(y + r)
            );
            svg.path(&d, colour, "none", tooltip);
        }
        _ => {
            let q = r + 1.0;
            let d = format!(
                "M{} {}L{} {}L{} {}L{} {}Z",
                num(x),
                num(y - q),
                num(x + q),
                num(y),
                num(x),
                num(y + q),
                num(x - q),
                num(y)
            );
            svg.path(&d, colour, "none", tooltip);
        }
    }
}

/// `s` cut to `n` characters with an ellipsis.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}
