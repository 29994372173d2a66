//! Command-line arguments → validated engine settings (no clap types past this point).

use std::time::Duration;

use anyhow::{bail, Result};
use engine::client::{ClientOptions, Family};
use pipeline::{Config, PathOptions, Storage, Target};
use results::{ConfidenceTarget, Direction, TestKind, TestSpec};

use crate::args::archive::{ConfidenceArgs, ConfidenceOn, StoreArgs};
use crate::args::emu::PathArgs;
use crate::args::{BufferArgs, ClientArgs, CrrArgs, RrArgs, SocketArgs, StreamArgs, TimingArgs};
use crate::output::format_of;

/// Connect and handshake deadline.
pub const HANDSHAKE_TIMEOUT: Duration = pipeline::HANDSHAKE_TIMEOUT;
/// Fewest iterations with a confidence target (netperf's lower clamp).
pub const MIN_ITERATIONS: u32 = 3;
/// Most iterations (t quantiles exist for any df; this only bounds a typo).
pub const MAX_ITERATIONS: u32 = 1000;

/// The pipeline configuration of a single-test command: the server of `client`, or the
/// emulated path of `path`.
pub fn test_config(client: &ClientArgs, path: &PathArgs) -> Result<Config> {
    let target = match path_options(path) {
        Some(_) if !client.host().is_empty() => {
            bail!("--path runs its own server across the emulated link; drop HOST")
        }
        Some(_) if client.from.is_some() => bail!("--from runs the test between two servers; drop --path"),
        Some(_) if client.iperf3.is_some() => bail!("--path runs its own server; drop --iperf3"),
        Some(p) => Target::Path(p),
        None => match (&client.from, &client.iperf3) {
            (Some(_), Some(_)) => bail!("--from asks a tcplab server to run the test; drop --iperf3"),
            (Some((a, a_port)), None) => Target::ThirdParty(engine::third_party::Ends {
                // The key is for A, the server asked; A reaches B with a key of its own.
                from: ClientOptions {
                    key: client_key(client.key_file.as_deref())?,
                    ..remote(a, a_port.unwrap_or(engine::server::DEFAULT_PORT))?
                },
                to_host: client.host().to_string(),
                to_port: client.port,
            }),
            (None, Some(spec)) => {
                let (host, port) =
                    crate::parse::host_port(spec).map_err(|e| anyhow::anyhow!("--iperf3: {e}"))?;
                let port = port.unwrap_or(engine::iperf3::DEFAULT_PORT);
                Target::Iperf3(ClientOptions { host, port, ..client_options(client)? })
            }
            (None, None) => Target::Remote(client_options(client)?),
        },
    };
    Ok(Config {
        target,
        format: format_of(&client.output),
        report: client.output.report.clone(),
        storage: Storage { spool_dir: client.schedule.spool_dir.clone(), ..storage(&client.store) },
        trace: client.output.trace.clone(),
        trace_level: client.output.trace_level.level(),
    })
}

/// The emulated path `--path` asks for, if any.
pub fn path_options(p: &PathArgs) -> Option<PathOptions> {
    let spec = p.path.clone()?;
    let (pcap, host_cpu, path2) = (p.pcap.clone(), p.host_cpu.clone(), p.path2.clone());
    Some(PathOptions { spec, pcap, host_cpu, seed: p.emu_seed, path2, mptcp: false })
}

/// The archive `--db` / `--no-store` choose.
pub fn storage(a: &StoreArgs) -> Storage {
    Storage { db: a.db.clone(), disabled: a.no_store, spool_dir: None }
}

/// A server at `host:port` with default options (and the key of `TCPLAB_KEY`, if set).
pub fn remote(host: &str, port: u16) -> Result<ClientOptions> {
    Ok(ClientOptions {
        host: host.to_string(),
        port,
        bind: None,
        family: None,
        timeout: HANDSHAKE_TIMEOUT,
        busy_wait: Duration::ZERO,
        key: client_key(None)?,
    })
}

