//! Shared by the emulator's two-path tests.

use std::io::Read;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Reads `server` for `run`, counting what arrives after `warmup`: the goodput in bit/s.
pub fn goodput_after(server: &mut TcpStream, run: Duration, warmup: Duration) -> f64 {
    server.set_read_timeout(Some(Duration::from_secs(2))).unwrap_or_else(|e| panic!("read timeout: {e}"));
    let (start, mut buf, mut counted) = (Instant::now(), vec![0u8; 64 * 1024], 0u64);
    while start.elapsed() < run {
        let n = server.read(&mut buf).unwrap_or_else(|e| panic!("reading: {e}"));
        if start.elapsed() >= warmup {
            counted += n as u64;
        }
    }
    counted as f64 * 8.0 / (run - warmup).as_secs_f64()
}
