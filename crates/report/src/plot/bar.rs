//! Grouped bar charts: one group per category (test), one bar per series (client, server).

use super::frame::{clip, Frame};
use super::line::value;
use super::palette;
use super::scale::{Scale, ScaleKind, TickFormat};
use super::svg::{num, Anchor, Svg};

/// One series of bars; `None` leaves a gap.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    /// Legend text.
    pub name: String,
    /// One value per category.
    pub values: Vec<Option<f64>>,
}

/// A bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// Title above the plot.
    pub title: String,
    /// y-axis title with unit.
    pub y_label: String,
    /// y tick labels.
    pub y_format: TickFormat,
    /// Group names along x.
    pub categories: Vec<String>,
    /// Bars in each group.
    pub series: Vec<BarSeries>,
}

impl BarChart {
    /// The chart as one `<svg>` element.
    pub fn render(&self) -> String {
        let legend = self.series.len() > 1;
        let mut f = Frame::new(legend);
        let rotate = self.rotated_labels(&f);
        if rotate {
            f.height += 100.0;
        }
        let mut svg = Svg::new(f.width, f.height, &self.title);
        f.title(&mut svg, &self.title);
        let values: Vec<f64> = self.series.iter().flat_map(|s| s.values.iter().flatten().copied()).collect();
        let ys = Scale::fit(ScaleKind::Linear, &values, true, self.y_format);
        f.y_axis(&mut svg, &ys, &self.y_label);
        if !values.iter().any(|v| v.is_finite()) {
            f.no_data(&mut svg);
        }
        self.draw_bars(&mut svg, &f, &ys, rotate);
        svg.line((f.left, f.bottom), (f.right, f.bottom), "#555555", 1.0);
        if legend {
            let names: Vec<String> = self.series.iter().map(|s| s.name.clone()).collect();
            f.swatch_legend(&mut svg, &names);
        }
        svg.finish()
    }

    fn slot(&self, f: &Frame) -> f64 {
        (f.right - f.left) / self.categories.len().max(1) as f64
    }

    /// Whether category names are too long to sit level under their bars.
    fn rotated_labels(&self, f: &Frame) -> bool {
        let fits = (self.slot(f) / 7.0) as usize;
        self.categories.iter().any(|c| c.chars().count() > fits)
    }

    fn draw_bars(&self, svg: &mut Svg, f: &Frame, ys: &Scale, rotate: bool) {
        let slot = self.slot(f);
        let bars = self.series.len().max(1) as f64;
        let bar_w = (slot * 0.8 / bars).min(60.0);
        let zero = f.y(ys.frac(0.0));
        svg.open_group("bars");
        for (g, cat) in self.categories.iter().enumerate() {
            let centre = f.left + slot * (g as f64 + 0.5);
            let first = centre - bar_w * bars / 2.0;
            for (i, s) in self.series.iter().enumerate() {
                let Some(v) = s.values.get(g).copied().flatten().filter(|v| v.is_finite()) else { continue };
                let top = f.y(ys.frac(v));
                let x = first + bar_w * i as f64;
                let tip = format!("{cat} · {}: {}", s.name, value(v, self.y_format));
                svg.rect(
                    (x + 1.0, top.min(zero)),
                    (bar_w - 2.0, (zero - top).abs()),
                    palette::colour(i),
                    Some(&tip),
                );
                if bar_w >= 28.0 {
                    svg.text(
                        (x + bar_w / 2.0, top.min(zero) - 4.0),
                        Anchor::Middle,
                        &value(v, self.y_format),
                        "font-size=\"10\"",
                    );
                }
            }
            if rotate {
                // Slanted down to the right: the free space is under the legend, not left of the axis.
                let (x, y) = (centre - 3.0, f.bottom + 12.0);
                let turn = format!("transform=\"rotate(35 {} {})\"", num(x), num(y));
                svg.text((x, y), Anchor::Start, &clip(cat, 30), &turn);
            } else {
                svg.text((centre, f.bottom + 17.0), Anchor::Middle, cat, "");
            }
        }
        svg.close_group();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rect_per_present_value() {
        let c = BarChart {
            title: "CPU".into(),
            y_label: "utilisation (%)".into(),
            y_format: TickFormat::Number,
            categories: vec!["stream".into(), "rr 1/1".into()],
            series: vec![
                BarSeries { name: "client".into(), values: vec![Some(40.0), Some(12.5)] },
                BarSeries { name: "server".into(), values: vec![Some(55.0), None] },
            ],
        };
        let s = c.render();
        assert_eq!(s.matches("</title></rect>").count(), 3, "{s}");
        assert!(s.contains("rr 1/1 · client: 12.5"));
        // The legend's keys are bars too: swatches, not the line charts' line and marker.
        let legend = &s[s.find("<g class=\"legend\">").unwrap()..];
        let legend = &legend[..legend.find("</g>").unwrap()];
        assert_eq!(legend.matches("<rect").count(), 2, "{legend}");
        assert!(!legend.contains("<polyline") && !legend.contains("<circle"), "{legend}");
    }
}
