//! Where `--trace` reads `tcp:tcp_probe` and `tcp:tcp_retransmit_skb` from. First choice:
//! `perf_event_open(2)` rings on every CPU (netio::perf_ring), binary records decoded with
//! the events' own `format` files (trace::raw) — the kernel formats nothing. Where the kernel
//! refuses that, a private tracefs instance's text `trace_pipe`, which costs the reader about
//! a third of a core at loopback rates (BENCHMARKS.md, "`--trace`: cost and capacity").
//! Both filter in the kernel to the test's port and use `CLOCK_MONOTONIC`.

use anyhow::{Context, Result};
use netio::perf_ring::TracepointRings;
use netio::tracefs::Instance;
use trace::line::Event;
use trace::raw::{Format, ProbeLayout, RetransmitLayout};
use trace::segment::Segment;
use trace::Trace;

/// Per-CPU ring buffer of a tracefs instance, KiB (loopback bulk makes ~60,000 events/s).
const BUFFER_KB: u32 = 8192;
/// Pages per CPU of a perf ring (1 MiB with 4 KiB pages: ~7,000 probe records).
const RING_PAGES: usize = 256;
/// Set (to anything) to read tracefs text even where perf rings work: for comparing the
/// two readers (bench/trace.sh) and testing the fallback.
pub const TEXT_ENV: &str = "TCPLAB_TRACE_TEXT";
/// The instances' name prefix (`tcplab-<pid>-<n>`).
const PREFIX: &str = "tcplab";

/// A reader of the probe events.
#[derive(Debug)]
pub enum ProbeSource {
    /// perf rings, one per event.
    Perf(Box<Perf>),
    /// A tracefs instance's text pipe, with the part of a line read so far.
    Text(Instance, String),
}

/// The perf rings of both events and how to decode them.
#[derive(Debug)]
pub struct Perf {
    probe: TracepointRings,
    retransmit: TracepointRings,
    probe_layout: ProbeLayout,
    retransmit_layout: RetransmitLayout,
    undecoded: u64,
}

impl ProbeSource {
    /// Opens the events of test `n` against `port`, perf first.
    pub fn open(n: u32, port: u16) -> Result<ProbeSource> {
        let filter = format!("sport == {port} || dport == {port}");
        let perf = match std::env::var_os(TEXT_ENV) {
            Some(_) => Err(anyhow::anyhow!("{TEXT_ENV} is set")),
            None => Perf::open(&filter),
        };
        match perf {
            Ok(p) => Ok(ProbeSource::Perf(Box::new(p))),
            Err(e) => {
                tracing::debug!("--trace: perf rings unavailable ({e:#}); reading tracefs text");
                let i = open_instance(n, &filter).context("setting up tracefs")?;
                Ok(ProbeSource::Text(i, String::new()))
            }
        }
    }

    /// How the source is named in a summary.
    pub fn name(&self) -> &'static str {
        match self {
            ProbeSource::Perf(_) => "perf_event tcp:tcp_probe + tcp:tcp_retransmit_skb",
            ProbeSource::Text(..) => "tracefs tcp:tcp_probe + tcp:tcp_retransmit_skb",
        }
    }

    /// Reads what is waiting into `trace`, each row it makes to `on_row`; returns how much
    /// was read (0: nothing now).
    pub fn read(
        &mut self,
        trace: &mut Trace,
        on_row: &mut dyn FnMut(&Segment) -> Result<()>,
    ) -> Result<usize> {
        match self {
            ProbeSource::Perf(p) => p.read(trace, on_row),
            ProbeSource::Text(i, partial) => {
                let mut buf = vec![0u8; 1 << 16];
                let n = i.read(&mut buf)?;
                lines(&buf[..n], partial, trace, on_row)?;
                Ok(n)
            }
        }
    }

    /// Stops recording (what is buffered can still be read).
    pub fn stop(&mut self) -> Result<()> {
        match self {
            ProbeSource::Perf(p) => {
                p.probe.enable(false)?;
                p.retransmit.enable(false)?;
            }
            ProbeSource::Text(i, _) => i.stop()?,
        }
        Ok(())
    }

    /// Feeds a last partial line, if any, to `trace`.
    pub fn flush(&mut self, trace: &mut Trace, on_row: &mut dyn FnMut(&Segment) -> Result<()>) -> Result<()> {
        match self {
            ProbeSource::Perf(_) => Ok(()),
            ProbeSource::Text(_, partial) => lines(b"\n", partial, trace, on_row),
        }
    }

    /// Events the kernel lost (and, for perf, records that did not decode).
    pub fn lost(&self) -> u64 {
        match self {
            ProbeSource::Perf(p) => p.probe.lost() + p.retransmit.lost() + p.undecoded,
            ProbeSource::Text(i, _) => i.lost(),
        }
    }
}

