//! `tcplab emu`: a shell on an emulated path (like mahimahi's), and `--list`.
//!
//! The client-side command runs in the client namespace, the optional server-side command
//! in the server namespace; each finds the other side's address in `TCPLAB_PEER`. When the
//! client-side command ends, the server-side one gets SIGTERM, the emulator stops, and its
//! counters are printed on stderr. The exit code is the client-side command's.

use std::process::{Child, Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use emu::pump::cgroup::CpuQuota;
use emu::pump::{Emulator, Role};

use crate::args::emu::EmuArgs;
use crate::output::emit;
use pipeline::emulated::{emulator_options, parse_host_cpu, quotas};

/// Runs `tcplab emu`.
pub fn run(a: &EmuArgs) -> Result<ExitCode> {
    if a.list {
        let rows: Vec<_> = emu::presets::all().iter().map(|p| (p.name, p.spec, p.description)).collect();
        emit(&report::emu::presets(&rows));
        return Ok(ExitCode::SUCCESS);
    }
    let Some(p) = crate::settings::path_options(&a.path) else {
        bail!("`tcplab emu` needs --path SPEC (or --list)")
    };
    let spec = &p.spec;
    let (path, mut opts) = emulator_options(&p)?;
    opts.client_addr = a.client_addr;
    opts.server_addr = a.server_addr;
    let cpu = a.path.host_cpu.as_deref().map(parse_host_cpu).transpose()?.unwrap_or_default();
    let (client_quota, server_quota) = quotas(cpu)?;
    let emu = Emulator::start(spec, &path, &opts).context("starting the link emulator")?;
    let server = match &a.server_cmd {
        Some(cmd) => Some(spawn(&emu, Role::Server, &shell_command(cmd), server_quota.as_ref())?),
        None => None,
    };
    let client_cmd = client_command(&a.command);
    let status = spawn(&emu, Role::Client, &client_cmd, client_quota.as_ref())
        .and_then(|mut c| c.wait().context("waiting for the client-side command"));
    if let Some(s) = server {
        stop_child(s);
    }
    let failure = emu.failure();
    let report = emu.stop()?;
    eprint!("{}", report::emu::text(&report));
    if a.stats_json {
        eprintln!("{}", serde_json::to_string(&report).unwrap_or_default());
    }
    if let Some(f) = failure {
        bail!("link emulator: {f}");
    }
    let code = status?.code().unwrap_or(2);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(2)))
}

/// `sh -c CMD`.
fn shell_command(cmd: &str) -> Vec<String> {
    vec!["/bin/sh".into(), "-c".into(), cmd.into()]
}

/// The command given, or the user's shell.
fn client_command(cmd: &[String]) -> Vec<String> {
    if cmd.is_empty() {
        vec![std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into())]
    } else {
        cmd.to_vec()
    }
}

/// Starts `argv` on `role`'s side with TCPLAB_PEER set, inside `quota` if given.
fn spawn(emu: &Emulator, role: Role, argv: &[String], quota: Option<&CpuQuota>) -> Result<Child> {
    let Some((program, args)) = argv.split_first() else { bail!("empty command") };
    let peer = match role {
        Role::Client => emu.addr(Role::Server),
        Role::Server => emu.addr(Role::Client),
    };
    let mut cmd = Command::new(program);
    cmd.args(args).env("TCPLAB_PEER", peer.to_string()).env("TCPLAB_SIDE", role.name());
    let procs = quota.map(CpuQuota::procs_file);
    emu.netns(role)
        .spawn(&mut cmd, netio::netns::SIGKILL, procs.as_deref())
        .with_context(|| format!("starting `{program}` on the {} side", role.name()))
}

/// SIGTERM, a moment's grace, then SIGKILL.
fn stop_child(mut child: Child) {
    let _ = netio::netns::signal(child.id(), netio::netns::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}
