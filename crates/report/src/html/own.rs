//! The tables and plots a test type has of its own (`Summary::own_tables`, `own_plots`), per
//! test, drawn as they are: which type made them, this section does not know.

use results::TestResult;

use super::page::Page;
use crate::figures::{own_chart, own_table, own_views};
use crate::param_grid::distinct_labels;

/// The section, if any test has tables or plots of its own.
pub fn section(p: &mut Page, tests: &[&TestResult]) {
    let with: Vec<&TestResult> = tests.iter().copied().filter(|t| !own_views(t).is_empty()).collect();
    if with.is_empty() {
        return;
    }
    p.section("own", "Each test type's own tables and plots");
    for (t, label) in with.iter().zip(distinct_labels(&with)) {
        for (run, s) in own_views(t) {
            let label = format!("{label}{run}");
            p.h3(&label);
            for plot in &s.own_plots {
                p.plot(&own_chart(&label, plot).render());
            }
            for table in &s.own_tables {
                p.para("caption", &table.title);
                p.table(&own_table(table), true);
                table.notes.iter().for_each(|n| p.para("note", n));
            }
        }
    }
    p.end_section();
}
