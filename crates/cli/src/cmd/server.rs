//! `tcplab server`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Context, Result};
use engine::auth::{keys, KeyStore};
use engine::limits::{Policy, ANONYMOUS};
use engine::server::iperf3::{Served, ServedSink};
use engine::{Server, ServerConfig, StopFlag};
use store::{RunKind, RunStatus, Store};

use super::daemon::{self, Pidfile};
use crate::args::serve::OpsArgs;
use crate::args::ServerArgs;

/// Serves until SIGINT/SIGTERM (or one test with `-1`); SIGHUP re-reads the keys file.
pub fn run(a: &ServerArgs, stop: &StopFlag) -> Result<ExitCode> {
    if a.ops.daemon {
        return daemon::start(a);
    }
    if let Some(p) = &a.ops.pidfile {
        Pidfile::check(p)?;
    }
    let archive = match &a.db {
        Some(path) => {
            Some(Store::open(path).with_context(|| format!("opening the archive {}", path.display()))?)
        }
        None => None,
    };
    check_iperf3_limits(a)?;
    let store = match &a.ops.keys {
        Some(path) => Some(Arc::new(KeyStore::new(load_keys(path)?))),
        None => None,
    };
    let cfg = ServerConfig {
        bind: a.addr(),
        one_off: a.one_off,
        max_concurrent: a.max_concurrent as usize,
        allow_third_party: a.allow_third_party,
        third_party_key: a
            .third_party_key
            .as_deref()
            .map(|k| crate::settings::client_key(Some(k)).context("--third-party-key"))
            .transpose()?
            .flatten(),
        keys: store.clone(),
        anonymous: anonymous(&a.ops),
        iperf3: a.iperf3_addr(),
        iperf3_served: archive.map(sink),
        end_tracer: a.allow_trace.then(end_tracer),
        mptcp: a.mptcp,
        ..ServerConfig::default()
    };
    let server = Server::bind(cfg).with_context(|| format!("listening on {}", a.addr()))?;
    let addr = server.local_addr().context("reading the bound address")?;
    let _pidfile = a.ops.pidfile.as_deref().map(Pidfile::write).transpose()?;
    signals(stop, store.zip(a.ops.keys.clone()))?;
    let families = if addr.is_ipv6() && addr.ip().is_unspecified() { "IPv4 and IPv6; " } else { "" };
    let third = if a.allow_third_party { "; third-party tests allowed" } else { "" };
    let third =
        if a.allow_trace { format!("{third}; traced by clients that ask") } else { third.to_string() };
    let auth = if a.ops.keys.is_some() { "pre-shared keys required" } else { "anonymous clients" };
    eprintln!("tcplab server listening on {addr} ({families}{auth}{third}; Ctrl-C to stop)");
    if let Some(iperf3) = server.iperf3_addr() {
        eprintln!("tcplab server serving iperf3 clients on {iperf3} (TCP and UDP; anonymous, under the anonymous limits)");
    }
    server.run(stop).context("accepting connections")?;
    Ok(ExitCode::SUCCESS)
}

/// A keyed server serves iperf3 clients (who cannot show a key) only under explicit
/// anonymous limits: name the flags missing.
fn check_iperf3_limits(a: &ServerArgs) -> Result<()> {
    let unset = anonymous(&a.ops).unset_caps();
    if a.ops.keys.is_none() || a.iperf3_addr().is_none() || unset.is_empty() {
        return Ok(());
    }
    let flags: Vec<String> = unset.iter().map(|c| format!("--anon-{c}")).collect();
    Err(anyhow!(
        "--iperf3 with --keys: iperf3 clients cannot show a key, so they are served only under anonymous limits; add {}",
        flags.join(" ")
    ))
}

/// The tracer of `--allow-trace`; without root it says at start why, and tells each client
/// that asks.
fn end_tracer() -> Arc<dyn engine::server::end_trace::EndTracer> {
    if !netio::netns::is_root() {
        let why = "the server is not root (AF_PACKET and tracefs need root)";
        tracing::warn!("--allow-trace: {why}: clients that ask are told this end is not traced");
        return Arc::new(pipeline::server_trace::Refusing(why.into()));
    }
    Arc::new(pipeline::server_trace::ServerTracing::default())
}

/// Reads the keys file; a file others may read is served with a warning.
fn load_keys(path: &Path) -> Result<keys::Keyring> {
    let (ring, warning) = keys::load(path).map_err(|e| anyhow!("--keys: {e}"))?;
    if let Some(w) = warning {
        tracing::warn!("{w}");
    }
    if ring.is_empty() {
        tracing::warn!("{} holds no keys: every client will be refused", path.display());
    }
    Ok(ring)
}

/// The policy of clients without a key, from the `--anon-*` flags.
fn anonymous(o: &OpsArgs) -> Policy {
    Policy {
        class: ANONYMOUS.to_string(),
        max_duration_ms: o.anon_max_duration,
        max_rate_bps: o.anon_max_rate.filter(|&r| r > 0),
        max_parallel: o.anon_max_streams,
        max_concurrent: o.anon_max_concurrent,
        tests_per_minute: o.anon_tests_per_minute,
    }
}

/// SIGINT and SIGTERM stop the server; SIGHUP reopens the --logfile (for logrotate) and
/// re-reads the keys file (a bad file keeps the old keys and logs one error line).
fn signals(stop: &StopFlag, keys: Option<(Arc<KeyStore>, PathBuf)>) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("installing signal handlers")?;
    let stop = stop.clone();
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        for sig in signals.forever() {
            if sig != SIGHUP {
                stop.set();
                continue;
            }
            match crate::logfile::reopen() {
                Ok(true) => tracing::info!("SIGHUP: reopened the log file"),
                Ok(false) => {}
                Err(e) => tracing::error!("SIGHUP: keeping the old log file: {e:#}"),
            }
            match &keys {
                Some((store, path)) => reload(store, path),
                None => tracing::info!("SIGHUP: no --keys file to re-read"),
            }
        }
    })?;
    Ok(())
}

fn reload(store: &KeyStore, path: &Path) {
    match keys::load(path) {
        Ok((ring, warning)) => {
            if let Some(w) = warning {
                tracing::warn!("{w}");
            }
            tracing::info!("SIGHUP: re-read {}: {} keys", path.display(), ring.len());
            store.replace(ring);
        }
        Err(e) => tracing::error!("SIGHUP: keeping the old keys: {e}"),
    }
}

/// Archives each test served to an iperf3 client as a run of its own.
fn sink(store: Store) -> ServedSink {
    let store = Mutex::new(store);
    ServedSink(Arc::new(move |served: Served| {
        let Ok(mut st) = store.lock() else { return };
        if let Err(e) = archive(&mut st, &served) {
            tracing::warn!("iperf3 {}: not archived: {e:#}", served.client);
        }
    }))
}

fn archive(st: &mut Store, served: &Served) -> Result<()> {
    let mut header = pipeline::output::record(Vec::new(), None, None, served.result.started_unix_ms);
    // The run's client is the iperf3 host; this host served it.
    header.remote_host = Some(std::mem::take(&mut header.local_host));
    header.local_host.hostname = served.client.ip().to_string();
    let run = st.begin_run(&header, RunKind::Iperf3Client, &served.result.server)?;
    st.add_test(run, &served.result)?;
    st.finish_run(run, RunStatus::Complete, None, pipeline::output::now_unix_ms())?;
    Ok(())
}
