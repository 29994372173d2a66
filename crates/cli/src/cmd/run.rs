//! `tcplab run [HOST]`: the standard suite against HOST, an emulated path, or an embedded
//! server on 127.0.0.1; once, or with `--every` on a schedule ([`super::schedule`]).

use std::process::ExitCode;

use anyhow::{bail, Result};
use engine::StopFlag;
use pipeline::{Config, Target};

use crate::args::RunArgs;
use crate::output::format_of;
use crate::settings::{link_reference, path_options, remote, storage, suite};

/// Runs the suite.
pub fn run(a: &RunArgs, stop: &StopFlag) -> Result<ExitCode> {
    let target = match (&a.host, path_options(&a.path)) {
        (Some(_), Some(_)) => bail!("--path runs its own server across the emulated link; drop HOST"),
        (_, Some(p)) => Target::Path(p),
        (Some(host), None) => Target::Remote(remote(host, a.port)?),
        (None, None) => Target::Loopback,
    };
    let cfg = Config {
        target,
        format: format_of(&a.output),
        report: a.output.report.clone(),
        storage: storage(&a.store),
        trace: a.output.trace.clone(),
        trace_level: a.output.trace_level.level(),
    };
    let link = link_reference(&a.link, results::TestKind::TcpStream)?;
    super::schedule::run(&a.schedule, &cfg, stop, |cfg| {
        pipeline::suite::run(cfg, &suite(a.time_ms), link.clone(), stop)
    })
}
