//! The packet source of `--trace`: what crossed the wire, as pcap files beside the segment
//! table. On an emulated path the emulator's pump writes them (it sees every packet at each
//! side's device, exactly); elsewhere an AF_PACKET socket with a port filter does, on `lo`
//! for a loopback test and on every device against a remote server (only this end's).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use ::wire::pcap;
use anyhow::{Context, Result};
use netio::packet_capture::{Capture, Stats};
use results::segment_flow::TraceSource;
use trace::wire::Point;

use crate::emulated::Session;

/// How long the capture thread sleeps between drains of the ring. It sleeps rather than
/// polls: a poll wakes it for every packet the kernel adds (TPACKET_V2), tens of thousands
/// of wake-ups a second on loopback that took CPU from both ends of the test. The ring holds
/// 65,536 frames, so a drain every 5 ms keeps up with 13 million packets a second.
const DRAIN_EVERY: std::time::Duration = std::time::Duration::from_millis(5);

/// Where the test runs, for the choice of packet source.
#[derive(Debug, Clone, Copy)]
pub enum Where<'a> {
    /// Both ends on this host's loopback.
    Loopback,
    /// A server elsewhere: only this end is captured.
    Remote,
    /// An emulated path: the pump captures both sides.
    Path(&'a Session),
    /// The server's end of a client's traced test (`tcplab server --allow-trace`): every
    /// device of this host, at the server's capture point.
    ServerEnd,
}

/// A packet capture under way.
#[derive(Debug)]
pub struct Capturing {
    /// The pcap files and the point each was taken at.
    pub files: Vec<(Point, PathBuf)>,
    name: String,
    run: Run,
}

#[derive(Debug)]
enum Run {
    Pump,
    Socket { stop: Arc<AtomicBool>, thread: Option<JoinHandle<Result<Pumped>>> },
}

/// `BASE.POINT.pcap`.
fn pcap_path(base: &Path, point: Point) -> PathBuf {
    let mut name = base.as_os_str().to_os_string();
    name.push(format!(".{}.pcap", point.name()));
    PathBuf::from(name)
}

/// Starts capturing the test against `port` into `base`'s pcap files.
pub fn start(base: &Path, port: u16, place: Where<'_>) -> Result<Capturing> {
    match place {
        Where::Path(session) => {
            session.capture_to(Some(base)).context("emulator pump capture")?;
            let files = [Point::Client, Point::Server].map(|p| (p, pcap_path(base, p))).to_vec();
            Ok(Capturing { files, name: "emulator pump (each side's device)".into(), run: Run::Pump })
        }
        Where::Loopback => socket(base, port, Some("lo"), Point::Host),
        Where::Remote => socket(base, port, None, Point::Client),
        Where::ServerEnd => socket(base, port, None, Point::Server),
    }
}

fn socket(base: &Path, port: u16, device: Option<&str>, point: Point) -> Result<Capturing> {
    let cap = Capture::open(port, device)?;
    let path = pcap_path(base, point);
    let file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    out.write_all(&pcap::file_header(pcap::LINKTYPE_RAW))?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::Builder::new()
        .name("capture".into())
        .spawn(move || pump(cap, out, &flag))
        .context("starting the capture thread")?;
    let name = format!("AF_PACKET {} tcp port {port}", device.unwrap_or("(every device)"));
    Ok(Capturing { files: vec![(point, path)], name, run: Run::Socket { stop, thread: Some(thread) } })
}

/// Copies packets from the ring into the pcap file until stopped, then drains the ring.
/// What the capture thread hands back: the ring's statistics, the packets written and the
/// thread's CPU time, ns.
type Pumped = (Stats, u64, Option<u64>);

fn pump(mut cap: Capture, mut out: BufWriter<File>, stop: &AtomicBool) -> Result<Pumped> {
    let mut written = 0u64;
    let mut failed: Option<std::io::Error> = None;
    loop {
        let stopping = stop.load(Ordering::Relaxed);
        let n = cap.drain(&mut |p| {
            let kept = u32::try_from(p.data.len()).unwrap_or(u32::MAX);
            let header = pcap::record_header(p.unix_ns, kept, p.original_len);
            if let Err(e) = out.write_all(&header).and_then(|()| out.write_all(p.data)) {
                failed.get_or_insert(e);
            }
            written += 1;
        });
        if stopping && n == 0 {
            break;
        }
        if !stopping {
            std::thread::sleep(DRAIN_EVERY);
        }
    }
    if let Some(e) = failed {
        return Err(e).context("writing the capture");
    }
    out.flush().context("writing the capture")?;
    Ok((cap.stats()?, written, netio::cpu::thread_cpu_ns()))
}

impl Capturing {
    /// Stops and says what the source recorded and lost.
    pub fn finish(mut self, session: Option<&Session>) -> Result<(Vec<(Point, PathBuf)>, TraceSource)> {
        let files = self.files.iter().map(|(_, p)| p.display().to_string()).collect::<Vec<_>>().join(", ");
        let source = match &mut self.run {
            Run::Pump => {
                if let Some(s) = session {
                    s.capture_to(None).context("closing the pump's capture")?;
                }
                TraceSource {
                    name: self.name.clone(),
                    ok: true,
                    events: 0,
                    lost: 0,
                    detail: files,
                    cpu_ns: None,
                }
            }
            Run::Socket { stop, thread } => {
                stop.store(true, Ordering::Relaxed);
                let t = thread.take().context("the capture already ended")?;
                let (stats, written, cpu_ns) =
                    t.join().map_err(|_| anyhow::anyhow!("the capture thread panicked"))??;
                TraceSource {
                    name: self.name.clone(),
                    ok: true,
                    events: written,
                    lost: stats.drops,
                    detail: files,
                    cpu_ns,
                }
            }
        };
        Ok((std::mem::take(&mut self.files), source))
    }
}

impl Drop for Capturing {
    /// A test that ended in an error still stops its capture thread.
    fn drop(&mut self) {
        if let Run::Socket { stop, thread } = &mut self.run {
            stop.store(true, Ordering::Relaxed);
            if let Some(t) = thread.take() {
                let _ = t.join();
            }
        }
    }
}