/// The client's pre-shared key: `--key-file FILE`, else `TCPLAB_KEY=ID:SECRET`, else none.
/// Errors name the file or the variable and never show the secret.
pub fn client_key(file: Option<&std::path::Path>) -> Result<Option<engine::auth::ClientKey>> {
    use engine::auth::{keys, ClientKey};
    if let Some(path) = file {
        let (text, warning) = keys::read_private(path).map_err(anyhow::Error::msg)?;
        if let Some(w) = warning {
            eprintln!("warning: {w}");
        }
        let key = ClientKey::from_file_text(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        return Ok(Some(key));
    }
    match std::env::var("TCPLAB_KEY") {
        Ok(v) if !v.is_empty() => {
            ClientKey::from_pair(&v).map(Some).map_err(|e| anyhow::anyhow!("TCPLAB_KEY: {e}"))
        }
        _ => Ok(None),
    }
}

/// The repeat-until-confident target the flags ask for, or `None` for a single run.
pub fn confidence(a: &ConfidenceArgs) -> Option<ConfidenceTarget> {
    if a.confidence.is_none() && a.iterations.is_none() {
        return None;
    }
    let (level_pct, width_pct) = a.confidence.unwrap_or((99.0, 5.0));
    let (max, min) = a.iterations.unwrap_or((10, MIN_ITERATIONS));
    let min = min.clamp(MIN_ITERATIONS, MAX_ITERATIONS);
    let max = max.clamp(min, MAX_ITERATIONS);
    Some(ConfidenceTarget {
        level_pct,
        width_pct,
        min_iterations: min,
        max_iterations: max,
        result_only: a.confidence_on == ConfidenceOn::Result,
    })
}

/// Where to connect, and with which key.
pub fn client_options(c: &ClientArgs) -> Result<ClientOptions> {
    let family = match (c.ipv4, c.ipv6) {
        (true, _) => Some(Family::V4),
        (_, true) => Some(Family::V6),
        _ => None,
    };
    Ok(ClientOptions {
        host: c.host().to_string(),
        port: c.port,
        bind: c.bind,
        family,
        timeout: HANDSHAKE_TIMEOUT,
        busy_wait: Duration::ZERO,
        key: client_key(c.key_file.as_deref())?,
    })
}

/// Timing flags into `spec`.
pub(crate) fn apply_timing(spec: &mut TestSpec, t: &TimingArgs) {
    spec.duration_ms = t.time_ms;
    spec.interval_ms = t.interval_ms;
    spec.omit_ms = t.omit_ms;
    spec.parallel = t.parallel;
}

/// Socket buffer and pinning flags into `spec` (every test type): `-w` as the settings
/// table's combined `window` writes it (the one place that says which buffers it sets), then
/// each buffer's own flag over it.
pub(crate) fn apply_buffers(spec: &mut TestSpec, b: &BufferArgs) {
    let window = b.window.map(|w| (&results::setting::WINDOW, w));
    for (s, v) in window.into_iter().chain(b.each.given.iter().copied()) {
        // A byte count of a u32 is always a value these settings take.
        let _ = (s.set)(spec, &results::ParamValue::Int(v.into()));
    }
    (spec.cpu_local, spec.cpu_remote) = b.affinity.unwrap_or_default();
}

pub(crate) fn apply_socket(spec: &mut TestSpec, s: &SocketArgs) {
    apply_buffers(spec, &s.buffers);
    spec.nodelay |= s.nodelay;
    spec.mss = s.mss;
    spec.congestion = s.congestion.clone();
}

/// The spec of `tcplab stream`.
pub fn stream_spec(a: &StreamArgs) -> Result<TestSpec> {
    if a.udp {
        bail!("-u: `tcplab stream` is TCP; for UDP run `tcplab udp HOST -b RATE -l SIZE`");
    }
    let mut spec = engine::registry::defaults(TestKind::TcpStream);
    apply_timing(&mut spec, &a.timing);
    apply_socket(&mut spec, &a.socket);
    spec.send_len = a.len;
    spec.recv_len = a.recv_len.unwrap_or(a.len);
    spec.rate_bps = a.rate;
    a.copy.apply(&mut spec);
    if let Some(w) = a.window_clamp {
        (results::setting::WINDOW_CLAMP.set)(&mut spec, &results::ParamValue::Int(w))
            .map_err(anyhow::Error::msg)?;
    }
    spec.direction = match (a.reverse, a.bidir) {
        (true, _) => Direction::Reverse,
        (_, true) => Direction::Bidir,
        _ => Direction::Forward,
    };
    let blocks = match a.blocks {
        Some(k) => match k.checked_mul(u64::from(a.len)) {
            Some(n) => Some(n),
            None => bail!("-k {k} × -l {} overflows", a.len),
        },
        None => None,
    };
    if let Some(n) = a.bytes.or(blocks) {
        spec.bytes_limit = Some(n);
        spec.duration_ms = 0;
        spec.omit_ms = 0;
    }
    check(&spec)
}

/// The spec of `tcplab rr`.
pub fn rr_spec(a: &RrArgs) -> Result<TestSpec> {
    let mut spec = engine::registry::defaults(TestKind::TcpRr);
    apply_timing(&mut spec, &a.timing);
    apply_socket(&mut spec, &a.socket);
    (spec.request_len, spec.response_len) = a.size;
    spec.burst = a.burst;
    spec.busy_poll = a.busy_poll;
    spec.nodelay &= !a.nagle;
    if a.writes_per_message > 1 {
        let n = u64::from(a.writes_per_message);
        spec.options.insert(engine::registry::rr::WRITES.name.into(), results::ParamValue::Int(n));
    }
    check(&spec)
}

/// The spec of `tcplab crr`.
pub fn crr_spec(a: &CrrArgs) -> Result<TestSpec> {
    let mut spec = engine::registry::defaults(TestKind::TcpCrr);
    apply_timing(&mut spec, &a.timing);
    apply_socket(&mut spec, &a.socket);
    (spec.request_len, spec.response_len) = a.size;
    spec.nodelay &= !a.nagle;
    check(&spec)
}

/// Validates a spec built elsewhere (sweep points, mesh cells) with the server's rules,
/// stated with the flags of `command` (`sweep`, `mesh`). A congestion control missing here is
/// not refused up front: the points that ask for it fail and are stored as failed, the others
/// run.
pub fn check_spec(spec: &TestSpec, command: &str) -> Result<()> {
    check_limits(spec, command)
}

/// Validates with the same rules as the server, stated in the terms of the flag at fault on
/// the test's own command (`-l/--len must be at most 16M`); a congestion control must also
/// exist here, since the client sets it on its own sockets.
pub(crate) fn check(spec: &TestSpec) -> Result<TestSpec> {
    check_limits(spec, engine::registry::of(spec.test).command())?;
    if let Some(cc) = &spec.congestion {
        let available = netio::host::congestion_available();
        if !available.iter().any(|a| a == cc) {
            bail!(
                "-C/--congestion: '{cc}' is not available on this host (available: {})",
                available.join(", ")
            );
        }
    }
    Ok(spec.clone())
}

fn check_limits(spec: &TestSpec, command: &str) -> Result<()> {
    let limits = engine::limits::Limits::default();
    let checked = engine::limits::explain(spec, &limits).and_then(|()| {
        engine::limits::check_pin("cpu_local", spec.cpu_local).map_err(engine::limits::Problem::Other)
    });
    match checked {
        Ok(()) => Ok(()),
        Err(p) => bail!("{}", in_flag_terms(&p, command)),
    }
}

/// A problem of a spec as the user typed it: the flag `command` has for the field (its label
/// when it has none, never another command's flag or the field id), values in the flag's
/// units.
fn in_flag_terms(p: &engine::limits::Problem, command: &str) -> String {
    use engine::limits::Problem;
    let setting = p.field().and_then(results::setting::by_id);
    let flag = |s: &'static results::setting::Setting| s.flag_for(command).filter(|f| has_flag(command, f));
    let name = setting.map_or("a setting", |s| flag(s).unwrap_or(s.label));
    match p {
        &Problem::Range { min, max, got, .. } => {
            let kind = setting.map_or(results::setting::ValueKind::Count, |s| s.kind);
            let show = |v: u64| kind.write(&results::ParamValue::Int(v));
            if got > max && min <= 1 {
                format!("{name} must be at most {}", show(max))
            } else {
                format!("{name} must be between {} and {}", show(min), show(max))
            }
        }
        Problem::Other(r) => match (&r.field, setting) {
            (Some(field), Some(_)) => match r.message.strip_prefix(field.as_str()) {
                Some(rest) => format!("{name}{rest}"),
                None => format!("{name}: {}", r.message),
            },
            _ => r.message.clone(),
        },
    }
}

/// Whether every flag of `flags` (`-l/--len`, `-R/--reverse, --bidir`) is one of `command`'s
/// on the command line (a subcommand at any depth).
pub(crate) fn has_flag(command: &str, flags: &str) -> bool {
    let cli = <crate::args::Cli as clap::CommandFactory>::command();
    let Some(cmd) = find_command(&cli, command) else { return false };
    flags.split(['/', ',', ' ']).filter(|w| !w.is_empty()).all(|word| {
        let mut args = cmd.get_arguments();
        match (word.strip_prefix("--"), word.strip_prefix('-')) {
            (Some(long), _) => args.any(|a| a.get_long() == Some(long)),
            (None, Some(short)) => args.any(|a| a.get_short().map(String::from).as_deref() == Some(short)),
            _ => false,
        }
    })
}

/// The subcommand named `name`, searched depth first.
fn find_command<'a>(cmd: &'a clap::Command, name: &str) -> Option<&'a clap::Command> {
    cmd.get_subcommands().find_map(|c| if c.get_name() == name { Some(c) } else { find_command(c, name) })
}

