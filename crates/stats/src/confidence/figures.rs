//! Combining a test type's own figures over repeats, as each figure declares
//! ([`results::Combine`]): averaged ones become their mean with a [`Spread`], the others one
//! value when every run agrees and each run's value when they differ. Figures are matched by
//! label and, for a repeated label (`note`), by occurrence.

use results::{Figure, FigureValue, Spread, TestResult};

/// The figures of `runs` combined, in order of first appearance.
pub fn combine(runs: &[TestResult]) -> Vec<Figure> {
    let keyed: Vec<Vec<(Key, &Figure)>> = runs.iter().map(|r| keyed(&r.summary.figures)).collect();
    let mut keys: Vec<Key> = Vec::new();
    for (k, _) in keyed.iter().flatten() {
        if !keys.contains(k) {
            keys.push(k.clone());
        }
    }
    keys.iter()
        .filter_map(|k| {
            let of_runs: Vec<&Figure> =
                keyed.iter().filter_map(|run| run.iter().find(|(rk, _)| rk == k).map(|(_, f)| *f)).collect();
            one(&of_runs, runs.len())
        })
        .collect()
}

/// A figure's label and how many figures of that label came before it in its run.
type Key = (String, usize);

fn keyed(figures: &[Figure]) -> Vec<(Key, &Figure)> {
    figures
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let before = figures[..i].iter().filter(|g| g.label == f.label).count();
            ((f.label.clone(), before), f)
        })
        .collect()
}

/// One figure from its values in the runs that had it (`of_runs`, of `n_runs` runs).
fn one(of_runs: &[&Figure], n_runs: usize) -> Option<Figure> {
    let first = (*of_runs.first()?).clone();
    let numbers: Option<Vec<f64>> = of_runs.iter().map(|f| f.value.number()).collect();
    match numbers {
        Some(values) if first.averaged() => Some(mean(first, &values)),
        _ => Some(per_run(first, of_runs, n_runs)),
    }
}

fn mean(first: Figure, values: &[f64]) -> Figure {
    let n = values.len() as f64;
    let m = values.iter().sum::<f64>() / n;
    let stddev = if values.len() < 2 {
        0.0
    } else {
        (values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    };
    let (min, max) = values.iter().fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    let spread = Spread { runs: values.len() as u32, stddev, min, max };
    Figure { value: first.value.with_number(m), spread: Some(spread), per_run: Vec::new(), ..first }
}

fn per_run(first: Figure, of_runs: &[&Figure], n_runs: usize) -> Figure {
    let values: Vec<FigureValue> = of_runs.iter().map(|f| f.value.clone()).collect();
    let agree = values.len() == n_runs && values.iter().all(|v| *v == first.value);
    Figure { per_run: if agree { Vec::new() } else { values }, spread: None, ..first }
}
