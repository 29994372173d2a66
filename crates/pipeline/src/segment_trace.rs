//! `--trace DIR`: the segment flow of each TCP test, recorded while it runs, from two
//! sources. Packets (segment_capture): pcap files per capture point, read back at the end
//! into the wire segment table `DIR/NN-<test>.segments.{csv,ndjson}` (segment_table). Socket
//! state: a private tracefs instance (netio) with `tcp:tcp_probe` and `tcp:tcp_retransmit_skb`
//! filtered to the server's port; a thread reads its pipe, turns lines into rows (trace) and
//! writes them to `DIR/NN-<test>.probes.csv` as they come, and the wire table is joined
//! with them. At the end the summary goes into the result and to `DIR/NN-<test>.flow.json`.
//! Each source works or says why not; a test fails only when neither works.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use report::live::Printer;
use results::segment_flow::{FlowInterval, TraceSource};
use results::{SegmentFlow, TestSpec};

use crate::emulated::Session;
use crate::segment_capture::{self, Capturing, Where};

/// How long the reader sleeps when the pipe is empty.
const IDLE: Duration = Duration::from_millis(2);

/// Which sources `--trace` runs (`--trace-level`): the lighter levels cost less.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TraceLevel {
    /// Socket state only: `tcp:tcp_probe` and `tcp:tcp_retransmit_skb` (no packet capture,
    /// so no pcap and no wire table).
    Probes,
    /// Packets only: the capture and its wire table, without the sockets' state columns.
    Wire,
    /// Both (the default).
    #[default]
    Both,
}

impl TraceLevel {
    fn probes(self) -> bool {
        self != TraceLevel::Wire
    }

    fn wire(self) -> bool {
        self != TraceLevel::Probes
    }
}

/// Where traces go, how many tests have been traced, and how summaries show live.
#[derive(Debug)]
pub struct Tracing {
    dir: PathBuf,
    count: AtomicU32,
    live: Option<Arc<dyn Printer>>,
    level: TraceLevel,
}

impl Tracing {
    /// Traces into `dir` (made if missing); per-interval summaries go out through `live`
    /// (`None`: kept for the result only).
    pub fn new(dir: PathBuf, live: Option<Arc<dyn Printer>>) -> Tracing {
        Tracing { dir, count: AtomicU32::new(0), live, level: TraceLevel::Both }
    }

    /// The same, running only the sources of `level`.
    pub fn at(self, level: TraceLevel) -> Tracing {
        Tracing { level, ..self }
    }

    /// Starts recording the next test, `spec`, against the server's `port` at `place`.
    pub fn start(&self, spec: &TestSpec, port: u16, place: Where<'_>) -> Result<Recording> {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("--trace: creating {}", self.dir.display()))?;
        write_columns(&self.dir)?;
        let base = self.dir.join(format!("{n:02}-{}", spec.test.id()));
        let started_unix_ns = unix_now_ns();
        let mut failed = Vec::new();
        let live = Live::of(self.live.clone(), spec);
        let probes = match self.level.probes().then(|| start_probes(n, port, &base, live)) {
            Some(Ok(p)) => Some(p),
            Some(Err(e)) => {
                failed.push(unavailable(PROBE_SOURCE, &e));
                None
            }
            None => None,
        };
        let capture = match self.level.wire().then(|| segment_capture::start(&base, port, place)) {
            Some(Ok(c)) => Some(c),
            Some(Err(e)) => {
                failed.push(unavailable("packet capture", &e));
                None
            }
            None => None,
        };
        if probes.is_none() && capture.is_none() {
            let why: Vec<String> = failed.iter().map(|s| format!("{}: {}", s.name, s.detail)).collect();
            anyhow::bail!("--trace: no source works ({})", why.join("; "));
        }
        for f in &failed {
            tracing::warn!("--trace: {} unavailable: {}", f.name, f.detail);
        }
        let mono_to_unix_ns = netio::tracefs::mono_to_unix_ns();
        Ok(Recording { probes, capture, failed, base, port, started_unix_ns, mono_to_unix_ns })
    }
}

/// How the probe source is named in a summary when it could not start.
const PROBE_SOURCE: &str = "tcp:tcp_probe + tcp:tcp_retransmit_skb";

fn unavailable(name: &str, e: &anyhow::Error) -> TraceSource {
    TraceSource { name: name.into(), ok: false, events: 0, lost: 0, detail: format!("{e:#}"), cpu_ns: None }
}

