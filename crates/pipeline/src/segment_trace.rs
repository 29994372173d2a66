//! `--trace DIR`: the segment flow of each TCP test, recorded while it runs. A private tracefs
//! instance (netio) with `tcp:tcp_probe` and `tcp:tcp_retransmit_skb` filtered to the
//! server's port; a thread reads its pipe, turns lines into rows (trace) and writes them to
//! `DIR/NN-<test>.segments.csv` as they come; at the end the summary goes into the result
//! and to `DIR/NN-<test>.flow.json`. Both ends are traced when they run on this host
//! (loopback, `--path`: tracefs sees every namespace); against a remote server, the client's.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use netio::tracefs::Instance;
use results::{SegmentFlow, TestSpec};

/// Per-CPU ring buffer of an instance, KiB (loopback bulk makes ~60,000 events/s).
const BUFFER_KB: u32 = 8192;
/// How long the reader sleeps when the pipe is empty.
const IDLE: Duration = Duration::from_millis(2);
/// The instances' name prefix (`tcplab-<pid>-<n>`).
const PREFIX: &str = "tcplab";

/// Where traces go, and how many tests have been traced.
#[derive(Debug)]
pub struct Tracing {
    dir: PathBuf,
    count: AtomicU32,
}

impl Tracing {
    /// Traces into `dir` (made if missing).
    pub fn new(dir: PathBuf) -> Tracing {
        Tracing { dir, count: AtomicU32::new(0) }
    }

    /// Starts recording the next test, `spec`, against the server's `port`.
    pub fn start(&self, spec: &TestSpec, port: u16) -> Result<Recording> {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("--trace: creating {}", self.dir.display()))?;
        write_columns(&self.dir)?;
        let base = self.dir.join(format!("{n:02}-{}", spec.test.id()));
        let instance = open_instance(n, port).context("--trace: setting up tracefs")?;
        let csv_path = base.with_extension("segments.csv");
        let csv =
            File::create(&csv_path).with_context(|| format!("--trace: creating {}", csv_path.display()))?;
        let stop = Arc::new(AtomicBool::new(false));
        let reader =
            Reader { instance, trace: trace::Trace::new(port), csv: BufWriter::new(csv), stop: stop.clone() };
        let thread = std::thread::Builder::new()
            .name("trace".into())
            .spawn(move || reader.run())
            .context("--trace: starting the reader")?;
        Ok(Recording { stop, thread: Some(thread), base, csv_path })
    }
}

fn open_instance(n: u32, port: u16) -> Result<Instance, netio::tracefs::Error> {
    let mut i = Instance::create(PREFIX, &n.to_string())?;
    i.set("trace_clock", "mono")?;
    i.set("buffer_size_kb", &BUFFER_KB.to_string())?;
    let filter = format!("sport == {port} || dport == {port}");
    for event in trace::EVENTS {
        i.enable(event, &filter)?;
    }
    i.open_pipe()?;
    Ok(i)
}

/// `DIR/columns.txt`: what each column of the segment tables holds.
fn write_columns(dir: &Path) -> Result<()> {
    let mut text = String::from("Columns of NN-<test>.segments.csv (one row per traced event):\n");
    for (name, what) in trace::table::COLUMNS {
        text.push_str(&format!("  {name:<12} {what}\n"));
    }
    let path = dir.join("columns.txt");
    std::fs::write(&path, text).with_context(|| format!("--trace: writing {}", path.display()))
}

/// A test being traced.
#[derive(Debug)]
pub struct Recording {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(trace::Trace, u64)>>>,
    base: PathBuf,
    csv_path: PathBuf,
}

impl Recording {
    /// Stops, drains the pipe, removes the instance and returns the summary (also written as
    /// JSON beside the table).
    pub fn finish(mut self) -> Result<SegmentFlow> {
        let (trace, lost) = self.join()?;
        let mut flow = trace.summary(lost);
        let json_path = self.base.with_extension("flow.json");
        flow.files = vec![self.csv_path.display().to_string(), json_path.display().to_string()];
        let json = serde_json::to_string(&flow).context("--trace: encoding the summary")?;
        std::fs::write(&json_path, json)
            .with_context(|| format!("--trace: writing {}", json_path.display()))?;
        if flow.events == 0 {
            tracing::warn!("--trace: no events on the test's port; {:?}", trace.first_error());
        }
        Ok(flow)
    }

    fn join(&mut self) -> Result<(trace::Trace, u64)> {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread.take().context("--trace: the reader already ended")?;
        thread.join().map_err(|_| anyhow::anyhow!("--trace: the reader panicked"))?
    }
}

impl Drop for Recording {
    /// A test that ended in an error still stops its reader and removes its instance.
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.join();
        }
    }
}

struct Reader {
    instance: Instance,
    trace: trace::Trace,
    csv: BufWriter<File>,
    stop: Arc<AtomicBool>,
}

impl Reader {
    /// Reads until stopped, then turns tracing off and drains what is left.
    fn run(mut self) -> Result<(trace::Trace, u64)> {
        writeln!(self.csv, "{}", trace::table::header())?;
        let mut buf = vec![0u8; 1 << 16];
        let mut partial = String::new();
        let mut stopping = false;
        loop {
            let n = self.instance.read(&mut buf)?;
            if n > 0 {
                self.lines(&buf[..n], &mut partial)?;
                continue;
            }
            if stopping {
                break;
            }
            if self.stop.load(Ordering::Relaxed) {
                self.instance.stop()?;
                stopping = true;
                continue;
            }
            std::thread::sleep(IDLE);
        }
        self.lines(b"\n", &mut partial)?;
        self.csv.flush().context("--trace: writing the segment table")?;
        let lost = self.instance.lost();
        Ok((self.trace, lost))
    }

    /// Feeds the complete lines of `bytes` (after what `partial` held) to the trace.
    fn lines(&mut self, bytes: &[u8], partial: &mut String) -> Result<()> {
        partial.push_str(&String::from_utf8_lossy(bytes));
        let Some(end) = partial.rfind('\n') else { return Ok(()) };
        let rest = partial.split_off(end + 1);
        for line in partial.lines() {
            if let Some(row) = self.trace.line(line) {
                writeln!(self.csv, "{}", trace::table::row(row))
                    .context("--trace: writing the segment table")?;
            }
        }
        *partial = rest;
        Ok(())
    }
}
