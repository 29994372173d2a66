//! `tcplab emu`: a shell on an emulated path (like mahimahi's), and `--list`.
//!
//! The client-side command runs in the client namespace, the optional server-side command
//! in the server namespace; each finds the other side's address in `TCPLAB_PEER`, and `{peer}`
//! in a command's words is replaced by it. Standard output is the client-side command's
//! alone: the server-side command's output goes to stderr, each line prefixed `server: `, or
//! to `--server-log FILE`. When the client-side command ends, every process left on either
//! side gets SIGTERM and, after a grace period, SIGKILL; the emulator stops and its counters
//! are printed on stderr. The exit code is the client-side command's (128 + N for one ended by
//! signal N). SIGINT, SIGTERM and SIGHUP to tcplab are passed on to the client-side command's
//! process group ([`start_client`]); if it still runs [`GRACE`] later, the cleanup above ends it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::Ipv4Addr;
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use emu::pump::cgroup::CpuQuota;
use emu::pump::{Emulator, Role};

use crate::args::emu::EmuArgs;
use crate::output::emit;
use pipeline::emulated::{emulator_options, parse_host_cpu, quotas, second_path, start_emulator};

/// How long processes left on the path have after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(2);
/// How long the server's output may take to drain once its processes are gone.
const DRAIN: Duration = Duration::from_secs(1);
/// The placeholder replaced by the other side's address.
const PEER: &str = "{peer}";

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
    let quotas = quotas(cpu)?;
    // Orphans of either side's commands come here, to be reaped once stopped.
    netio::netns::become_subreaper().context("becoming the reaper of the commands' children")?;
    let mut emu = start_emulator(spec, &path, &opts, quotas.emulator.as_ref())?;
    if let Some(spec2) = &p.path2 {
        second_path(&mut emu, spec2)?;
    }
    let server = match &a.server_cmd {
        Some(cmd) => {
            let argv = with_peer(&shell_command(cmd), emu.addr(Role::Client));
            Some(start_server(&emu, &argv, quotas.server.as_ref(), a.server_log.as_deref())?)
        }
        None => None,
    };
    let client_cmd = with_peer(&client_command(&a.command), emu.addr(Role::Server));
    let client = start_client(&emu, &client_cmd, quotas.client.as_ref());
    let waited = client.as_ref().map_err(|e| anyhow::anyhow!("{e:#}")).and_then(ClientCmd::wait);
    let stopped = emu.stop_processes(GRACE);
    if let Some(s) = server {
        s.finish();
    }
    let status = client.and_then(|c| c.finish(waited?));
    netio::netns::reap_exited();
    let failure = emu.failure();
    let second = emu.second_report().map(Box::new);
    let report = results::EmuReport { second_path: second, ..emu.stop()? };
    eprint!("{}", report::emu::text(&report));
    if a.stats_json {
        eprintln!("{}", serde_json::to_string(&report).unwrap_or_default());
    }
    let stopped = stopped.context("stopping the processes on the emulated path")?;
    if stopped.killed > 0 {
        eprintln!(
            "emu: {} process(es) still running {} s after SIGTERM were killed",
            stopped.killed,
            GRACE.as_secs()
        );
    }
    if let Some(f) = failure {
        bail!("link emulator: {f}");
    }
    Ok(ExitCode::from(exit_code(status?)))
}

