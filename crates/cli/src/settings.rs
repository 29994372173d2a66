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
        Some(_) if !client.host.is_empty() => {
            bail!("--path runs its own server across the emulated link; drop HOST")
        }
        Some(p) => Target::Path(p),
        None => Target::Remote(client_options(client)),
    };
    Ok(Config {
        target,
        format: format_of(&client.output),
        report: client.output.report.clone(),
        storage: storage(&client.store),
        trace: client.output.trace.clone(),
    })
}

/// The emulated path `--path` asks for, if any.
pub fn path_options(p: &PathArgs) -> Option<PathOptions> {
    let spec = p.path.clone()?;
    Some(PathOptions { spec, pcap: p.pcap.clone(), host_cpu: p.host_cpu.clone(), seed: p.emu_seed })
}

/// The archive `--db` / `--no-store` choose.
pub fn storage(a: &StoreArgs) -> Storage {
    Storage { db: a.db.clone(), disabled: a.no_store }
}

/// A server at `host:port` with default options.
pub fn remote(host: &str, port: u16) -> ClientOptions {
    ClientOptions {
        host: host.to_string(),
        port,
        bind: None,
        family: None,
        timeout: HANDSHAKE_TIMEOUT,
        busy_wait: Duration::ZERO,
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

/// Where to connect.
pub fn client_options(c: &ClientArgs) -> ClientOptions {
    let family = match (c.ipv4, c.ipv6) {
        (true, _) => Some(Family::V4),
        (_, true) => Some(Family::V6),
        _ => None,
    };
    ClientOptions {
        host: c.host.clone(),
        port: c.port,
        bind: c.bind,
        family,
        timeout: HANDSHAKE_TIMEOUT,
        busy_wait: Duration::ZERO,
    }
}

/// Timing flags into `spec`.
pub(crate) fn apply_timing(spec: &mut TestSpec, t: &TimingArgs) {
    spec.duration_ms = t.time_ms;
    spec.interval_ms = t.interval_ms;
    spec.omit_ms = t.omit_ms;
    spec.parallel = t.parallel;
}

/// Socket buffer and pinning flags into `spec` (every test type).
pub(crate) fn apply_buffers(spec: &mut TestSpec, b: &BufferArgs) {
    spec.sndbuf = b.sndbuf.or(b.window);
    spec.rcvbuf = b.rcvbuf.or(b.window);
    spec.remote_sndbuf = b.remote_sndbuf.or(b.window);
    spec.remote_rcvbuf = b.remote_rcvbuf.or(b.window);
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
    let mut spec = engine::registry::defaults(TestKind::TcpStream);
    apply_timing(&mut spec, &a.timing);
    apply_socket(&mut spec, &a.socket);
    spec.send_len = a.len;
    spec.recv_len = a.recv_len.unwrap_or(a.len);
    a.copy.apply(&mut spec);
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
    check(&spec)
}

/// The spec of `tcplab crr`.
pub fn crr_spec(a: &CrrArgs) -> Result<TestSpec> {
    let mut spec = engine::registry::defaults(TestKind::TcpCrr);
    apply_timing(&mut spec, &a.timing);
    apply_socket(&mut spec, &a.socket);
    (spec.request_len, spec.response_len) = a.size;
    check(&spec)
}

/// Validates a spec built elsewhere (sweep points) with the same rules.
pub fn check_spec(spec: &TestSpec) -> Result<()> {
    check(spec).map(|_| ())
}

/// Validates with the same rules as the server, naming the flag at fault.
pub(crate) fn check(spec: &TestSpec) -> Result<TestSpec> {
    let limits = engine::limits::Limits::default();
    let checked = engine::limits::validate(spec, &limits)
        .and_then(|()| engine::limits::check_pin("cpu_local", spec.cpu_local));
    if let Err(r) = checked {
        let flag = r.field.as_deref().map(flag_of).unwrap_or("a setting");
        bail!("invalid {flag}: {}", r.message);
    }
    Ok(spec.clone())
}

/// The command-line flag behind a spec field.
fn flag_of(field: &str) -> &'static str {
    match field {
        "duration_ms" => "-t/--time",
        "bytes_limit" => "-n/--bytes",
        "parallel" => "-P/--parallel",
        "send_len" => "-l/--len",
        "no_checksum" => "--no-checksum",
        "rate_bps" => "-b/--rate",
        "no_offload" => "--no-offload",
        "recv_len" => "--recv-len",
        "request_len" | "response_len" => "-r/--size",
        "burst" => "--burst",
        "mss" => "-M/--mss",
        "congestion" => "-C/--congestion",
        "interval_ms" => "-i/--interval",
        "cpu_local" | "cpu_remote" => "-A/--affinity",
        "busy_poll" => "--busy-poll",
        "omit_ms" => "-O/--omit",
        "sndbuf" | "rcvbuf" | "remote_sndbuf" | "remote_rcvbuf" => "a socket buffer size",
        _ => "a setting",
    }
}

/// The reference of `--link SPEC --link-stack SPEC`: the link's maximum goodput.
pub fn link_reference(l: &crate::args::link::LinkArgs, test: TestKind) -> Result<Option<results::Reference>> {
    let Some(spec) = &l.link else { return Ok(None) };
    let link = crate::cmd::model::link(spec)?;
    let udp = engine::registry::of(test).transport() == engine::registry::Transport::Udp;
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
