//! `tcplab stream`, `rr`, `crr`, `udp`, `udp-rr`: one test through the run pipeline.

use std::process::ExitCode;

use anyhow::Result;
use engine::StopFlag;
use results::{Reference, TestSpec};

use crate::args::emu::PathArgs;
use crate::args::ClientArgs;
use crate::settings;

/// Runs `spec` against the server in `client`, or across the emulated path in `path` if it
/// names one; compares its throughput with `reference` (from `--link`) and diagnoses it.
pub fn run_with(
    client: &ClientArgs,
    path: &PathArgs,
    spec: TestSpec,
    reference: Option<Reference>,
    stop: &StopFlag,
) -> Result<ExitCode> {
    let cfg = settings::test_config(client, path)?;
    let confidence = settings::confidence(&client.confidence);
    pipeline::single::run(&cfg, &spec, confidence.as_ref(), reference, stop)
}
