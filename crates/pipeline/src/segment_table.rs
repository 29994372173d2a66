//! The wire segment table of a traced test: the pcap files read back, each segment turned
//! into a row (trace::wire) joined with the sending socket's last `tcp:tcp_probe`, written as
//! `NN-<test>.segments.csv` and `.segments.ndjson`. Rows come point by point, in capture
//! order within a point.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use ::wire::pcap;
use anyhow::{bail, Context, Result};
use trace::wire::{join, Point, Probes, WireFlow, WireRow};
use trace::wire_table;

/// What the table holds.
#[derive(Debug, Default)]
pub struct Written {
    /// Rows per capture point, in the order of the files.
    pub rows: Vec<(Point, u64)>,
    /// Records that were not TCP of the test (or not parseable).
    pub skipped: u64,
    /// The CSV and NDJSON files.
    pub files: Vec<PathBuf>,
    /// Every row, kept for the analysis.
    pub all: Vec<WireRow>,
}

/// Writes the tables of `pcaps` (test against `port`) beside `base`; times from `origin_unix_ns`.
pub fn write(
    base: &Path,
    pcaps: &[(Point, PathBuf)],
    port: u16,
    probes: &Probes,
    origin_unix_ns: u64,
) -> Result<Written> {
    let csv_path = base.with_extension("segments.csv");
    let json_path = base.with_extension("segments.ndjson");
    let (mut csv, mut json) = (create(&csv_path)?, create(&json_path)?);
    writeln!(csv, "{}", wire_table::header())?;
    let mut out = Written { files: vec![csv_path, json_path], ..Written::default() };
    for (point, path) in pcaps {
        let mut flow = WireFlow::new(*point, port);
        let mut n = 0u64;
        read_pcap(path, &mut |t, data, len| match ::wire::tcpip::parse(data, len)
            .and_then(|s| flow.push(t, &s))
        {
            Some(mut row) => {
                join(&mut row, probes);
                n += 1;
                out.all.push(row);
                writeln!(csv, "{}", wire_table::csv_row(&row, origin_unix_ns))?;
                writeln!(json, "{}", wire_table::json_row(&row, origin_unix_ns))
            }
            None => {
                out.skipped += 1;
                Ok(())
            }
        })?;
        out.rows.push((*point, n));
    }
    csv.flush()?;
    json.flush()?;
    Ok(out)
}

/// Writes `rows` (another end's, already made) as `BASE.<end>.segments.csv` and
/// `.segments.ndjson`; returns the two files.
pub fn write_rows(base: &Path, end: &str, rows: &[WireRow], origin_unix_ns: u64) -> Result<Vec<PathBuf>> {
    let csv_path = base.with_extension(format!("{end}.segments.csv"));
    let json_path = base.with_extension(format!("{end}.segments.ndjson"));
    let mut csv = create(&csv_path)?;
    let mut json = create(&json_path)?;
    writeln!(csv, "{}", wire_table::header())?;
    for row in rows {
        writeln!(csv, "{}", wire_table::csv_row(row, origin_unix_ns))?;
        writeln!(json, "{}", wire_table::json_row(row, origin_unix_ns))?;
    }
    csv.flush()?;
    json.flush()?;
    Ok(vec![csv_path, json_path])
}

fn create(p: &Path) -> Result<BufWriter<File>> {
    Ok(BufWriter::new(File::create(p).with_context(|| format!("creating {}", p.display()))?))
}

type OnRecord<'a> = dyn FnMut(u64, &[u8], u32) -> std::io::Result<()> + 'a;

/// Calls `f(unix_ns, captured, original_len)` for each record of the pcap file at `path`.
fn read_pcap(path: &Path, f: &mut OnRecord<'_>) -> Result<()> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut head = [0u8; pcap::FILE_HEADER_BYTES];
    r.read_exact(&mut head).with_context(|| format!("{}: no pcap header", path.display()))?;
    let Some(info) = pcap::parse_file_header(&head) else { bail!("{}: not a pcap file", path.display()) };
    if info.linktype != pcap::LINKTYPE_RAW {
        bail!("{}: link type {} (expected raw IP)", path.display(), info.linktype);
    }
    let mut rec = [0u8; pcap::RECORD_HEADER_BYTES];
    let mut data = Vec::new();
    loop {
        match r.read_exact(&mut rec) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        }
        let Some(h) = info.parse_record_header(&rec) else {
            bail!("{}: a bad record header", path.display())
        };
        data.resize(h.captured_len as usize, 0);
        r.read_exact(&mut data).with_context(|| format!("{}: a record cut short", path.display()))?;
        f(h.unix_nanos, &data, h.original_len).with_context(|| "writing the segment table".to_string())?;
    }
}
