//! `tcplab server`.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use engine::server::iperf3::{Served, ServedSink};
use engine::{Server, ServerConfig, StopFlag};
use store::{RunKind, RunStatus, Store};

use crate::args::ServerArgs;

/// Serves until Ctrl-C (or one test with `-1`).
pub fn run(a: &ServerArgs, stop: &StopFlag) -> Result<ExitCode> {
    let archive = match &a.db {
        Some(path) => {
            Some(Store::open(path).with_context(|| format!("opening the archive {}", path.display()))?)
        }
        None => None,
    };
    let cfg = ServerConfig {
        bind: a.addr(),
        one_off: a.one_off,
        max_concurrent: a.max_concurrent as usize,
        iperf3: a.iperf3_addr(),
        iperf3_served: archive.map(sink),
        ..ServerConfig::default()
    };
    let server = Server::bind(cfg).with_context(|| format!("listening on {}", a.addr()))?;
    let addr = server.local_addr().context("reading the bound address")?;
    let families = if addr.is_ipv6() && addr.ip().is_unspecified() { "IPv4 and IPv6; " } else { "" };
    eprintln!("tcplab server listening on {addr} ({families}Ctrl-C to stop)");
    if let Some(iperf3) = server.iperf3_addr() {
        eprintln!("tcplab server serving iperf3 clients on {iperf3} (TCP and UDP; anonymous)");
    }
    server.run(stop).context("accepting connections")?;
    Ok(ExitCode::SUCCESS)
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
