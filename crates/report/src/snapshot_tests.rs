//! Snapshot tests of every renderer of this crate that draws or writes reports: the plot
//! layer's three chart types, the HTML report (single run, loose grid, sweep) and markdown.
//! Review changes with `cargo insta review` (or `INSTA_UPDATE=always`).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use crate::fixture;
use crate::plot::{
    AxisSpec, BarChart, BarSeries, Cell, Heatmap, LineChart, Point, RefLine, Series, TickFormat,
};

fn line_chart() -> LineChart {
    let mut c = LineChart::new(
        "goodput vs write size",
        AxisSpec::sizes("write size (bytes)"),
        AxisSpec::linear("goodput (Gbit/s)"),
    );
    c.legend = "window".into();
    c.peaks = true;
    for (i, w) in ["32K", "64K"].iter().enumerate() {
        let f = i as f64 + 1.0;
        let points = [1024.0, 4096.0, 16384.0, 65536.0]
            .iter()
            .enumerate()
            .map(|(j, x)| Point { x: *x, y: f * (j as f64 + 1.0), err: Some(0.2 * f) })
            .collect();
        c.series.push(Series { name: (*w).into(), points });
    }
    c.refs.push(RefLine { y: 9.0, label: "limit 9 Gbit/s".into() });
    c
}

#[test]
fn line_chart_svg() {
    insta::assert_snapshot!(line_chart().render());
}

#[test]
fn bar_chart_svg() {
    let c = BarChart {
        title: "CPU utilisation".into(),
        y_label: "utilisation (%)".into(),
        y_format: TickFormat::Number,
        categories: vec!["stream".into(), "rr 1/1".into(), "crr".into()],
        series: vec![
            BarSeries { name: "client".into(), values: vec![Some(62.5), Some(80.0), Some(91.0)] },
            BarSeries { name: "server".into(), values: vec![Some(48.0), None, Some(77.0)] },
        ],
    };
    insta::assert_snapshot!(c.render());
}

#[test]
fn heatmap_svg() {
    let cell = |v: f64| Some(Cell { value: v, text: format!("{v:.1}") });
    let h = Heatmap {
        title: "goodput (Gbit/s)".into(),
        x_label: "write size".into(),
        y_label: "window".into(),
        columns: vec!["1K".into(), "8K".into(), "64K".into()],
        rows: vec!["32K".into(), "256K".into()],
        cells: vec![vec![cell(2.5), cell(10.0), cell(8.0)], vec![cell(5.0), cell(20.0), None]],
        unit: "Gbit/s".into(),
    };
    insta::assert_snapshot!(h.render());
}

#[test]
fn html_single_run() {
    let run = fixture::run(vec![fixture::stream(128 * 1024, 256 * 1024, 20.0)]);
    insta::assert_snapshot!(crate::html::document(&[run]));
}

#[test]
fn html_loose_grid_and_rr() {
    insta::assert_snapshot!(crate::html::document(&fixture::loose_runs()));
}

#[test]
fn html_sweep() {
    insta::assert_snapshot!(crate::html::document(&[fixture::sweep_run()]));
}

#[test]
fn markdown_loose_grid_and_rr() {
    insta::assert_snapshot!(crate::markdown::document(&fixture::loose_runs()));
}

#[test]
fn markdown_sweep() {
    insta::assert_snapshot!(crate::markdown::document(&[fixture::sweep_run()]));
}

#[test]
fn html_is_self_contained_and_counts_its_plots() {
    let doc = crate::html::document(&fixture::loose_runs());
    for banned in ["<script", "http://", "https://", "@import", "url(", "<link", "<img"] {
        let hits: Vec<_> =
            doc.match_indices(banned).filter(|(i, _)| !doc[..*i].ends_with("xmlns=\"")).collect();
        assert!(hits.is_empty(), "{banned} in the report");
    }
    let plots = doc.matches("<svg class=\"plot\"").count();
    // Grids: stream curves + heatmap, rr curve; CDF; CPU: util, SD stream, M, SD rr;
    // timelines: 6 stream tests × 4 + 2 rr tests.
    assert_eq!(plots, 3 + 1 + 4 + 26);
    assert!(doc.contains(&format!("data-plots=\"{plots}\"")));
}

#[test]
fn empty_input_renders_a_page() {
    let doc = crate::html::document(&[]);
    assert!(doc.contains("data-plots=\"0\"") && doc.ends_with("</html>\n"));
    assert!(crate::markdown::document(&[]).starts_with("# tcplab report"));
}

/// Tags of `svg` (an XML fragment without comments or CDATA) nest properly.
fn assert_well_formed(svg: &str) {
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find('<') {
        let end = rest[start..].find('>').map(|e| start + e).expect("unclosed tag");
        let tag = &rest[start + 1..end];
        assert!(!tag.contains('<'), "'<' inside a tag: {tag}");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop(), Some(name), "closing {name}");
        } else if !tag.ends_with('/') {
            stack.push(tag.split_whitespace().next().unwrap_or(""));
        }
        rest = &rest[end + 1..];
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    assert!(
        !svg.contains("NaN") && !svg.contains("\"inf") && !svg.contains("\"-inf"),
        "non-finite number in {svg}"
    );
}

#[test]
fn every_svg_is_well_formed() {
    let docs = [
        crate::html::document(&fixture::loose_runs()),
        crate::html::document(&[fixture::sweep_run()]),
        line_chart().render(),
    ];
    for doc in &docs {
        for piece in doc.split("<svg ").skip(1) {
            let svg = format!("<svg {}", piece.split("</svg>").next().unwrap());
            assert_well_formed(&format!("{svg}</svg>"));
        }
    }
}

#[test]
fn extreme_values_still_draw_well_formed_plots() {
    let edge = [
        0.0,
        -1.0,
        1e-300,
        1e300,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        3.0,
        f64::MAX,
        f64::MIN_POSITIVE,
    ];
    for (i, a) in edge.iter().enumerate() {
        for b in &edge[i..] {
            let mut c = line_chart();
            c.series[0].points = vec![Point { x: *a, y: *b, err: Some(*a) }, Point::new(*b, *a)];
            c.refs.push(RefLine { y: *b, label: "r".into() });
            assert_well_formed(&c.render());
            let bars = BarChart {
                title: "b".into(),
                y_label: "y".into(),
                y_format: TickFormat::Number,
                categories: vec!["a".into(), "b".into()],
                series: vec![BarSeries { name: "s".into(), values: vec![Some(*a), Some(*b)] }],
            };
            assert_well_formed(&bars.render());
            let cell = |v: f64| Some(Cell { value: v, text: "t".into() });
            let h = Heatmap {
                title: "h".into(),
                x_label: "x".into(),
                y_label: "y".into(),
                columns: vec!["1".into(), "2".into()],
                rows: vec!["r".into()],
                cells: vec![vec![cell(*a), cell(*b)]],
                unit: "u".into(),
            };
            assert_well_formed(&h.render());
        }
    }
}
