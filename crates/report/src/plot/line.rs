//! Line charts: one or more series against a linear or log-2 x axis, optional error bars
//! (confidence intervals), reference lines (theoretical limits) and marked peaks.

use super::frame::{marker, Frame};
use super::palette;
use super::scale::{label, Scale, ScaleKind, TickFormat};
use super::svg::{Anchor, Svg};

/// One data point; `err` is a ± half-width drawn as an error bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// x value.
    pub x: f64,
    /// y value.
    pub y: f64,
    /// Half-width of a confidence interval around `y`.
    pub err: Option<f64>,
}

impl Point {
    /// A point without an error bar.
    pub fn new(x: f64, y: f64) -> Point {
        Point { x, y, err: None }
    }
}

/// A named curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points in x order.
    pub points: Vec<Point>,
}

/// A horizontal line at a fixed y, e.g. a link's theoretical goodput.
#[derive(Debug, Clone, PartialEq)]
pub struct RefLine {
    /// y value.
    pub y: f64,
    /// Text shown on the line.
    pub label: String,
}

/// An x or y axis description.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisSpec {
    /// Title with unit, e.g. `throughput (Gbit/s)`.
    pub label: String,
    /// Spacing.
    pub kind: ScaleKind,
    /// Tick labels.
    pub format: TickFormat,
    /// Whether the axis must include 0 (linear only).
    pub zero: bool,
}

impl AxisSpec {
    /// A linear axis of numbers starting at 0.
    pub fn linear(label: &str) -> AxisSpec {
        AxisSpec { label: label.into(), kind: ScaleKind::Linear, format: TickFormat::Number, zero: true }
    }

    /// A log-2 axis of byte sizes.
    pub fn sizes(label: &str) -> AxisSpec {
        AxisSpec { label: label.into(), kind: ScaleKind::Log2, format: TickFormat::Bytes, zero: false }
    }
}

/// A line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// Title above the plot.
    pub title: String,
    /// Horizontal axis.
    pub x: AxisSpec,
    /// Vertical axis.
    pub y: AxisSpec,
    /// Legend title (the parameter the curves differ in), may be empty.
    pub legend: String,
    /// Curves.
    pub series: Vec<Series>,
    /// Reference lines.
    pub refs: Vec<RefLine>,
    /// Mark each curve's highest point.
    pub peaks: bool,
    /// Draw a marker at every point (off for dense curves such as CDFs).
    pub markers: bool,
}

impl LineChart {
    /// A chart with no series yet: markers on, no peaks, no legend title.
    pub fn new(title: &str, x: AxisSpec, y: AxisSpec) -> LineChart {
        LineChart {
            title: title.into(),
            x,
            y,
            legend: String::new(),
            series: Vec::new(),
            refs: Vec::new(),
            peaks: false,
            markers: true,
        }
    }

    /// The chart as one `<svg>` element.
    pub fn render(&self) -> String {
        let legend = self.series.len() > 1 || !self.legend.is_empty();
        let f = Frame::new(legend);
        let mut svg = Svg::new(f.width, f.height, &self.title);
        f.title(&mut svg, &self.title);
        let (xs, ys) = self.scales();
        f.y_axis(&mut svg, &ys, &self.y.label);
        f.x_axis(&mut svg, &xs, &self.x.label);
        let drawable = self.series.iter().flat_map(|s| &s.points).any(|p| xs.shows(p.x) && ys.shows(p.y));
        if !drawable {
            f.no_data(&mut svg);
        }
        self.draw_refs(&mut svg, &f, &ys);
        for (i, s) in self.series.iter().enumerate() {
            self.draw_series(&mut svg, &f, (&xs, &ys), i, s);
        }
        if legend {
            let names: Vec<String> = self.series.iter().map(|s| s.name.clone()).collect();
            f.legend(&mut svg, &self.legend, &names);
        }
        svg.finish()
    }

    fn scales(&self) -> (Scale, Scale) {
        let pts = || self.series.iter().flat_map(|s| &s.points);
        let xv: Vec<f64> = pts().map(|p| p.x).collect();
        let xs = Scale::fit(self.x.kind, &xv, self.x.zero, self.x.format);
        // On an axis from zero, non-negative data keep it: error bars are cut at 0.
        let floor = if self.y.zero { 0.0 } else { f64::NEG_INFINITY };
        let mut yv: Vec<f64> = pts().filter(|p| xs.shows(p.x)).flat_map(|p| bar_ends(p, floor)).collect();
        yv.extend(self.refs.iter().map(|r| r.y));
        if self.peaks && self.y.kind == ScaleKind::Linear {
            // Room above the highest point for its peak label.
            let top = yv.iter().copied().filter(|v| v.is_finite()).fold(f64::NEG_INFINITY, f64::max);
            if top > 0.0 {
                yv.push(top * 1.08);
            }
        }
        (xs, Scale::fit(self.y.kind, &yv, self.y.zero, self.y.format))
    }

    fn draw_refs(&self, svg: &mut Svg, f: &Frame, ys: &Scale) {
        for r in self.refs.iter().filter(|r| ys.shows(r.y)) {
            let y = f.y(ys.frac(r.y));
            svg.open_group("limit");
            svg.polyline(&[(f.left, y), (f.right, y)], "#555555", 1.5, "4 4");
            svg.text((f.right - 4.0, y - 5.0), Anchor::End, &r.label, "fill=\"#333333\"");
            svg.close_group();
        }
    }

