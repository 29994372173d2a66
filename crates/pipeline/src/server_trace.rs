//! The server's end of `--trace`. On the server (`tcplab server --allow-trace`): a test a
//! client asks to trace is recorded at this host's devices by the same sources the client
//! uses (segment_trace, capture point `server`), in a private directory removed afterwards,
//! and its wire table goes back in the server's measurement as compact rows under a hard
//! cap ([`MAX_ROWS`]; rows beyond it are dropped and counted). On the client: that section
//! read back and checked (it is a peer's data), its rows written as
//! `NN-<test>.server.segments.{csv,ndjson}` and analysed with the client's own.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use engine::server::end_trace::{self, EndTrace, EndTracer};
use results::segment_flow::TraceSource;
use results::TestSpec;
use serde::{Deserialize, Serialize};
use trace::wire::{Point, ProbeState, WireRow};
use trace::Dir;

use crate::segment_capture::Where;
use crate::segment_trace::{Recording, Tracing};

/// Rows a server returns at most: about 6 MB of JSON, well inside a results frame.
pub const MAX_ROWS: usize = 65_536;
/// Sources a server may name.
const MAX_SOURCES: usize = 8;
/// The longest text a server may send in one field.
const MAX_TEXT: usize = 500;

/// One row as it travels: time (ns since 1970, the server's clock), direction (0 up, 1
/// down), connection, seq, len, ack, wnd, peer_wnd, outstanding, flags, retransmission (0/1),
/// gso_size, cwnd, srtt_us, snd_wnd; `null` where the row has no value.
type Compact = [Option<u64>; 15];

/// The section a server returns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// Why this end was not traced; the rest is empty then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off: Option<String>,
    /// The rows, at most [`MAX_ROWS`], in capture order.
    #[serde(default)]
    pub rows: Vec<Compact>,
    /// Rows the table had before the cap.
    #[serde(default)]
    pub total_rows: u64,
    /// The server's sources and what each recorded and lost.
    #[serde(default)]
    pub sources: Vec<TraceSource>,
    /// Indices into `rows` of the segments out of order (kept apart from the rows so that
    /// a row's shape, and clients reading it, stay as they were).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub out_of_order: Vec<u32>,
}

fn encode(r: &WireRow) -> Compact {
    let p = r.probe;
    [
        Some(r.unix_ns),
        Some(u64::from(r.dir == Dir::Down)),
        Some(u64::from(r.conn)),
        Some(u64::from(r.seq)),
        Some(u64::from(r.len)),
        r.ack.map(u64::from),
        Some(u64::from(r.wnd)),
        r.peer_wnd.map(u64::from),
        r.outstanding.map(u64::from),
        Some(u64::from(r.flags)),
        Some(u64::from(r.retransmission)),
        r.gso_size.map(u64::from),
        p.map(|p| u64::from(p.cwnd)),
        p.map(|p| u64::from(p.srtt_us)),
        p.map(|p| u64::from(p.snd_wnd)),
    ]
}

/// A row back, at the server's capture point; `None` when a value is missing or out of range.
fn decode(c: &Compact) -> Option<WireRow> {
    let n32 = |v: Option<u64>| v.and_then(|v| u32::try_from(v).ok());
    let opt32 = |v: Option<u64>| v.map(|v| u32::try_from(v).ok()).map_or(Some(None), |v| v.map(Some));
    let probe = match (n32(c[12]), n32(c[13]), n32(c[14])) {
        (Some(cwnd), Some(srtt_us), Some(snd_wnd)) => Some(ProbeState { cwnd, srtt_us, snd_wnd }),
        _ => None,
    };
    Some(WireRow {
        unix_ns: c[0]?,
        at: Point::Server,
        dir: match c[1]? {
            0 => Dir::Up,
            1 => Dir::Down,
            _ => return None,
        },
        conn: u16::try_from(c[2]?).ok()?,
        seq: n32(c[3])?,
        len: n32(c[4])?,
        ack: opt32(c[5])?,
        wnd: n32(c[6])?,
        peer_wnd: opt32(c[7])?,
        outstanding: opt32(c[8])?,
        flags: u8::try_from(c[9]?).ok()?,
        retransmission: match c[10]? {
            0 => false,
            1 => true,
            _ => return None,
        },
        out_of_order: false,
        gso_size: opt32(c[11])?,
        probe,
    })
}

