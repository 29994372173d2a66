//! `tcplab dashboard`: a read-only web view of the archive.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

use crate::parse;

/// `tcplab dashboard`.
#[derive(Debug, Args)]
pub struct DashboardArgs {
    /// Archive: a file, or postgres://user@host/db (default: $TCPLAB_DB, else the default file).
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    /// Address to serve on; any address but loopback needs --token or --token-file.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8180")]
    pub listen: SocketAddr,
    /// The token every request must carry (`?token=` or `Authorization: Bearer`).
    #[arg(long, value_name = "TOKEN", conflicts_with = "token_file")]
    pub token: Option<String>,
    /// Read the token from the first line of FILE (keeps it out of `ps`).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Each path's baseline and verdict come from its results since this long ago.
    #[arg(long, default_value = "7d", value_parser = parse::age)]
    pub since: std::time::Duration,
    /// A cell is coloured (and regressed) against this share of its path's baseline.
    #[arg(long, default_value = "10%", value_parser = parse::slowdown_pct)]
    pub threshold: f64,
    /// How often the grid page refreshes itself.
    #[arg(long, default_value = "5s", value_parser = parse::interval)]
    pub poll: std::time::Duration,
}
