//! The registry of renderers of stored runs: every output format of `show`, `export`,
//! `report` and `history`, one line each. The CLI derives its `--format` values and their help
//! from [`renderers`]; a new format is one file in this crate plus one line in [`RENDERERS`],
//! and the registry-wide tests bring it under test.
//!
//! A format is a table of optional functions rather than a trait object: most formats serve
//! one or two of the three views, each view is a pure function of `results` values, and a
//! `const` table lists them with no boilerplate impls returning "unsupported".

use results::{RunRecord, RunSummary};

use crate::{archive, csv, html, json, markdown};

/// What is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// A document of one or more stored runs (`export`, `report`).
    Runs,
    /// One stored run (`show`).
    Run,
    /// The list of stored runs (`history`).
    History,
}

/// Renders a document of several runs.
pub type RunsFn = fn(&[RunRecord]) -> String;
/// Renders one run.
pub type RunFn = fn(&RunRecord) -> String;
/// Renders the history list.
pub type HistoryFn = fn(&[RunSummary]) -> String;

/// One output format.
#[derive(Debug, Clone, Copy)]
pub struct Renderer {
    /// Stable kebab-case name, the CLI's `--format` value.
    pub name: &'static str,
    /// One line for `--help`.
    pub about: &'static str,
    /// File extensions that choose this format (`report -o FILE`), without the dot.
    pub extensions: &'static [&'static str],
    /// Several runs as one document.
    pub runs: Option<RunsFn>,
    /// One run, when it differs from the document of that run alone.
    pub run: Option<RunFn>,
    /// The history list.
    pub history: Option<HistoryFn>,
}

/// Every format, in the order `--help` lists them.
pub const RENDERERS: &[Renderer] = &[
    Renderer {
        name: "text",
        about: "Tables for a terminal",
        extensions: &["txt"],
        runs: Some(archive::runs_text),
        run: Some(archive::show_text),
        history: Some(archive::history_text),
    },
    Renderer {
        name: "json",
        about: "JSON: one run document, an array of them, or an array of history lines",
        extensions: &["json"],
        runs: Some(json::runs),
        run: Some(json::document),
        history: Some(archive::history_json),
    },
    Renderer {
        name: "csv",
        about: "One row per test (and sweep point)",
        extensions: &["csv"],
        runs: Some(csv::tests),
        run: None,
        history: None,
    },
    Renderer {
        name: "mesh-csv",
        about: "One row per cell of a mesh: sender, receiver, headline, shares of the loop-back baselines, failure",
        extensions: &[],
        runs: Some(crate::mesh::csv),
        run: None,
        history: None,
    },
    Renderer {
        name: "intervals-csv",
        about: "One row per interval per side",
        extensions: &[],
        runs: Some(csv::intervals),
        run: None,
        history: None,
    },
    Renderer {
        name: "markdown",
        about: "Markdown tables, for issues and pull requests",
        extensions: &["md", "markdown"],
        runs: Some(markdown::document),
        run: None,
        history: None,
    },
    Renderer {
        name: "html",
        about: "One self-contained HTML file with plots",
        extensions: &["html", "htm"],
        runs: Some(html::document),
        run: None,
        history: None,
    },
];

/// Every format.
pub fn renderers() -> &'static [Renderer] {
    RENDERERS
}

/// The format named `name`.
pub fn by_name(name: &str) -> Option<&'static Renderer> {
    RENDERERS.iter().find(|r| r.name == name)
}

/// The format of a document of runs that file extension `ext` (without the dot, any case)
/// chooses.
pub fn by_extension(ext: &str) -> Option<&'static Renderer> {
    let ext = ext.to_ascii_lowercase();
    RENDERERS.iter().find(|r| r.supports(View::Runs) && r.extensions.contains(&ext.as_str()))
}

/// The formats that render `view`.
pub fn for_view(view: View) -> impl Iterator<Item = &'static Renderer> {
    RENDERERS.iter().filter(move |r| r.supports(view))
}

impl Renderer {
    /// Whether this format renders `view`.
    pub fn supports(&self, view: View) -> bool {
        match view {
            View::Runs => self.runs.is_some(),
            View::Run => self.run.is_some() || self.runs.is_some(),
            View::History => self.history.is_some(),
        }
    }

    /// `runs` as one document; `None` when this format has no such view.
    pub fn render_runs(&self, runs: &[RunRecord]) -> Option<String> {
        self.runs.map(|f| f(runs))
    }

    /// One run; `None` when this format has no such view.
    pub fn render_run(&self, run: &RunRecord) -> Option<String> {
        match (self.run, self.runs) {
            (Some(f), _) => Some(f(run)),
            (None, Some(f)) => Some(f(std::slice::from_ref(run))),
            (None, None) => None,
        }
    }

