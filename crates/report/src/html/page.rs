//! The page being built: sections, tables and figures, with a running count of plots (the
//! `<body data-plots>` attribute lets a browser test check that every plot rendered).

use std::fmt::Write;

use crate::plot::svg::esc;
use crate::tables::Table;

/// Stylesheet of the report: inline, no fonts or images to fetch.
const CSS: &str = include_str!("report.css");

/// An HTML page under construction.
#[derive(Debug, Default)]
pub struct Page {
    body: String,
    toc: Vec<(String, String)>,
    plots: usize,
}

impl Page {
    /// An empty page.
    pub fn new() -> Page {
        Page::default()
    }

    /// Opens a `<section>` with a heading, listed in the contents.
    pub fn section(&mut self, id: &str, title: &str) {
        self.toc.push((id.to_string(), title.to_string()));
        let _ = writeln!(self.body, "<section id=\"{}\">\n<h2>{}</h2>", esc(id), esc(title));
    }

    /// Closes the current section.
    pub fn end_section(&mut self) {
        self.body.push_str("</section>\n");
    }

    /// A sub-heading.
    pub fn h3(&mut self, title: &str) {
        let _ = writeln!(self.body, "<h3>{}</h3>", esc(title));
    }

    /// A paragraph of text (escaped); `class` may be empty.
    pub fn para(&mut self, class: &str, text: &str) {
        let class = if class.is_empty() { String::new() } else { format!(" class=\"{}\"", esc(class)) };
        let _ = writeln!(self.body, "<p{class}>{}</p>", esc(text));
    }

    /// A table; `numeric` right-aligns every column but the first.
    pub fn table(&mut self, t: &Table, numeric: bool) {
        if t.is_empty() {
            return;
        }
        let class = if numeric { " class=\"num\"" } else { "" };
        let _ = write!(self.body, "<div class=\"scroll\"><table{class}>");
        if t.head.iter().any(|h| !h.is_empty()) {
            self.body.push_str("<thead><tr>");
            for h in &t.head {
                let _ = write!(self.body, "<th>{}</th>", esc(h));
            }
            self.body.push_str("</tr></thead>");
        }
        self.body.push_str("<tbody>\n");
        for row in &t.rows {
            self.body.push_str("<tr>");
            for (i, c) in row.iter().enumerate() {
                let tag = if i == 0 && t.head.first().is_none_or(|h| h.is_empty()) { "th" } else { "td" };
                let _ = write!(self.body, "<{tag}>{}</{tag}>", esc(c));
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</tbody></table></div>\n");
    }

    /// A plot (one `<svg>`) in a figure.
    pub fn plot(&mut self, svg: &str) {
        self.plots += 1;
        let _ = writeln!(self.body, "<figure>{svg}</figure>");
    }

    /// Opens a group of plots laid out side by side.
    pub fn open_row(&mut self) {
        self.body.push_str("<div class=\"row\">\n");
    }

    /// Closes a row of plots.
    pub fn close_row(&mut self) {
        self.body.push_str("</div>\n");
    }

    /// Opens a collapsible block, open or closed.
    pub fn open_details(&mut self, summary: &str, open: bool) {
        let open = if open { " open" } else { "" };
        let _ = writeln!(self.body, "<details{open}><summary>{}</summary>", esc(summary));
    }

    /// Closes a collapsible block.
    pub fn close_details(&mut self) {
        self.body.push_str("</details>\n");
    }

    /// The whole document.
    pub fn finish(self, title: &str, subtitle: &str) -> String {
        let mut o = String::new();
        let _ = write!(
            o,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"tcplab {}\">\n<title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body data-plots=\"{}\">\n<header><h1>{}</h1><p>{}</p>\n",
            env!("CARGO_PKG_VERSION"),
            esc(title),
            self.plots,
            esc(title),
            esc(subtitle)
        );
        if self.toc.len() > 1 {
            o.push_str("<nav>");
            for (id, t) in &self.toc {
                let _ = write!(o, "<a href=\"#{}\">{}</a> ", esc(id), esc(t));
            }
            o.push_str("</nav>\n");
        }
        o.push_str("</header>\n<main>\n");
        o.push_str(&self.body);
        o.push_str("</main>\n</body>\n</html>\n");
        o
    }
}