fn unix_now_ns() -> u64 {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The tracefs instance and its reader thread, writing `BASE.probes.csv`.
fn start_probes(n: u32, port: u16, base: &Path, live: Live) -> Result<ProbeReader> {
    if !netio::netns::is_root() {
        anyhow::bail!("not root (tracefs needs root)");
    }
    let source = crate::probe_source::ProbeSource::open(n, port)?;
    let name = source.name();
    let csv_path = base.with_extension("probes.csv");
    let csv = File::create(&csv_path).with_context(|| format!("creating {}", csv_path.display()))?;
    let stop = Arc::new(AtomicBool::new(false));
    let reader = Reader {
        source,
        trace: trace::Trace::new(port),
        csv: BufWriter::new(csv),
        stop: stop.clone(),
        meter: trace::live::IntervalMeter::new(live.interval_ns),
        live,
        intervals: Vec::new(),
    };
    let thread = std::thread::Builder::new()
        .name("trace".into())
        .spawn(move || reader.run())
        .context("starting the reader")?;
    Ok(ProbeReader { stop, thread: Some(thread), csv_path, name })
}

/// `DIR/columns.txt`: what each column of the tables holds.
fn write_columns(dir: &Path) -> Result<()> {
    let mut text = String::from(
        "Columns of NN-<test>.segments.csv and .segments.ndjson (one row per captured segment;\n\
         NN-<test>.server.segments.csv and .ndjson, when a remote server traced its end, hold\n\
         that end's rows, at `server`, in the same columns, timed by the server's clock):\n",
    );
    for (name, what) in trace::wire_table::COLUMNS {
        text.push_str(&format!("  {name:<12} {what}\n"));
    }
    text.push_str(
        "\nColumns of NN-<test>.probes.csv (one row per tcp:tcp_probe or tcp:tcp_retransmit_skb event):\n",
    );
    for (name, what) in trace::table::COLUMNS {
        text.push_str(&format!("  {name:<12} {what}\n"));
    }
    let path = dir.join("columns.txt");
    std::fs::write(&path, text).with_context(|| format!("--trace: writing {}", path.display()))
}

/// A test being traced.
#[derive(Debug)]
pub struct Recording {
    probes: Option<ProbeReader>,
    capture: Option<Capturing>,
    failed: Vec<TraceSource>,
    base: PathBuf,
    port: u16,
    started_unix_ns: u64,
    mono_to_unix_ns: i64,
}

impl Recording {
    /// Stops both sources, writes the wire table and returns the summary (also written as
    /// JSON beside the tables). `session` is the emulated path the test crossed, if any;
    /// `server` the section a server returned with its end of the test (server_trace), whose
    /// rows are written as `BASE.server.segments.{csv,ndjson}` and analysed with these.
    pub fn finish(
        self,
        session: Option<&Session>,
        server: Option<&serde_json::Value>,
    ) -> Result<SegmentFlow> {
        Ok(self.finish_with(session, server)?.0)
    }

    /// Stops both sources and returns the summary and every row of the wire table (the
    /// server's end of a client's test, which sends the rows back).
    pub fn finish_rows(self) -> Result<(SegmentFlow, Vec<trace::wire::WireRow>)> {
        self.finish_with(None, None)
    }

    fn finish_with(
        mut self,
        session: Option<&Session>,
        server: Option<&serde_json::Value>,
    ) -> Result<(SegmentFlow, Vec<trace::wire::WireRow>)> {
        let probed = self.probes.take().map(ProbeReader::finish).transpose()?;
        let captured = self.capture.take().map(|c| c.finish(session)).transpose()?;
        let (mut flow, probe_rows) = match &probed {
            Some(p) => {
                (SegmentFlow { intervals: p.intervals.clone(), ..p.trace.summary(p.lost) }, p.trace.rows())
            }
            None => (SegmentFlow::default(), &[][..]),
        };
        let origin = probed.as_ref().and_then(|p| p.trace.origin_ns()).unwrap_or(0);
        let origin_unix = (i128::from(origin) + i128::from(self.mono_to_unix_ns)).max(0) as u64;
        let index = trace::wire::Probes::new(probe_rows, origin_unix);
        flow.sources = std::mem::take(&mut self.failed);
        if let Some(p) = &probed {
            flow.sources.push(TraceSource {
                name: p.name.into(),
                ok: true,
                events: p.trace.events(),
                lost: p.lost,
                detail: p.csv.display().to_string(),
                cpu_ns: p.cpu_ns,
            });
        }
        let mut all = Vec::new();
        if let Some((pcaps, mut source)) = captured {
            let table =
                crate::segment_table::write(&self.base, &pcaps, self.port, &index, self.started_unix_ns)
                    .context("--trace: writing the segment table")?;
            source.events = source.events.max(table.rows.iter().map(|(_, n)| n).sum());
            flow.files.extend(table.files.iter().map(|p| p.display().to_string()));
            flow.files.extend(pcaps.iter().map(|(_, p)| p.display().to_string()));
            flow.sources.push(source);
            all = table.all;
        }
        if let Some(v) = server {
            self.add_server_end(&mut flow, &mut all, v)?;
        }
        if !all.is_empty() {
            add_wire_findings(&mut flow, &all);
            if let Some(svg) = add_time_sequences(&mut flow, &all, &self.base, self.started_unix_ns)? {
                flow.files.push(svg.display().to_string());
            }
        }
        if let Some(p) = &probed {
            flow.files.push(p.csv.display().to_string());
        }
        let json_path = self.base.with_extension("flow.json");
        flow.files.push(json_path.display().to_string());
        flow.source =
            flow.sources.iter().filter(|s| s.ok).map(|s| s.name.as_str()).collect::<Vec<_>>().join(" + ");
        let json = serde_json::to_string(&flow).context("--trace: encoding the summary")?;
        std::fs::write(&json_path, json)
            .with_context(|| format!("--trace: writing {}", json_path.display()))?;
        Ok((flow, all))
    }

    /// The server's rows: written beside this end's, added to `all`, named among the
    /// sources; a server that did not trace its end is named with its reason, in one line.
    fn add_server_end(
        &self,
        flow: &mut SegmentFlow,
        all: &mut Vec<trace::wire::WireRow>,
        section: &serde_json::Value,
    ) -> Result<()> {
        match crate::server_trace::read(section) {
            Ok((rows, source)) => {
                let files =
                    crate::segment_table::write_rows(&self.base, "server", &rows, self.started_unix_ns)
                        .context("--trace: writing the server's segment table")?;
                flow.files.extend(files.iter().map(|p| p.display().to_string()));
                flow.sources.push(source);
                all.extend(rows);
            }
            Err(why) => {
                tracing::warn!("--trace: {why}");
                flow.sources.push(TraceSource {
                    name: "server end".into(),
                    ok: false,
                    detail: why,
                    ..TraceSource::default()
                });
            }
        }
        Ok(())
    }
}

/// Adds what the wire table says to each direction (one made for it when the probes did
/// not see that direction), its evidence lines first.
fn add_wire_findings(flow: &mut SegmentFlow, rows: &[trace::wire::WireRow]) {
    for dir in [trace::Dir::Up, trace::Dir::Down] {
        let Some(w) = trace::wire_analysis::findings(rows, dir) else { continue };
        let at = match flow.directions.iter().position(|d| d.direction == w.direction) {
            Some(i) => i,
            None => {
                let d = results::segment_flow::FlowDirection {
                    direction: w.direction.clone(),
                    ..Default::default()
                };
                flow.directions.push(d);
                flow.directions.len() - 1
            }
        };
        let d = &mut flow.directions[at];
        d.evidence.extend(trace::wire_analysis::evidence(&w));
        d.wire = Some(w);
        d.wire_connections = trace::wire_analysis::per_connection(rows, dir);
    }
}

/// Adds each direction's time-sequence graph and writes them as `BASE.tseq.svg`; returns
/// that file when a direction carried data.
fn add_time_sequences(
    flow: &mut SegmentFlow,
    rows: &[trace::wire::WireRow],
    base: &Path,
    origin_unix_ns: u64,
) -> Result<Option<PathBuf>> {
    for d in &mut flow.directions {
        let dir = if d.direction == trace::Dir::Up.name() { trace::Dir::Up } else { trace::Dir::Down };
        d.time_sequence = trace::time_seq::build(rows, dir, origin_unix_ns);
    }
    let graphs: Vec<_> = flow.directions.iter().filter_map(|d| d.time_sequence.as_ref()).collect();
    if graphs.is_empty() {
        return Ok(None);
    }
    let label = base.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let path = base.with_extension("tseq.svg");
    std::fs::write(&path, report::plot::tseq::standalone(&label, &graphs))
        .with_context(|| format!("--trace: writing {}", path.display()))?;
    Ok(Some(path))
}

/// The tracefs reader under way.
#[derive(Debug)]
struct ProbeReader {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<Drained>>>,
    csv_path: PathBuf,
    name: &'static str,
}

/// What the probes gave: the trace, its lost events, its table, its interval summaries and
/// the source's name.
struct Probed {
    trace: trace::Trace,
    lost: u64,
    cpu_ns: Option<u64>,
    csv: PathBuf,
    intervals: Vec<FlowInterval>,
    name: &'static str,
}

/// What the reader hands back: the trace, its lost events, the interval summaries and the
/// reader thread's CPU time, ns.
type Drained = (trace::Trace, u64, Vec<FlowInterval>, Option<u64>);

impl ProbeReader {
    /// Stops, drains the pipe, removes the instance: the trace, its lost events, its table,
    /// its interval summaries.
    fn finish(mut self) -> Result<Probed> {
        let (trace, lost, intervals, cpu_ns) = self.join()?;
        if trace.events() == 0 {
            tracing::warn!("--trace: no probe events on the test's port; {:?}", trace.first_error());
        }
        Ok(Probed { trace, lost, cpu_ns, csv: self.csv_path.clone(), intervals, name: self.name })
    }

    fn join(&mut self) -> Result<Drained> {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread.take().context("--trace: the reader already ended")?;
        thread.join().map_err(|_| anyhow::anyhow!("--trace: the reader panicked"))?
    }
}

impl Drop for ProbeReader {
    /// A test that ended in an error still stops its reader and removes its instance.
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.join();
        }
    }
}

