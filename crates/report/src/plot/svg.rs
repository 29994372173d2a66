//! A minimal SVG writer: escaped text, fixed-precision coordinates (so output is stable
//! byte for byte and snapshot-testable) and presentation attributes inline (so a plot looks
//! the same inside the HTML report, pasted alone, or in a screenshot).

use std::fmt::Write;

/// Escapes text for XML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() => {}
            c => o.push(c),
        }
    }
    o
}

/// A coordinate with one decimal; non-finite values become 0 so no `NaN` reaches the file.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    let s = format!("{v:.1}");
    match s.strip_suffix(".0") {
        Some("-0") => "0".into(),
        Some(int) => int.to_string(),
        None => s,
    }
}

/// Horizontal text anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// Left edge at x.
    Start,
    /// Centred on x.
    Middle,
    /// Right edge at x.
    End,
}

impl Anchor {
    fn attr(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// One `<svg>` element being written.
#[derive(Debug)]
pub struct Svg {
    buf: String,
}

impl Svg {
    /// Starts a plot of `width` × `height` px whose accessible name is `title`.
    pub fn new(width: f64, height: f64, title: &str) -> Svg {
        let mut buf = String::new();
        let _ = writeln!(
            buf,
            "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" font-family=\"system-ui, sans-serif\" font-size=\"12\"><title>{t}</title>",
            w = num(width),
            h = num(height),
            t = esc(title)
        );
        Svg { buf }
    }

    /// Opens a group with a class (for readers and tests).
    pub fn open_group(&mut self, class: &str) {
        let _ = writeln!(self.buf, "<g class=\"{}\">", esc(class));
    }

    /// Closes the last group.
    pub fn close_group(&mut self) {
        self.buf.push_str("</g>\n");
    }

    /// A straight line.
    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, width: f64) {
        let _ = writeln!(
            self.buf,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{stroke}\" stroke-width=\"{}\"/>",
            num(x1),
            num(y1),
            num(x2),
            num(y2),
            num(width)
        );
    }

    /// An open polyline; `dash` is an SVG dash array or empty.
    pub fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, width: f64, dash: &str) {
        let pts: Vec<String> = points.iter().map(|(x, y)| format!("{},{}", num(*x), num(*y))).collect();
        let dash = if dash.is_empty() { String::new() } else { format!(" stroke-dasharray=\"{dash}\"") };
        let _ = writeln!(
            self.buf,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"{}\" stroke-linejoin=\"round\"{dash}/>",
            pts.join(" "),
            num(width)
        );
    }

    /// A rectangle with an optional tooltip.
    pub fn rect(&mut self, (x, y): (f64, f64), (w, h): (f64, f64), fill: &str, tooltip: Option<&str>) {
        let _ = write!(
            self.buf,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"",
            num(x),
            num(y),
            num(w.max(0.0)),
            num(h.max(0.0))
        );
        self.close_shape("rect", tooltip);
    }

    /// A filled circle with an optional tooltip.
    pub fn circle(&mut self, (x, y): (f64, f64), r: f64, fill: &str, tooltip: Option<&str>) {
        let _ =
            write!(self.buf, "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{fill}\"", num(x), num(y), num(r));
        self.close_shape("circle", tooltip);
    }

    /// A closed path given as an SVG path string (markers of other shapes).
    pub fn path(&mut self, d: &str, fill: &str, stroke: &str, tooltip: Option<&str>) {
        let _ = write!(self.buf, "<path d=\"{d}\" fill=\"{fill}\" stroke=\"{stroke}\"");
        self.close_shape("path", tooltip);
    }

    fn close_shape(&mut self, tag: &str, tooltip: Option<&str>) {
        match tooltip {
            Some(t) => {
                let _ = writeln!(self.buf, "><title>{}</title></{tag}>", esc(t));
            }
            None => self.buf.push_str("/>\n"),
        }
    }

    /// Text at a point.
    pub fn text(&mut self, (x, y): (f64, f64), anchor: Anchor, s: &str, extra: &str) {
        let extra = if extra.is_empty() { String::new() } else { format!(" {extra}") };
        let _ = writeln!(
            self.buf,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"{}\"{extra}>{}</text>",
            num(x),
            num(y),
            anchor.attr(),
            esc(s)
        );
    }

    /// Text rotated a quarter turn anticlockwise (y-axis titles).
    pub fn vtext(&mut self, (x, y): (f64, f64), s: &str) {
        let _ = writeln!(
            self.buf,
            "<text x=\"{x}\" y=\"{y}\" text-anchor=\"middle\" transform=\"rotate(-90 {x} {y})\">{}</text>",
            esc(s),
            x = num(x),
            y = num(y)
        );
    }

    /// The finished element.
    pub fn finish(mut self) -> String {
        self.buf.push_str("</svg>");
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_drops_controls() {
        assert_eq!(esc("a<b & \"c\"\u{7}"), "a&lt;b &amp; &quot;c&quot;");
    }

    #[test]
    fn numbers_are_short_and_finite() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(1.25), "1.2");
        assert_eq!(num(-0.01), "0");
        assert_eq!(num(f64::NAN), "0");
        assert_eq!(num(f64::INFINITY), "0");
    }

    #[test]
    fn tooltips_close_with_the_element_tag() {
        let mut s = Svg::new(10.0, 10.0, "t");
        s.rect((0.0, 0.0), (1.0, 1.0), "#000", Some("a & b"));
        s.circle((1.0, 1.0), 2.0, "#fff", Some("c"));
        s.circle((1.0, 1.0), 2.0, "#fff", None);
        let out = s.finish();
        assert!(out.contains(
            "<rect x=\"0\" y=\"0\" width=\"1\" height=\"1\" fill=\"#000\"><title>a &amp; b</title></rect>"
        ));
        assert!(out.contains("<title>c</title></circle>"));
        assert!(out.contains("r=\"2\" fill=\"#fff\"/>"));
        assert!(out.ends_with("</svg>"));
    }
}
