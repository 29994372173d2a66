//! The files at either end of a transfer: temporary files that remove themselves (also when
//! a stop ends the test early), the sender's source (generated or the client's `src`), and
//! the receiver's sink.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use sha2::{Digest, Sha256};

/// A file this test created; removed when dropped, whatever ended the test.
#[derive(Debug)]
pub struct TempFile {
    path: PathBuf,
}

impl TempFile {
    /// A new unique path in `dir` (created later by the caller, exclusively).
    pub fn in_dir(dir: &Path) -> io::Result<TempFile> {
        let tag: String = netio::random_bytes::<8>()?.iter().map(|b| format!("{b:02x}")).collect();
        Ok(TempFile { path: dir.join(format!("tcplab-file-{}-{tag}", std::process::id())) })
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The sender's source, ready before the start.
#[derive(Debug)]
pub struct Source {
    /// Open for reading.
    pub file: File,
    /// Bytes to send.
    pub size: u64,
    /// SHA-256 of the `size` bytes, hex; `None` when not hashed (`verify` off).
    pub sha256: Option<String>,
    /// Seconds spent generating and hashing.
    pub prepare_s: f64,
    /// The client's file as it was when hashed (modification time, length); `None` for a
    /// generated source, which nothing else writes.
    pub stamp: Option<(Option<std::time::SystemTime>, u64)>,
    /// The generated file, removed when the source is dropped.
    pub _temp: Option<TempFile>,
}

/// Opens the client's `src` (which must still be `size` bytes) or generates `size` bytes in a
/// temporary file, and hashes the source when `hash` is set.
pub fn source(src: Option<&str>, size: u64, chunk: usize, hash: bool) -> io::Result<Source> {
    let t0 = Instant::now();
    let (file, sha256, temp, stamp) = match src {
        Some(path) => {
            let mut file = File::open(path)?;
            let len = file.metadata()?.len();
            if len != size {
                return Err(io::Error::other(format!(
                    "{path} is {len} bytes now, {size} when the test was set up"
                )));
            }
            let sha = hash.then(|| hash_reader(&mut file, size, chunk)).transpose()?;
            let file = File::open(path)?;
            let stamp = stamp_of(&file)?;
            (file, sha, None, Some(stamp))
        }
        None => {
            let temp = TempFile::in_dir(&std::env::temp_dir())?;
            let mut out = OpenOptions::new().read(true).write(true).create_new(true).open(temp.path())?;
            let sha = generate(&mut out, size, chunk, hash)?;
            (out, sha, Some(temp), None)
        }
    };
    Ok(Source { file, size, sha256, prepare_s: t0.elapsed().as_secs_f64(), stamp, _temp: temp })
}

/// A file's modification time and length now.
fn stamp_of(file: &File) -> io::Result<(Option<std::time::SystemTime>, u64)> {
    let m = file.metadata()?;
    Ok((m.modified().ok(), m.len()))
}

impl Source {
    /// Whether the client's file was written to since it was hashed (its modification time
    /// or length moved): a hash mismatch is then the source's doing, not the transfer's.
    pub fn changed(&self) -> bool {
        self.stamp.is_some_and(|before| stamp_of(&self.file).map_or(true, |now| now != before))
    }
}

/// The generated content's byte at every offset: a xorshift of the 8-byte word's offset, so
/// a misplaced or repeated block changes the hash.
pub fn fill(buf: &mut [u8], offset: u64) {
    for (i, b) in buf.iter_mut().enumerate() {
        let at = offset + i as u64;
        let mut x = (at / 8).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x.to_le_bytes()[(at % 8) as usize];
    }
}

fn generate(out: &mut File, size: u64, chunk: usize, hash: bool) -> io::Result<Option<String>> {
    let mut hasher = hash.then(Sha256::new);
    let mut buf = vec![0u8; chunk.max(4096)];
    let mut done = 0u64;
    while done < size {
        let n = (size - done).min(buf.len() as u64) as usize;
        fill(&mut buf[..n], done);
        if let Some(h) = &mut hasher {
            h.update(&buf[..n]);
        }
        out.write_all(&buf[..n])?;
        done += n as u64;
    }
    Ok(hasher.map(|h| hex(&h.finalize())))
}

fn hash_reader(r: &mut impl Read, size: u64, chunk: usize) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; chunk.max(4096)];
    let mut left = size;
    while left > 0 {
        let want = left.min(buf.len() as u64) as usize;
        let n = r.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the source shrank while it was hashed",
            ));
        }
        hasher.update(&buf[..n]);
        left -= n as u64;
    }
    Ok(hex(&hasher.finalize()))
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_written_to_after_hashing_says_it_changed() {
        let dir = std::env::temp_dir().join(format!("tcplab-src-{}", std::process::id()));
        std::fs::write(&dir, vec![7u8; 8192]).unwrap();
        let path = dir.to_str().unwrap();
        let src = source(Some(path), 8192, 4096, true).unwrap();
        assert!(!src.changed(), "nothing wrote to it");
        // Another writer appends (a length that moved; a rewrite in place moves the
        // modification time, whose tick may be coarser than this test).
        std::fs::write(&dir, vec![9u8; 8193]).unwrap();
        assert!(src.changed());
        let generated = source(None, 4096, 4096, true).unwrap();
        assert!(!generated.changed(), "a generated source has no other writer");
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn generated_content_depends_on_the_offset() {
        let (mut a, mut b) = (vec![0u8; 64], vec![0u8; 64]);
        fill(&mut a, 0);
        fill(&mut b, 64);
        assert_ne!(a, b);
        let mut whole = vec![0u8; 128];
        fill(&mut whole, 0);
        assert_eq!(&whole[64..], &b[..], "content is a function of the offset alone");
    }

    #[test]
    fn a_generated_source_hashes_as_its_bytes_and_is_removed() {
        let s = source(None, 100_000, 4096, true).unwrap_or_else(|e| panic!("{e}"));
        let path = s._temp.as_ref().map(|t| t.path().to_path_buf()).unwrap_or_default();
        let bytes = std::fs::read(&path).unwrap_or_default();
        assert_eq!(bytes.len(), 100_000);
        assert_eq!(s.sha256, Some(hex(&Sha256::digest(&bytes))));
        drop(s);
        assert!(!path.exists(), "the generated source is removed with it");
        let unhashed = source(None, 100_000, 4096, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(unhashed.sha256, None, "verify off: not hashed");
        let path = unhashed._temp.as_ref().map(|t| t.path().to_path_buf()).unwrap_or_default();
        assert_eq!(std::fs::read(&path).unwrap_or_default(), bytes, "the same content");
    }

    #[test]
    fn a_source_that_changed_size_is_refused() {
        let temp = TempFile::in_dir(&std::env::temp_dir()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(temp.path(), b"12345").unwrap_or_else(|e| panic!("{e}"));
        let path = temp.path().to_string_lossy().to_string();
        assert!(source(Some(&path), 6, 4096, true).is_err());
        assert!(source(Some(&path), 6, 4096, false).is_err(), "checked also when not hashed");
        let sha = Some(hex(&Sha256::digest(b"12345")));
        assert!(source(Some(&path), 5, 4096, true).is_ok_and(|s| s.sha256 == sha));
    }
}