/// The client-side command's exit code; for one ended by a signal, 128 + its number, as a
/// shell reports it.
fn exit_code(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    let code = status.code().or_else(|| status.signal().map(|s| 128 + s)).unwrap_or(2);
    u8::try_from(code).unwrap_or(2)
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

/// `argv` with `{peer}` in any word replaced by `peer` (the caller's shell would expand
/// `$TCPLAB_PEER` before tcplab runs; `{peer}` reaches the command as written).
fn with_peer(argv: &[String], peer: Ipv4Addr) -> Vec<String> {
    argv.iter().map(|w| w.replace(PEER, &peer.to_string())).collect()
}

/// Starts `argv` on `role`'s side with TCPLAB_PEER set, inside `quota` if given, in a process
/// group of its own with `own_group`; its output to `output` when given (stdin then closed),
/// else inherited.
fn spawn(
    emu: &Emulator,
    role: Role,
    argv: &[String],
    quota: Option<&CpuQuota>,
    output: Option<(Stdio, Stdio)>,
    own_group: bool,
) -> Result<Child> {
    let Some((program, args)) = argv.split_first() else { bail!("empty command") };
    let peer = match role {
        Role::Client => emu.addr(Role::Server),
        Role::Server => emu.addr(Role::Client),
    };
    let mut cmd = Command::new(program);
    cmd.args(args).env("TCPLAB_PEER", peer.to_string()).env("TCPLAB_SIDE", role.name());
    if let Some((out, err)) = output {
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    }
    if own_group {
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    }
    let procs = quota.map(CpuQuota::procs_file);
    emu.netns(role)
        .spawn(&mut cmd, netio::netns::SIGKILL, procs.as_deref())
        .with_context(|| format!("starting `{program}` on the {} side", role.name()))
}

/// What happened to the client-side command.
enum Event {
    /// It ended (or waiting for it failed).
    Exited(std::io::Result<ExitStatus>),
    /// tcplab got this signal and passed it on.
    Signal,
}

/// The client-side command while it runs, with the signals tcplab gets passed on to it.
struct ClientCmd {
    events: mpsc::Receiver<Event>,
    forwarder: signal_hook::iterator::Handle,
}

/// Starts the client-side command and passes SIGINT, SIGTERM and SIGHUP on to it, as a shell
/// does to its foreground job: to its own process group, so `timeout` or `kill` ends the
/// command and what it started. Started from an interactive shell, the command stays in
/// tcplab's group (so it can read the terminal, and keystrokes signal it directly); SIGTERM and
/// SIGHUP then go to it alone.
fn start_client(emu: &Emulator, argv: &[String], quota: Option<&CpuQuota>) -> Result<ClientCmd> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let own_group = !netio::process::in_terminal_foreground();
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("installing signal handlers")?;
    let mut child = spawn(emu, Role::Client, argv, quota, None, own_group)?;
    let pid = child.id();
    let (tx, events) = mpsc::channel();
    let forwarder = signals.handle();
    let to_main = tx.clone();
    std::thread::spawn(move || {
        for sig in signals.forever() {
            if pass_on(pid, own_group, sig) {
                let _ = to_main.send(Event::Signal);
            }
        }
    });
    std::thread::spawn(move || {
        let _ = tx.send(Event::Exited(child.wait()));
    });
    Ok(ClientCmd { events, forwarder })
}

/// Passes `sig` on to the client-side command (its group with `own_group`); false if there
/// was nothing to do (a terminal's SIGINT already reached a command in tcplab's group).
fn pass_on(pid: u32, own_group: bool, sig: i32) -> bool {
    let name = match sig {
        signal_hook::consts::SIGINT => "SIGINT",
        signal_hook::consts::SIGTERM => "SIGTERM",
        _ => "SIGHUP",
    };
    let sent = if own_group {
        netio::process::signal_group(pid, sig)
    } else if sig == signal_hook::consts::SIGINT {
        return false;
    } else {
        netio::netns::signal(pid, sig)
    };
    match sent {
        Ok(()) => eprintln!("emu: {name}: passed on to the client-side command"),
        Err(e) => eprintln!("emu: {name}: the client-side command is gone ({e})"),
    }
    true
}

impl ClientCmd {
    /// Waits for the command to end: its status, or `None` if it still ran [`GRACE`] after a
    /// signal was passed on (the cleanup that follows ends it).
    fn wait(&self) -> Result<Option<ExitStatus>> {
        let mut deadline: Option<Instant> = None;
        loop {
            let event = match deadline {
                None => self.events.recv().ok(),
                Some(d) => self.events.recv_timeout(d.saturating_duration_since(Instant::now())).ok(),
            };
            match event {
                Some(Event::Exited(status)) => {
                    return status.map(Some).context("waiting for the client-side command")
                }
                Some(Event::Signal) => deadline = deadline.or_else(|| Some(Instant::now() + GRACE)),
                None => return Ok(None),
            }
        }
    }