/// The reference of `--link SPEC --link-stack SPEC`: the link's maximum goodput.
pub fn link_reference(l: &crate::args::link::LinkArgs, test: TestKind) -> Result<Option<results::Reference>> {
    let Some(spec) = &l.link else { return Ok(None) };
    let link = crate::cmd::model::link(spec)?;
    let udp = engine::registry::of(test).over_udp();
    let default = if udp { "ipv4:udp" } else { "ipv4:tcp:ts" };
    let stack = crate::cmd::model::stack(l.stack.as_deref().unwrap_or(default), "--link-stack")?;
    let reference =
        diagnose::link_reference(&link, &stack).map_err(|e| anyhow::anyhow!("--link {spec}: {e}"))?;
    Ok(Some(reference))
}

/// The standard suite of `tcplab run` (seed 000's loop-back baseline and Table 4 sizes).
pub fn suite(time_ms: u64) -> Vec<TestSpec> {
    let mut out = Vec::new();
    for direction in [Direction::Forward, Direction::Reverse] {
        let mut s = engine::registry::defaults(TestKind::TcpStream);
        s.direction = direction;
        out.push(s);
    }
    for (req, resp) in [(1, 1), (64, 64), (100, 200), (128, 8192)] {
        let mut s = engine::registry::defaults(TestKind::TcpRr);
        (s.request_len, s.response_len) = (req, resp);
        out.push(s);
    }
    out.push(engine::registry::defaults(TestKind::TcpCrr));
    out.push(crate::udp_settings::suite_udp(time_ms));
    for s in &mut out {
        s.duration_ms = time_ms;
        s.interval_ms = 0;
    }
    out
}

