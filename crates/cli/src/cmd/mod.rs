//! One module per subcommand: glue between settings, engine and output.

pub mod audit;
pub mod compare;
pub mod compare_cc;
pub mod daemon;
pub mod dashboard;
pub mod emu;
pub mod fleet;
pub mod history;
pub mod install;
pub mod keygen;
pub mod mesh;
pub mod model;
pub mod regressions;
pub mod report;
pub mod run;
pub mod schedule;
pub mod server;
pub mod study;
pub mod sweep;
pub mod test;
