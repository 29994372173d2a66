//! One module per subcommand: glue between settings, engine and output.

pub mod report;
pub mod run;
pub mod server;
pub mod test;