    /// The history list; `None` when this format has no such view.
    pub fn render_history(&self, runs: &[RunSummary]) -> Option<String> {
        self.history.map(|f| f(runs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    const VIEWS: [View; 3] = [View::Runs, View::Run, View::History];

    fn render(r: &Renderer, view: View) -> Option<String> {
        match view {
            View::Runs => {
                r.render_runs(&[fixture::run_with_failures(), fixture::run(vec![fixture::rr(64, 64, 3e4)])])
            }
            View::Run => r.render_run(&fixture::run_with_failures()),
            View::History => r.render_history(&fixture::history()),
        }
    }

    #[test]
    fn names_are_unique_kebab_case_and_described() {
        for (i, r) in RENDERERS.iter().enumerate() {
            assert!(RENDERERS[..i].iter().all(|o| o.name != r.name), "{} twice", r.name);
            assert!(r.name.chars().all(|c| c.is_ascii_lowercase() || c == '-'), "{}", r.name);
            assert!(!r.about.is_empty() && !r.about.contains('\n'), "{} needs one line", r.name);
            assert!(VIEWS.iter().any(|v| r.supports(*v)), "{} renders nothing", r.name);
            assert_eq!(by_name(r.name).map(|f| f.name), Some(r.name));
        }
        assert!(by_name("bogus").is_none());
    }

    #[test]
    fn extensions_choose_document_formats() {
        let name = |e| by_extension(e).map(|r| r.name);
        assert_eq!(
            (name("md"), name("HTML"), name("csv"), name("json")),
            (Some("markdown"), Some("html"), Some("csv"), Some("json"))
        );
        assert_eq!(name("pdf"), None);
    }

    #[test]
    fn every_renderer_and_view_is_snapshotted() {
        for r in RENDERERS {
            for view in VIEWS {
                let out = render(r, view);
                assert_eq!(out.is_some(), r.supports(view), "{} {view:?}", r.name);
                if let Some(out) = out {
                    insta::assert_snapshot!(format!("{}-{view:?}", r.name), out);
                }
            }
        }
    }

    /// A failed test's headline is unknown, and every format says so rather than printing
    /// the zeros its counters hold.
    #[test]
    fn failed_tests_render_no_measured_zero() {
        let run = fixture::run_with_failures();
        let one = |name: &str| by_name(name).and_then(|r| r.render_run(&run)).unwrap_or_default();
        let csv = one("csv");
        let head: Vec<&str> = csv.lines().next().unwrap_or_default().split(',').collect();
        let col = |row: usize, name: &str| {
            let i = head.iter().position(|h| *h == name).unwrap_or(usize::MAX);
            csv.lines().nth(row).and_then(|l| l.split(',').nth(i)).map(str::to_string)
        };
        for name in ["headline_value", "goodput_bps", "trans_per_s"] {
            assert_eq!(col(2, name).as_deref(), Some(""), "failed stream {name}: {csv}");
            assert_eq!(col(3, name).as_deref(), Some(""), "failed rr {name}: {csv}");
        }
        assert_eq!(col(2, "headline_metric").as_deref(), Some("goodput_bps"));
        assert_eq!(col(1, "goodput_bps").as_deref(), Some("9400000000"));

        let json: serde_json::Value = serde_json::from_str(&one("json")).unwrap_or_default();
        for (i, metric) in [(1, "goodput"), (2, "transaction-rate")] {
            let h = &json["tests"][i]["summary"]["headline"];
            assert_eq!((h["metric"].as_str(), h["value"].is_null()), (Some(metric), true), "{h}");
        }

        let md = one("markdown");
        let row = |label: &str| {
            md.lines().find(|l| l.starts_with(&format!("| {label} |"))).unwrap_or_default().to_string()
        };
        assert!(
            row("stream failed").contains("| – |") && !row("stream failed").contains("0.00 bit/s"),
            "{md}"
        );
        assert!(row("rr failed").contains("| – |") && !row("rr failed").contains(" 0 trans/s"), "{md}");

        let html = one("html");
        assert!(
            !html.contains(">0.00 bit/s<") && !html.contains(">0 trans/s<"),
            "a zero headline in the HTML"
        );

        let text = one("text");
        assert!(text.contains("FAILED (connect)") && text.contains("FAILED (timeout)"), "{text}");
        let alone = by_name("text").and_then(|r| r.render_run(&fixture::run(vec![fixture::failed_stream()])));
        let alone = alone.unwrap_or_default();
        assert!(alone.contains("status: Failed") && !alone.contains("bit/s"), "{alone}");

        let history = by_name("text").and_then(|r| r.render_history(&fixture::history())).unwrap_or_default();
        let abandoned = history.lines().find(|l| l.contains("abandoned")).unwrap_or_default();
        assert!(abandoned.contains(" – ") && !abandoned.contains("0.00"), "{history}");
        let list = by_name("json").and_then(|r| r.render_history(&fixture::history())).unwrap_or_default();
        let list: serde_json::Value = serde_json::from_str(&list).unwrap_or_default();
        assert!(list[1]["best"]["value"].is_null() && list[1]["status"] == "abandoned", "{list}");
    }
}