    /// Stops passing signals on; the command's status, once the cleanup ended it if `waited`
    /// found it still running.
    fn finish(self, waited: Option<ExitStatus>) -> Result<ExitStatus> {
        self.forwarder.close();
        if let Some(status) = waited {
            return Ok(status);
        }
        loop {
            match self.events.recv_timeout(DRAIN) {
                Ok(Event::Exited(status)) => return status.context("waiting for the client-side command"),
                Ok(Event::Signal) => {}
                Err(_) => bail!("the client-side command outlived the cleanup"),
            }
        }
    }
}

/// The server-side command and the threads that carry its output to stderr.
struct ServerCmd {
    child: Child,
    drains: mpsc::Receiver<()>,
    pipes: usize,
}

/// Starts the server-side command with its output in `log` or, prefixed, on stderr.
fn start_server(
    emu: &Emulator,
    argv: &[String],
    quota: Option<&CpuQuota>,
    log: Option<&std::path::Path>,
) -> Result<ServerCmd> {
    let output = match log {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("creating the server log {}", path.display()))?;
            let copy = file.try_clone().context("opening the server log twice")?;
            (Stdio::from(file), Stdio::from(copy))
        }
        None => (Stdio::piped(), Stdio::piped()),
    };
    let mut child = spawn(emu, Role::Server, argv, quota, Some(output), false)?;
    let (tx, drains) = mpsc::channel();
    let mut pipes = 0;
    let outs: [Option<Box<dyn Read + Send>>; 2] = [
        child.stdout.take().map(|o| Box::new(o) as Box<dyn Read + Send>),
        child.stderr.take().map(|e| Box::new(e) as Box<dyn Read + Send>),
    ];
    for out in outs.into_iter().flatten() {
        let tx = tx.clone();
        pipes += 1;
        std::thread::spawn(move || {
            prefix_lines(out, &mut std::io::stderr(), "server: ");
            let _ = tx.send(());
        });
    }
    Ok(ServerCmd { child, drains, pipes })
}

impl ServerCmd {
    /// Reaps the command (its processes were stopped already) and lets its output drain.
    fn finish(mut self) {
        let _ = self.child.wait();
        for _ in 0..self.pipes {
            if self.drains.recv_timeout(DRAIN).is_err() {
                break;
            }
        }
    }
}

/// Copies `from` to `to` line by line, each line prefixed (bytes kept as they are) and
/// written in one call, so lines from the command's two outputs never interleave.
fn prefix_lines(from: impl Read, to: &mut impl Write, prefix: &str) {
    let mut reader = BufReader::new(from);
    let mut line = prefix.as_bytes().to_vec();
    while matches!(reader.read_until(b'\n', &mut line), Ok(n) if n > 0) {
        if !line.ends_with(b"\n") {
            line.push(b'\n');
        }
        let _ = to.write_all(&line);
        line.truncate(prefix.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_placeholder_is_replaced_in_every_word() {
        let argv: Vec<String> = ["ping", "-c", "3", "{peer}", "http://{peer}:80/"].map(String::from).to_vec();
        let out = with_peer(&argv, Ipv4Addr::new(198, 18, 0, 2));
        assert_eq!(out, ["ping", "-c", "3", "198.18.0.2", "http://198.18.0.2:80/"]);
    }

    #[test]
    fn server_output_is_prefixed_line_by_line() {
        let mut out = Vec::new();
        prefix_lines(&b"Server listening on 5201\n{\"a\":1}\nno newline"[..], &mut out, "server: ");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "server: Server listening on 5201\nserver: {\"a\":1}\nserver: no newline\n"
        );
    }
}
