//! Capture files: what each endpoint's device carries, as pcap (`LINKTYPE_RAW`, nanosecond
//! timestamps) — the client file as seen at the client's device, the server file at the
//! server's. Packets dropped by the link appear in the sender's file only. The files can be
//! changed while the pump runs ([`Captures::switch`]): `--trace` captures each test apart.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use wire::pcap;

use super::{Error, Role};

/// Bytes kept of each packet: enough for IP and TCP headers with options.
pub const SNAP_BYTES: usize = 128;

type Slot = Mutex<Option<BufWriter<File>>>;

/// The two capture files, when capturing.
#[derive(Debug, Default)]
pub struct Captures {
    files: [Slot; 2],
    on: AtomicBool,
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
        let c = Captures::default();
        c.switch(Some(base))?;
        Ok(c)
    }

    /// Flushes and closes the files being written, then captures into `base`'s files (made
    /// anew), or nowhere with `None`.
    pub fn switch(&self, base: Option<&Path>) -> Result<(), Error> {
        self.on.store(false, Ordering::Relaxed);
        for role in [Role::Client, Role::Server] {
            let new = base.map(|b| open(&path_for(b, role))).transpose()?;
            if let Ok(mut slot) = self.files[role as usize].lock() {
                if let Some(mut old) = std::mem::replace(&mut *slot, new) {
                    old.flush().map_err(|source| Error::Capture {
                        path: path_for(Path::new("(previous)"), role),
                        source,
                    })?;
                }
            }
        }
        self.on.store(base.is_some(), Ordering::Relaxed);
        Ok(())
    }

    /// Appends one packet seen at `role`'s device at `unix_nanos`.
    pub fn record(&self, role: Role, unix_nanos: u64, packet: &[u8]) {
        if !self.on.load(Ordering::Relaxed) {
            return;
        }
        let kept = packet.get(..packet.len().min(SNAP_BYTES)).unwrap_or_default();
        let header =
            pcap::record_header(unix_nanos, pcap::captured_len(kept.len()), pcap::captured_len(packet.len()));
        if let Ok(mut slot) = self.files[role as usize].lock() {
            if let Some(w) = slot.as_mut() {
                // A full disk must not stop the emulator: later flush reports the error.
                let _ = w.write_all(&header).and_then(|()| w.write_all(kept));
            }
        }
    }

    /// Flushes both files.
    pub fn flush(&self) -> Result<(), std::io::Error> {
        for f in &self.files {
            if let Ok(mut slot) = f.lock() {
                if let Some(w) = slot.as_mut() {
                    w.flush()?;
                }
            }
        }
        Ok(())
    }
}

/// Creates a capture file and writes its header.
fn open(path: &Path) -> Result<BufWriter<File>, Error> {
    let fail = |source| Error::Capture { path: path.to_path_buf(), source };
    let mut w = BufWriter::with_capacity(1 << 20, File::create(path).map_err(fail)?);
    w.write_all(&pcap::file_header(pcap::LINKTYPE_RAW)).map_err(fail)?;
    Ok(w)
}
