//! `tcplab server`.

use std::process::ExitCode;

use anyhow::{Context, Result};
use engine::{Server, ServerConfig, StopFlag};

use crate::args::ServerArgs;

/// Serves until Ctrl-C (or one test with `-1`).
pub fn run(a: &ServerArgs, stop: &StopFlag) -> Result<ExitCode> {
    let cfg = ServerConfig {
        bind: a.addr(),
        one_off: a.one_off,
        max_concurrent: a.max_concurrent as usize,
        allow_third_party: a.allow_third_party,
        ..ServerConfig::default()
    };
    let server = Server::bind(cfg).with_context(|| format!("listening on {}", a.addr()))?;
    let addr = server.local_addr().context("reading the bound address")?;
    let families = if addr.is_ipv6() && addr.ip().is_unspecified() { "IPv4 and IPv6; " } else { "" };
    let third = if a.allow_third_party { "third-party tests allowed; " } else { "" };
    eprintln!("tcplab server listening on {addr} ({families}{third}Ctrl-C to stop)");
    server.run(stop).context("accepting connections")?;
    Ok(ExitCode::SUCCESS)
}