    fn draw_series(&self, svg: &mut Svg, f: &Frame, (xs, ys): (&Scale, &Scale), i: usize, s: &Series) {
        let colour = palette::colour(i);
        let at = |p: &Point| (f.x(xs.frac(p.x)), f.y(ys.frac(p.y)));
        let shown: Vec<&Point> = s.points.iter().filter(|p| xs.shows(p.x) && ys.shows(p.y)).collect();
        svg.open_group("series");
        let line: Vec<(f64, f64)> = shown.iter().map(|p| at(p)).collect();
        if line.len() > 1 {
            svg.polyline(&line, colour, 2.0, palette::dash(i));
        }
        for p in &shown {
            if let Some(e) = p.err.filter(|e| e.is_finite() && *e > 0.0) {
                // Curves' bars at one x are set a little apart so they do not hide each other.
                let dodge = (i as f64 - (self.series.len() as f64 - 1.0) / 2.0) * 4.0;
                error_bar(svg, f, ys, at(p).0 + dodge, (p.y - e, p.y + e), colour);
            }
            if self.markers || shown.len() == 1 {
                marker(svg, i, at(p), colour, Some(&self.tooltip(s, p)));
            }
        }
        if self.peaks {
            if let Some(p) = shown.iter().copied().max_by(|a, b| a.y.total_cmp(&b.y)) {
                self.draw_peak(svg, f, at(p), p, colour);
            }
        }
        svg.close_group();
    }

    fn draw_peak(&self, svg: &mut Svg, f: &Frame, (x, y): (f64, f64), p: &Point, colour: &str) {
        svg.open_group("peak");
        svg.path(&ring(x, y, 7.0), "none", colour, None);
        // Near an edge the label leans inwards so it stays inside the plotting area.
        let text = value(p.y, self.y.format);
        let anchor = if x > f.right - 20.0 {
            Anchor::End
        } else if x < f.left + 20.0 {
            Anchor::Start
        } else {
            Anchor::Middle
        };
        svg.text((x, y - 11.0), anchor, &text, &format!("fill=\"{colour}\" font-size=\"11\""));
        svg.close_group();
    }

    fn tooltip(&self, s: &Series, p: &Point) -> String {
        let x = value(p.x, self.x.format);
        let y = value(p.y, self.y.format);
        let ci = p.err.map(|e| format!(" ± {}", value(e, self.y.format))).unwrap_or_default();
        format!("{}: {} = {x}, {} = {y}{ci}", s.name, self.x.label, self.y.label)
    }
}

fn bar_ends(p: &Point, floor: f64) -> Vec<f64> {
    match p.err.filter(|e| e.is_finite()) {
        Some(e) if p.y >= floor => vec![(p.y - e).max(floor), p.y + e],
        Some(e) => vec![p.y - e, p.y + e],
        None => vec![p.y],
    }
}

fn error_bar(svg: &mut Svg, f: &Frame, ys: &Scale, x: f64, (lo, hi): (f64, f64), colour: &str) {
    let clamp = |v: f64| f.y(ys.frac(v).clamp(0.0, 1.0));
    let (a, b) = (clamp(lo), clamp(hi));
    svg.line((x, a), (x, b), colour, 1.2);
    svg.line((x - 4.0, a), (x + 4.0, a), colour, 1.2);
    svg.line((x - 4.0, b), (x + 4.0, b), colour, 1.2);
}

/// A circle outline as a path (so it takes a stroke without a fill).
fn ring(x: f64, y: f64, r: f64) -> String {
    use super::svg::num;
    format!(
        "M{} {}a{r} {r} 0 1 0 {d} 0a{r} {r} 0 1 0 -{d} 0",
        num(x - r),
        num(y),
        r = num(r),
        d = num(2.0 * r)
    )
}

/// A value written as its axis writes ticks, with a little more precision.
pub fn value(v: f64, format: TickFormat) -> String {
    let step = if v.abs() >= 100.0 {
        1.0
    } else if v.abs() >= 10.0 {
        0.1
    } else {
        0.01
    };
    label(v, step, format)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> LineChart {
        let mut c = LineChart::new("t", AxisSpec::sizes("message size (bytes)"), AxisSpec::linear("Mbit/s"));
        c.series.push(Series {
            name: "64K".into(),
            points: vec![Point::new(1024.0, 10.0), Point { x: 4096.0, y: 30.0, err: Some(2.0) }],
        });
        c
    }

    #[test]
    fn draws_series_error_bars_and_peak() {
        let mut c = chart();
        c.peaks = true;
        c.refs.push(RefLine { y: 40.0, label: "link limit 40 Mbit/s".into() });
        let s = c.render();
        assert_eq!(s.matches("<polyline").count(), 2, "one curve, one limit line: {s}");
        assert!(s.contains("class=\"peak\""));
        assert!(s.contains("link limit 40 Mbit/s"));
        assert!(s.contains("64K: message size (bytes) = 4K, Mbit/s = 30.0 ± 2.00"));
    }

    #[test]
    fn error_bars_do_not_pull_a_zero_based_axis_below_zero() {
        let mut c = chart();
        c.series[0].points = vec![Point { x: 1024.0, y: 1.0, err: Some(3.0) }, Point::new(2048.0, 2.0)];
        let (_, ys) = c.scales();
        assert_eq!(ys.lo, 0.0);
    }

    #[test]
    fn empty_and_non_finite_data_say_no_data() {
        let mut c = chart();
        c.series[0].points = vec![Point::new(f64::NAN, 1.0), Point::new(0.0, 2.0)];
        let s = c.render();
        assert!(s.contains("no data"));
        assert!(!s.contains("NaN"));
    }
}
