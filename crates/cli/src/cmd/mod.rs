//! One module per subcommand: glue between settings, engine and output.

pub mod emu;
pub mod emulated;
pub mod run;
pub mod server;
pub mod server_child;
pub mod test;
