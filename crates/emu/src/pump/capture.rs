//! Capture files: what each endpoint's device carries, as pcap (`LINKTYPE_RAW`, nanosecond
//! timestamps) — the client file as seen at the client's device, the server file at the
//! server's. Packets dropped by the link appear in the sender's file only.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use wire::pcap;

use super::{Error, Role};

/// Bytes kept of each packet: enough for IP and TCP headers with options.
pub const SNAP_BYTES: usize = 128;

/// The two capture files.
#[derive(Debug)]
pub struct Captures {
    files: [Mutex<BufWriter<File>>; 2],
}

/// File name of `role`'s capture for the base name `base`: `BASE.client.pcap`.
pub fn path_for(base: &Path, role: Role) -> PathBuf {
    let mut name = base.as_os_str().to_os_string();
    name.push(format!(".{}.pcap", role.name()));
    PathBuf::from(name)
}

impl Captures {
    /// Creates both files and writes their headers.
    pub fn create(base: &Path) -> Result<Captures, Error> {
        let open = |role: Role| -> Result<Mutex<BufWriter<File>>, Error> {
            let path = path_for(base, role);
            let fail = |source| Error::Capture { path: path.clone(), source };
            let mut w = BufWriter::with_capacity(1 << 20, File::create(&path).map_err(fail)?);
            w.write_all(&pcap::file_header(pcap::LINKTYPE_RAW)).map_err(fail)?;
            Ok(Mutex::new(w))
        };
        Ok(Captures { files: [open(Role::Client)?, open(Role::Server)?] })
    }

    /// Appends one packet seen at `role`'s device at `unix_nanos`.
    pub fn record(&self, role: Role, unix_nanos: u64, packet: &[u8]) {
        let kept = packet.get(..packet.len().min(SNAP_BYTES)).unwrap_or_default();
        let header =
            pcap::record_header(unix_nanos, pcap::captured_len(kept.len()), pcap::captured_len(packet.len()));
        if let Ok(mut w) = self.files[role as usize].lock() {
            // A full disk must not stop the emulator: later flush reports the error.
            let _ = w.write_all(&header).and_then(|()| w.write_all(kept));
        }
    }

    /// Flushes both files.
    pub fn flush(&self) -> Result<(), std::io::Error> {
        for f in &self.files {
            if let Ok(mut w) = f.lock() {
                w.flush()?;
            }
        }
        Ok(())
    }
}