impl Perf {
    fn open(filter: &str) -> Result<Perf> {
        let events = netio::tracefs::root()?.join("events/tcp");
        let read = |e: &str, f: &str| {
            std::fs::read_to_string(events.join(e).join(f)).with_context(|| format!("reading tcp/{e}/{f}"))
        };
        let id =
            |e: &str| -> Result<u64> { read(e, "id")?.trim().parse().with_context(|| format!("tcp/{e}/id")) };
        let probe_layout =
            ProbeLayout::of(&Format::parse(&read("tcp_probe", "format")?)).map_err(anyhow::Error::msg)?;
        let retransmit_layout = RetransmitLayout::of(&Format::parse(&read("tcp_retransmit_skb", "format")?))
            .map_err(anyhow::Error::msg)?;
        let probe = TracepointRings::open(id("tcp_probe")?, filter, RING_PAGES).context("perf_event_open")?;
        let retransmit =
            TracepointRings::open(id("tcp_retransmit_skb")?, filter, 8).context("perf_event_open")?;
        probe.enable(true)?;
        retransmit.enable(true)?;
        Ok(Perf { probe, retransmit, probe_layout, retransmit_layout, undecoded: 0 })
    }

    fn read(&mut self, trace: &mut Trace, on_row: &mut dyn FnMut(&Segment) -> Result<()>) -> Result<usize> {
        let mut events = Vec::new();
        let (pl, rl) = (self.probe_layout, self.retransmit_layout);
        let mut undecoded = 0;
        let mut n = self.probe.drain(&mut |t, raw| match pl.decode(t, raw) {
            Some(e) => events.push(e),
            None => undecoded += 1,
        });
        n += self.retransmit.drain(&mut |t, raw| match rl.decode(t, raw) {
            Some(e) => events.push(e),
            None => undecoded += 1,
        });
        self.undecoded += undecoded;
        // The rings are per CPU: put the events of both in time order.
        events.sort_by_key(event_time);
        for e in events {
            if let Some(row) = trace.event(e) {
                on_row(row)?;
            }
        }
        Ok(n)
    }
}

fn event_time(e: &Event) -> u64 {
    match e {
        Event::Probe(p) => p.t_ns,
        Event::Retransmit(r) => r.t_ns,
        Event::Lost(_) => 0,
    }
}

fn open_instance(n: u32, filter: &str) -> Result<Instance, netio::tracefs::Error> {
    let mut i = Instance::create(PREFIX, &n.to_string())?;
    i.set("trace_clock", "mono")?;
    i.set("buffer_size_kb", &BUFFER_KB.to_string())?;
    for event in trace::EVENTS {
        i.enable(event, filter)?;
    }
    i.open_pipe()?;
    Ok(i)
}

/// Feeds the complete lines of `bytes` (after what `partial` held) to the trace.
fn lines(
    bytes: &[u8],
    partial: &mut String,
    trace: &mut Trace,
    on_row: &mut dyn FnMut(&Segment) -> Result<()>,
) -> Result<()> {
    partial.push_str(&String::from_utf8_lossy(bytes));
    let Some(end) = partial.rfind('\n') else { return Ok(()) };
    let rest = partial.split_off(end + 1);
    for line in partial.lines() {
        if let Some(row) = trace.line(line) {
            on_row(row)?;
        }
    }
    *partial = rest;
    Ok(())
}