/// The test every point of a sweep or mesh runs: the type's defaults with the shared settings
/// (not yet checked: the caller adds its own, then calls [`check_spec`]).
pub fn shaped_spec(a: &crate::args::shape::TestShapeArgs) -> results::TestSpec {
    let mut spec = engine::registry::defaults(a.test);
    apply_timing(&mut spec, &a.timing);
    apply_socket(&mut spec, &a.socket);
    if let Some(len) = a.len {
        (spec.send_len, spec.recv_len) = (len, len);
    }
    if let Some(rate) = a.rate {
        spec.rate_bps = rate;
    }
    if let Some(size) = a.size {
        (spec.request_len, spec.response_len) = size;
    }
    spec.burst = a.burst;
    spec
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use results::TestKind;

    use crate::args::{Cli, Command};

    /// The error of a test command line: clap's, or the one its spec check gives.
    fn error_of(args: &[&str]) -> String {
        let cli = match Cli::try_parse_from(args) {
            Ok(cli) => cli,
            Err(e) => return e.to_string(),
        };
        let Command::Test(t) = cli.command else { panic!("{args:?} is no test command") };
        t.spec().err().map(|e| format!("{e:#}")).unwrap_or_default()
    }

    /// The settings table against clap's commands: every flag it names for a setting a
    /// command's test type takes is a flag of that command (else the table needs a
    /// `flag_on` entry), so errors name only flags the command has.
    #[test]
    fn every_flag_the_settings_table_names_is_one_its_command_has() {
        let mut wrong = Vec::new();
        let tests = engine::registry::all().map(|t| (t.command(), Some(t.kind())));
        for (command, kind) in tests.chain([("sweep", None), ("mesh", None)]) {
            for s in results::setting::ALL {
                let taken =
                    kind.map_or(TestKind::ALL.into_iter().any(|k| s.is_taken_by(k)), |k| s.is_taken_by(k));
                match s.flag_for(command) {
                    Some(flag) if taken && !super::has_flag(command, flag) => {
                        wrong.push(format!("{command}: {} has no {flag}", s.id))
                    }
                    _ => {}
                }
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
        assert!(super::has_flag("file", "--size") && !super::has_flag("file", "-n/--bytes"));
        assert!(super::has_flag("stream", "-R/--reverse, --bidir") && !super::has_flag("nosuch", "-t"));
    }

    #[test]
    fn w_sets_every_buffer_and_each_buffer_flag_overrides_it() {
        let s = spec_of(&["tcplab", "stream", "h", "-w", "64K", "--rcvbuf", "8K"]);
        let buffers = (s.sndbuf, s.rcvbuf, s.remote_sndbuf, s.remote_rcvbuf);
        assert_eq!(buffers, (Some(65_536), Some(8192), Some(65_536), Some(65_536)));
        let s = spec_of(&["tcplab", "udp", "h", "--remote-sndbuf", "1M"]);
        assert_eq!((s.sndbuf, s.remote_sndbuf), (None, Some(1 << 20)));
    }

    #[test]
    fn a_flag_has_one_limit_stated_in_its_own_terms() {
        for w in ["1G", "4G", "5G"] {
            let e = error_of(&["tcplab", "stream", "h", "-w", w]);
            assert!(e.contains(&format!("'{w}' is too large: at most 512M")), "{e}");
        }
        let e = error_of(&["tcplab", "stream", "h", "-l", "4G"]);
        assert!(e.contains("at most 16M") && !e.contains("4G - 1"), "{e}");
        assert_eq!(error_of(&["tcplab", "stream", "h", "-t", "4000"]), "-t/--time must be at most 3600 s");
        assert_eq!(error_of(&["tcplab", "stream", "h", "-M", "10"]), "-M/--mss must be between 88 and 65535");
        assert_eq!(error_of(&["tcplab", "rr", "h", "--burst", "0"]), "--burst must be between 1 and 1024");
        let e = error_of(&["tcplab", "stream", "h", "-O", "20"]);
        assert_eq!(e, "-O/--omit: omitted time must be shorter than the test");
    }

    fn spec_of(args: &[&str]) -> results::TestSpec {
        let Command::Test(t) = Cli::try_parse_from(args).unwrap().command else { panic!("{args:?}") };
        t.spec().unwrap()
    }

    #[test]
    fn iperf3_habits_are_taken_or_refused_with_a_pointer() {
        let with_c = Cli::try_parse_from(["tcplab", "stream", "-c", "example.net"]).unwrap();
        let Command::Test(t) = with_c.command else { panic!() };
        assert_eq!(t.client().host(), "example.net");
        assert!(Cli::try_parse_from(["tcplab", "rr", "a", "-c", "b"]).is_err(), "HOST or -c, not both");
        assert!(Cli::try_parse_from(["tcplab", "stream"]).is_err(), "a server is needed");
        let e = error_of(&["tcplab", "stream", "h", "-u"]);
        assert!(e.contains("tcplab udp"), "{e}");
    }

    #[test]
    fn stream_b_paces_each_stream_and_a_bad_rate_is_refused() {
        let s = spec_of(&["tcplab", "stream", "h", "-b", "50M", "-P", "2", "-R"]);
        assert_eq!((s.rate_bps, s.parallel), (50_000_000, 2));
        assert_eq!(spec_of(&["tcplab", "stream", "h"]).rate_bps, 0, "unlimited by default");
        let e = error_of(&["tcplab", "stream", "h", "-b", "fast"]);
        assert!(e.contains("--rate <RATE>") && e.contains("'fast'"), "{e}");
    }

    #[test]
    fn rr_and_crr_set_nodelay_unless_nagle_is_asked_for() {
        for test in ["rr", "crr"] {
            assert!(spec_of(&["tcplab", test, "h"]).nodelay, "{test}");
            assert!(!spec_of(&["tcplab", test, "h", "--nagle"]).nodelay, "{test}");
            assert!(Cli::try_parse_from(["tcplab", test, "h", "--nagle", "-N"]).is_err());
        }
    }

    #[test]
    fn a_congestion_control_missing_here_is_refused_before_connecting() {
        let e = error_of(&["tcplab", "stream", "h", "-C", "nosuchcc"]);
        assert!(
            e.starts_with("-C/--congestion: 'nosuchcc' is not available on this host (available: "),
            "{e}"
        );
        let here = netio::host::congestion_available();
        if let Some(cc) = here.first() {
            assert_eq!(error_of(&["tcplab", "stream", "h", "-C", cc]), "");
        }
    }
}
