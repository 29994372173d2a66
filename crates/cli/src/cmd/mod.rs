//! One module per subcommand: glue between settings, engine and output.

pub mod run;
pub mod server;
pub mod test;
