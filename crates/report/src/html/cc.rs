//! The HTML view of a congestion-control comparison: the seed's table and the fairness
//! table, then per round the throughput of every control over time, their window means
//! ± sd, and throughput against the RTT probe's delay (Pantheon's view, ± sd bars).

use results::{CcStudy, RunRecord};

use super::charts::rate_unit;
use super::page::Page;
use crate::cc;
use crate::plot::{AxisSpec, LineChart, Point, Series};

/// The comparison section of every run that is one; nothing for other runs.
pub fn section(p: &mut Page, runs: &[RunRecord]) {
    let studies: Vec<(&RunRecord, &CcStudy)> =
        runs.iter().filter_map(|r| Some((r, r.cc.as_ref()?))).collect();
    if studies.is_empty() {
        return;
    }
    p.section("cc", "Congestion controls compared");
    for (run, study) in studies {
        if runs.len() > 1 {
            p.h3(&format!("Run {}", run.id.map_or_else(|| "?".into(), |i| i.to_string())));
        }
        p.table(&cc::table(study, &run.tests), true);
        let fairness = cc::fairness_table(study);
        if !fairness.is_empty() {
            p.h3("Concurrent flows");
            p.table(&fairness, true);
        }
        let line = cc::unavailable_line(study);
        if !line.is_empty() {
            p.para("note", &line);
        }
        p.para("note", &cc::method_note(study));
        for round in 1..=study.rounds {
            charts(p, study, round);
        }
    }
    p.end_section();
}

fn charts(p: &mut Page, study: &CcStudy, round: u32) {
    let runs: Vec<_> = study.runs.iter().filter(|r| r.round == round).collect();
    if runs.is_empty() {
        return;
    }
    let max = runs.iter().flat_map(|r| &r.series).map(|(_, v)| *v).fold(0.0, f64::max);
    let (div, unit) = rate_unit(max);
    let suffix = if study.rounds > 1 { format!(" (round {round})") } else { String::new() };
    let y = || AxisSpec::linear(&format!("throughput ({unit})"));

    let mut over_time =
        LineChart::new(&format!("Throughput over time{suffix}"), AxisSpec::linear("time (s)"), y());
    over_time.markers = false;
    let mut windows =
        LineChart::new(&format!("Window means ± sd{suffix}"), AxisSpec::linear("window centre (s)"), y());
    let mut scatter = LineChart::new(
        &format!("Throughput vs RTT probe{suffix}"),
        AxisSpec::linear("RTT probe median (ms)"),
        y(),
    );
    for r in &runs {
        let name = r.congestion.clone();
        let points = r.series.iter().map(|&(t, v)| Point::new(t, v / div)).collect();
        over_time.series.push(Series { name: name.clone(), points });
        let points = r
            .windows
            .iter()
            .map(|w| Point { x: (w.start_s + w.end_s) / 2.0, y: w.bps.mean / div, err: Some(w.bps.sd / div) })
            .collect();
        windows.series.push(Series { name: name.clone(), points });
        let delay = cc::probe_of(study, r).and_then(|p| p.p50_us);
        let points = match (delay, r.throughput_bps) {
            (Some(d), Some(t)) => vec![Point { x: d / 1000.0, y: t.mean / div, err: Some(t.sd / div) }],
            _ => Vec::new(),
        };
        scatter.series.push(Series { name, points });
    }
    p.open_row();
    p.plot(&over_time.render());
    p.plot(&windows.render());
    p.plot(&scatter.render());
    p.close_row();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plots_only_for_runs_that_are_comparisons() {
        let mut run = crate::fixture::run(Vec::new());
        let mut p = Page::new();
        section(&mut p, std::slice::from_ref(&run));
        assert!(!p.finish("t", "").contains("Congestion controls"));
        run.cc = Some(crate::cc::tests::study());
        let mut p = Page::new();
        section(&mut p, std::slice::from_ref(&run));
        let html = p.finish("t", "");
        for title in ["Throughput over time", "Window means ± sd", "Throughput vs RTT probe", "highspeed"] {
            assert!(html.contains(title), "{title} missing");
        }
        // Two controls: a line each over time, three windows each, one scatter point each.
        assert!(html.matches("<polyline").count() >= 4);
    }
}