/// The section of a finished recording: its rows (capped) and sources.
pub fn section(rows: &[WireRow], sources: Vec<TraceSource>) -> Section {
    let kept = &rows[..rows.len().min(MAX_ROWS)];
    Section {
        off: None,
        rows: kept.iter().map(encode).collect(),
        total_rows: rows.len() as u64,
        sources,
        out_of_order: (0..kept.len() as u32).filter(|&i| kept[i as usize].out_of_order).collect(),
    }
}

/// What the client makes of a server's section: its rows (at `server`) and how the server's
/// end is named among the sources; `Err`: one line on why there are none.
pub fn read(v: &serde_json::Value) -> Result<(Vec<WireRow>, TraceSource), String> {
    let s: Section =
        serde_json::from_value(v.clone()).map_err(|e| format!("the server's trace section: {e}"))?;
    let text_ok = |t: &str| t.len() <= MAX_TEXT;
    if let Some(off) = s.off {
        let off: String = off.chars().take(MAX_TEXT).collect();
        return Err(format!("the server did not trace its end: {off}"));
    }
    if s.rows.len() > MAX_ROWS || (s.rows.len() as u64) > s.total_rows || s.sources.len() > MAX_SOURCES {
        return Err(format!(
            "the server's trace section is malformed ({} rows of {})",
            s.rows.len(),
            s.total_rows
        ));
    }
    if s.sources.iter().any(|x| !text_ok(&x.name) || !text_ok(&x.detail)) {
        return Err("the server's trace section names a source at too great a length".into());
    }
    let rows: Option<Vec<WireRow>> = s.rows.iter().map(decode).collect();
    let mut rows = rows.ok_or("the server's trace section holds a row out of range")?;
    for &i in &s.out_of_order {
        let row =
            rows.get_mut(i as usize).ok_or("the server's trace section names a row it does not hold")?;
        row.out_of_order = true;
    }
    let kept = rows.len() as u64;
    let truncated = if kept < s.total_rows {
        format!("; truncated at {kept} of {} rows", s.total_rows)
    } else {
        String::new()
    };
    let names: Vec<String> = s.sources.iter().filter(|x| x.ok).map(|x| x.name.clone()).collect();
    let source = TraceSource {
        name: "server end".into(),
        ok: true,
        events: kept,
        lost: s.sources.iter().map(|x| x.lost).sum(),
        detail: format!("{}{truncated}", names.join(" + ")),
        cpu_ns: s.sources.iter().filter_map(|x| x.cpu_ns).reduce(u64::saturating_add),
    };
    Ok((rows, source))
}

/// `tcplab server --allow-trace`: records each traced test in a directory of its own under
/// the system's temporary directory, removed once the rows are sent.
#[derive(Debug)]
pub struct ServerTracing {
    root: PathBuf,
    count: AtomicU32,
}

impl Default for ServerTracing {
    fn default() -> Self {
        ServerTracing {
            root: std::env::temp_dir().join(format!("tcplab-server-trace-{}", std::process::id())),
            count: AtomicU32::new(0),
        }
    }
}

