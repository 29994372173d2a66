//! `tcplab server`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use engine::auth::{keys, KeyStore};
use engine::limits::{Policy, ANONYMOUS};
use engine::{Server, ServerConfig, StopFlag};

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
    let store = match &a.ops.keys {
        Some(path) => Some(Arc::new(KeyStore::new(load_keys(path)?))),
        None => None,
    };
    let cfg = ServerConfig {
        bind: a.addr(),
        one_off: a.one_off,
        max_concurrent: a.max_concurrent as usize,
        allow_third_party: a.allow_third_party,
        keys: store.clone(),
        anonymous: anonymous(&a.ops),
        ..ServerConfig::default()
    };
    let server = Server::bind(cfg).with_context(|| format!("listening on {}", a.addr()))?;
    let addr = server.local_addr().context("reading the bound address")?;
    let _pidfile = a.ops.pidfile.as_deref().map(Pidfile::write).transpose()?;
    signals(stop, store.zip(a.ops.keys.clone()))?;
    let families = if addr.is_ipv6() && addr.ip().is_unspecified() { "IPv4 and IPv6; " } else { "" };
    let third = if a.allow_third_party { "; third-party tests allowed" } else { "" };
    let auth = if a.ops.keys.is_some() { "pre-shared keys required" } else { "anonymous clients" };
    eprintln!("tcplab server listening on {addr} ({families}{auth}{third}; Ctrl-C to stop)");
    server.run(stop).context("accepting connections")?;
    Ok(ExitCode::SUCCESS)
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

/// SIGINT and SIGTERM stop the server; SIGHUP re-reads the keys file (a bad file keeps the
/// old keys and logs one error line).
fn signals(stop: &StopFlag, keys: Option<(Arc<KeyStore>, PathBuf)>) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("installing signal handlers")?;
    let stop = stop.clone();
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        for sig in signals.forever() {
            match (sig, &keys) {
                (SIGHUP, Some((store, path))) => reload(store, path),
                (SIGHUP, None) => tracing::warn!("SIGHUP: no --keys file to re-read"),
                _ => stop.set(),
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
