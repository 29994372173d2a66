//! Heatmaps for two-parameter grids: one cell per (x, y) with its value written in it,
//! viridis colours, the best cell outlined, a colour key on the right.

use super::frame::Frame;
use super::palette;
use super::svg::{Anchor, Svg};

/// One cell: the value that sets its colour and the text written in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Value (colour scale).
    pub value: f64,
    /// Text in the cell and its tooltip.
    pub text: String,
}

/// A heatmap; `cells[row][col]`, row 0 at the bottom (the smallest y value).
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    /// Title above the plot.
    pub title: String,
    /// x-axis title.
    pub x_label: String,
    /// y-axis title.
    pub y_label: String,
    /// Column labels.
    pub columns: Vec<String>,
    /// Row labels.
    pub rows: Vec<String>,
    /// Cells; missing ones are left grey.
    pub cells: Vec<Vec<Option<Cell>>>,
    /// Unit written under the colour key.
    pub unit: String,
}

impl Heatmap {
    /// The heatmap as one `<svg>` element.
    pub fn render(&self) -> String {
        let mut f = Frame::new(false);
        f.right -= 70.0;
        let mut svg = Svg::new(f.width, f.height, &self.title);
        f.title(&mut svg, &self.title);
        let present = || self.cells.iter().flatten().flatten().map(|c| c.value).filter(|v| v.is_finite());
        let lo = present().fold(f64::INFINITY, f64::min);
        let hi = present().fold(f64::NEG_INFINITY, f64::max);
        if !lo.is_finite() {
            f.no_data(&mut svg);
        }
        let t = |v: f64| if hi > lo { (v - lo) / (hi - lo) } else { 1.0 };
        self.draw_cells(&mut svg, &f, &t, hi);
        self.draw_labels(&mut svg, &f);
        if lo.is_finite() {
            key(&mut svg, &f, (lo, hi), &self.unit);
        }
        svg.finish()
    }

    fn cell_size(&self, f: &Frame) -> (f64, f64) {
        let cols = self.columns.len().max(1) as f64;
        let rows = self.rows.len().max(1) as f64;
        ((f.right - f.left) / cols, (f.bottom - f.top) / rows)
    }

    fn draw_cells(&self, svg: &mut Svg, f: &Frame, t: &dyn Fn(f64) -> f64, hi: f64) {
        let (w, h) = self.cell_size(f);
        let mut peak = None;
        svg.open_group("cells");
        for (r, row) in self.cells.iter().enumerate().take(self.rows.len()) {
            for (c, cell) in row.iter().enumerate().take(self.columns.len()) {
                let (x, y) = (f.left + w * c as f64, f.bottom - h * (r as f64 + 1.0));
                let Some(cell) = cell.as_ref().filter(|c| c.value.is_finite()) else {
                    // A cell without a value but with a text (a failure) says so; an empty one
                    // is "not measured".
                    let said = cell.as_ref().map(|c| c.text.as_str()).filter(|t| !t.is_empty());
                    svg.rect((x, y), (w, h), "#eeeeee", Some(said.unwrap_or("not measured")));
                    if let Some(text) = said.filter(|_| w >= 30.0 && h >= 14.0) {
                        let short = text.split(':').next().unwrap_or(text);
                        svg.text((x + w / 2.0, y + h / 2.0 + 4.0), Anchor::Middle, short, "font-size=\"11\"");
                    }
                    continue;
                };
                let tip = format!(
                    "{} {}, {} {}: {}",
                    self.x_label, self.columns[c], self.y_label, self.rows[r], cell.text
                );
                svg.rect((x, y), (w, h), &palette::sequential(t(cell.value)), Some(&tip));
                if w >= 30.0 && h >= 14.0 {
                    let ink = format!("fill=\"{}\" font-size=\"11\"", palette::ink_on(t(cell.value)));
                    svg.text((x + w / 2.0, y + h / 2.0 + 4.0), Anchor::Middle, &cell.text, &ink);
                }
                if cell.value >= hi && peak.is_none() {
                    peak = Some((x, y));
                }
            }
        }
        if let Some((x, y)) = peak {
            svg.open_group("peak");
            let d = format!(
                "M{a} {b}h{w}v{h}h-{w}Z",
                a = super::svg::num(x + 1.5),
                b = super::svg::num(y + 1.5),
                w = super::svg::num(w - 3.0),
                h = super::svg::num(h - 3.0)
            );
            svg.path(&d, "none", "#D55E00", Some("peak"));
            svg.close_group();
        }
        svg.close_group();
    }

    fn draw_labels(&self, svg: &mut Svg, f: &Frame) {
        let (w, h) = self.cell_size(f);
        svg.open_group("labels");
        for (c, name) in self.columns.iter().enumerate() {
            svg.text((f.left + w * (c as f64 + 0.5), f.bottom + 17.0), Anchor::Middle, name, "");
        }
        for (r, name) in self.rows.iter().enumerate() {
            svg.text((f.left - 6.0, f.bottom - h * (r as f64 + 0.5) + 4.0), Anchor::End, name, "");
        }
        svg.vtext((16.0, (f.top + f.bottom) / 2.0), &self.y_label);
        f.x_title(svg, &self.x_label);
        svg.close_group();
    }
}

/// The colour key: a vertical gradient of ten steps with the range written beside it.
fn key(svg: &mut Svg, f: &Frame, (lo, hi): (f64, f64), unit: &str) {
    use super::line::value;
    use super::scale::TickFormat;
    let x = f.right + 20.0;
    let step = (f.bottom - f.top) / 10.0;
    svg.open_group("key");
    for i in 0..10 {
        let y = f.bottom - step * (i as f64 + 1.0);
        svg.rect((x, y), (16.0, step + 0.5), &palette::sequential((i as f64 + 0.5) / 10.0), None);
    }
    svg.text((x + 20.0, f.top + 10.0), Anchor::Start, &value(hi, TickFormat::Number), "");
    svg.text((x + 20.0, f.bottom), Anchor::Start, &value(lo, TickFormat::Number), "");
    svg.text((x, f.bottom + 17.0), Anchor::Start, unit, "");
    svg.close_group();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outlines_the_best_cell_and_greys_missing_ones() {
        let cell = |v: f64| Some(Cell { value: v, text: format!("{v}") });
        let h = Heatmap {
            title: "grid".into(),
            x_label: "write size".into(),
            y_label: "window".into(),
            columns: vec!["1K".into(), "8K".into()],
            rows: vec!["32K".into(), "64K".into()],
            cells: vec![vec![cell(1.0), cell(3.0)], vec![cell(2.0), None]],
            unit: "Gbit/s".into(),
        };
        let s = h.render();
        assert!(s.contains("write size 8K, window 32K: 3"));
        assert!(s.contains("not measured"));
        assert_eq!(s.matches("class=\"peak\"").count(), 1);
    }

    #[test]
    fn ragged_or_empty_grids_do_not_panic() {
        let h = Heatmap {
            title: "g".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            columns: vec!["a".into()],
            rows: vec![],
            cells: vec![vec![None, None], vec![]],
            unit: String::new(),
        };
        assert!(h.render().contains("no data"));
    }
}
