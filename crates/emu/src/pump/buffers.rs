//! Packet buffers a pump thread reuses, so that a super-packet is read straight into the
//! buffer it travels in (no copy out of a scratch buffer) and that buffer is recycled once
//! written, instead of a 64 KB allocation and copy per packet.

/// Packets shorter than this are copied into a buffer of their own size (an ACK must not
/// hold 64 KB while it waits in a long delay line); longer ones keep the buffer read into.
pub const KEEP_BYTES: usize = 4096;
/// Buffers kept for reuse at most.
const POOL: usize = 64;

/// A free list of full-size read buffers.
#[derive(Debug)]
pub struct Buffers {
    size: usize,
    free: Vec<Vec<u8>>,
}

impl Buffers {
    /// A pool of buffers of `size` bytes.
    pub fn new(size: usize) -> Self {
        Buffers { size, free: Vec::new() }
    }

    /// A buffer of `size` bytes (contents unspecified): a recycled one when there is one.
    pub fn take(&mut self) -> Vec<u8> {
        let mut b = self.free.pop().unwrap_or_default();
        // A recycled buffer was truncated to its packet; only the tail is filled again.
        b.resize(self.size, 0);
        b
    }

    /// Returns a buffer for reuse; one too small to read into, or beyond the pool's size, is
    /// freed.
    pub fn give(&mut self, b: Vec<u8>) {
        if b.capacity() >= self.size && self.free.len() < POOL {
            self.free.push(b);
        }
    }

    /// The packet of the first `n` bytes of `b`, which was taken from this pool: `b` itself
    /// when the packet is long, else a copy (and `b` goes back to the pool).
    pub fn packet(&mut self, mut b: Vec<u8>, n: usize) -> Vec<u8> {
        if n >= KEEP_BYTES {
            b.truncate(n);
            return b;
        }
        let copy = b.get(..n).unwrap_or_default().to_vec();
        self.give(b);
        copy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_packets_keep_their_buffer_and_short_ones_are_copied() {
        let mut pool = Buffers::new(65_546);
        let mut b = pool.take();
        assert_eq!(b.len(), 65_546);
        b[..3].copy_from_slice(b"abc");
        let short = pool.packet(b, 3);
        assert_eq!(short, b"abc");
        assert!(short.capacity() < KEEP_BYTES, "an ACK does not hold a 64 KB buffer");
        let b = pool.take();
        let ptr = b.as_ptr();
        let long = pool.packet(b, 60_000);
        assert_eq!((long.len(), long.as_ptr()), (60_000, ptr), "no copy");
        pool.give(long);
        let again = pool.take();
        assert_eq!((again.len(), again.as_ptr()), (65_546, ptr), "recycled, full size again");
        pool.give(vec![0; 10]);
        assert!(pool.free.is_empty(), "a small buffer is not kept");
    }
}