struct Reader {
    source: crate::probe_source::ProbeSource,
    trace: trace::Trace,
    csv: BufWriter<File>,
    stop: Arc<AtomicBool>,
    meter: trace::live::IntervalMeter,
    live: Live,
    intervals: Vec<FlowInterval>,
}

/// How interval summaries show while the test runs.
#[derive(Debug, Clone)]
struct Live {
    interval_ns: u64,
    /// Where they show (`None`: kept for the result only).
    printer: Option<Arc<dyn Printer>>,
    /// Whether the test asked for intervals (`-i`).
    timed: bool,
    label: String,
}

impl Live {
    fn of(printer: Option<Arc<dyn Printer>>, spec: &TestSpec) -> Live {
        let interval_ms = if spec.interval_ms > 0 { spec.interval_ms } else { 1000 };
        let (timed, label) = (spec.interval_ms > 0, spec.test.id().to_string());
        Live { interval_ns: interval_ms * 1_000_000, printer, timed, label }
    }

    fn show(&self, f: &FlowInterval) {
        if let Some(p) = &self.printer {
            crate::output::emit_all(p.segment_flow(&self.label, f, self.timed));
        }
    }
}

impl Reader {
    /// Reads until stopped, then turns tracing off and drains what is left.
    fn run(mut self) -> Result<Drained> {
        writeln!(self.csv, "{}", trace::table::header())?;
        let mut stopping = false;
        loop {
            let (csv, meter, live, intervals) =
                (&mut self.csv, &mut self.meter, &self.live, &mut self.intervals);
            let mut on_row = |row: &trace::segment::Segment| on_row(row, csv, meter, live, intervals);
            if self.source.read(&mut self.trace, &mut on_row)? > 0 {
                continue;
            }
            if stopping {
                self.source.flush(&mut self.trace, &mut on_row)?;
                break;
            }
            if self.stop.load(Ordering::Relaxed) {
                self.source.stop()?;
                stopping = true;
                continue;
            }
            std::thread::sleep(IDLE);
        }
        self.csv.flush().context("--trace: writing the segment table")?;
        let lost = self.source.lost();
        for f in self.meter.close() {
            self.live.show(&f);
            self.intervals.push(f);
        }
        Ok((self.trace, lost, self.intervals, netio::cpu::thread_cpu_ns()))
    }
}

/// One row: into the table, into the live intervals.
fn on_row(
    row: &trace::segment::Segment,
    csv: &mut BufWriter<File>,
    meter: &mut trace::live::IntervalMeter,
    live: &Live,
    intervals: &mut Vec<FlowInterval>,
) -> Result<()> {
    writeln!(csv, "{}", trace::table::row(row)).context("--trace: writing the segment table")?;
    for f in meter.push(row) {
        live.show(&f);
        intervals.push(f);
    }
    Ok(())
}
