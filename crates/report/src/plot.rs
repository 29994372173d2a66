//! A small SVG plotting layer for the HTML report: line charts (linear or log-2 x, error
//! bars, limit lines, peaks), grouped bars and heatmaps, with nice ticks, legends and a
//! colour-blind-safe palette. Output is deterministic text, so every chart is snapshot-tested.
//!
//! Own code rather than plotters: the report needs log-2 size axes with `64K` labels,
//! tooltips (`<title>`), CI error bars and small stable output; plotters' SVG backend gives
//! none of these without as much code again, and its text depends on font metrics.

pub mod bar;
pub mod frame;
pub mod heatmap;
pub mod line;
pub mod palette;
pub mod scale;
pub mod svg;
pub mod tseq;

pub use bar::{BarChart, BarSeries};
pub use heatmap::{Cell, Heatmap};
pub use line::{AxisSpec, LineChart, Point, RefLine, Series};
pub use scale::{ScaleKind, TickFormat};