impl EndTracer for ServerTracing {
    fn start(&self, spec: &TestSpec, port: u16) -> Result<Box<dyn EndTrace>, String> {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        let dir = self.root.join(n.to_string());
        let rec =
            Tracing::new(dir.clone(), None).start(spec, port, Where::ServerEnd).map_err(|e| format!("{e:#}"));
        match rec {
            Ok(rec) => Ok(Box::new(ServerRecording { rec, dir })),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }
}

/// A server that was asked to trace but cannot (not root): says why to every client.
#[derive(Debug)]
pub struct Refusing(pub String);

impl EndTracer for Refusing {
    fn start(&self, _spec: &TestSpec, _port: u16) -> Result<Box<dyn EndTrace>, String> {
        Err(self.0.clone())
    }
}

/// One test being recorded at the server.
struct ServerRecording {
    rec: Recording,
    dir: PathBuf,
}

impl EndTrace for ServerRecording {
    fn finish(self: Box<Self>) -> serde_json::Value {
        let section = match self.rec.finish_rows() {
            Ok((flow, rows)) => section(&rows, flow.sources),
            Err(e) => Section { off: Some(format!("{e:#}")), ..Section::default() },
        };
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some(root) = self.dir.parent() {
            let _ = std::fs::remove_dir(root); // only when no other test is being recorded
        }
        serde_json::to_value(&section).unwrap_or_else(|e| end_trace::refused(&e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: u32) -> WireRow {
        WireRow {
            unix_ns: 1_000_000 + u64::from(i),
            at: Point::Host,
            dir: if i % 2 == 0 { Dir::Up } else { Dir::Down },
            conn: 40000,
            seq: i * 1448,
            len: 1448,
            ack: (i > 0).then_some(1),
            wnd: 65535,
            peer_wnd: None,
            outstanding: Some(2896),
            flags: 0x10,
            retransmission: i == 3,
            out_of_order: i == 4,
            gso_size: None,
            probe: (i % 3 == 0).then_some(ProbeState { cwnd: 10, srtt_us: 120, snd_wnd: 65535 }),
        }
    }

    #[test]
    fn rows_travel_whole_and_come_back_at_the_server() {
        let rows: Vec<WireRow> = (0..10).map(row).collect();
        let v = serde_json::to_value(section(&rows, vec![])).unwrap();
        let (back, source) = read(&v).unwrap();
        assert_eq!(back.len(), 10);
        for (a, b) in rows.iter().zip(&back) {
            assert_eq!(WireRow { at: Point::Server, ..*a }, *b);
        }
        assert!(!source.detail.contains("truncated"), "{source:?}");
    }

    #[test]
    fn the_cap_is_counted() {
        let rows: Vec<WireRow> = (0..(MAX_ROWS as u32 + 5)).map(row).collect();
        let s = section(&rows, vec![]);
        assert_eq!((s.rows.len(), s.total_rows), (MAX_ROWS, MAX_ROWS as u64 + 5));
        let (_, source) = read(&serde_json::to_value(s).unwrap()).unwrap();
        assert!(
            source.detail.contains(&format!("truncated at {MAX_ROWS} of {} rows", MAX_ROWS + 5)),
            "{source:?}"
        );
    }

    #[test]
    fn a_hostile_section_is_one_line_not_a_panic() {
        let cases = [
            serde_json::json!({"off": "not root"}),
            serde_json::json!({"rows": [[1, 7, 1, 1, 1, null, 1, null, null, 16, 0, null, null, null, null]], "total_rows": 1}),
            serde_json::json!({"rows": [[1, 0, 70000, 1, 1, null, 1, null, null, 16, 0, null, null, null, null]], "total_rows": 1}),
            serde_json::json!({"rows": [[1, 0, 1, 1, 1, null, 1, null, null, 16, 0, null, null, null, null]], "total_rows": 0}),
            serde_json::json!({"rows": [[-1]], "total_rows": 1}),
            serde_json::json!({"rows": "many"}),
            serde_json::json!(["not", "an", "object"]),
        ];
        for c in cases {
            let e = read(&c).map(|_| ()).unwrap_err();
            assert!(!e.contains('\n') && e.len() < 700, "{c}: {e}");
        }
    }
}
