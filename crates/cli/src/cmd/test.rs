//! `tcplab stream`, `rr`, `crr`, `udp`, `udp-rr`: one test through the run pipeline, once or
//! with `--every` on a schedule ([`super::schedule`]).

use std::process::ExitCode;

use anyhow::Result;
use engine::StopFlag;

use crate::args::measure::TestCommand;
use crate::settings;

/// Runs the test of `t` against its server, or across the emulated path it names; compares
/// its throughput with its reference (`--link`) and diagnoses it.
pub fn run(t: &TestCommand, stop: &StopFlag) -> Result<ExitCode> {
    let (spec, reference) = (t.spec()?, t.reference()?);
    let cfg = settings::test_config(t.client(), t.path())?;
    let confidence = settings::confidence(&t.client().confidence);
    super::schedule::run(&t.client().schedule, &cfg, stop, |cfg| {
        pipeline::single::run(cfg, &spec, confidence.as_ref(), reference.clone(), stop)
    })
}
