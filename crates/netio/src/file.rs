//! Files as the end of a transfer: `O_DIRECT` writes past the page cache (with the buffer
//! and offset alignment the file system asks for), and dropping a file's cached pages.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Alignment assumed when the kernel does not say (`statx` without `STATX_DIOALIGN`, before
/// Linux 6.1): a page, which every file system supporting `O_DIRECT` accepts.
const FALLBACK_ALIGN: usize = 4096;

/// Creates `path` (which must not exist) for writing past the page cache. A file system
/// without `O_DIRECT` (tmpfs before Linux 6.6, some FUSE) refuses with `EINVAL`.
pub fn create_direct(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).custom_flags(libc::O_DIRECT).open(path)
}

/// Whether an open or write failed because the file system does not do `O_DIRECT`.
pub fn is_direct_unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::EOPNOTSUPP))
}

/// The alignment `O_DIRECT` needs on `file` for buffer addresses, offsets and lengths: the
/// larger of the memory and offset alignments `statx` reports, or a page.
pub fn direct_alignment(file: &File) -> usize {
    // SAFETY: all-zero is a valid statx buffer.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let empty = c"";
    // SAFETY: `empty` is a NUL-terminated path (AT_EMPTY_PATH: the descriptor itself) and
    // `stx` is a valid buffer for the call.
    let rc = unsafe {
        libc::statx(file.as_raw_fd(), empty.as_ptr(), libc::AT_EMPTY_PATH, libc::STATX_DIOALIGN, &raw mut stx)
    };
    if rc != 0 || stx.stx_mask & libc::STATX_DIOALIGN == 0 {
        return FALLBACK_ALIGN;
    }
    let align = stx.stx_dio_mem_align.max(stx.stx_dio_offset_align) as usize;
    if align.is_power_of_two() {
        align
    } else {
        FALLBACK_ALIGN
    }
}

/// Turns `O_DIRECT` off on `file`, for a tail shorter than the alignment.
pub fn clear_direct(file: &File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl with integer arguments on an open descriptor.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_DIRECT) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Asks the kernel to drop `file`'s cached pages (`POSIX_FADV_DONTNEED`), so the next read
/// comes from the device and a written file does not linger in memory.
pub fn drop_cache(file: &File) -> io::Result<()> {
    // SAFETY: posix_fadvise with integer arguments on an open descriptor.
    match unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) } {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_files_are_refused_on_tmpfs_or_aligned_elsewhere() {
        let dir = std::env::temp_dir();
        let path = dir.join(format!("netio-direct-{}", std::process::id()));
        match create_direct(&path) {
            Ok(f) => {
                let a = direct_alignment(&f);
                assert!(a.is_power_of_two() && a <= 1 << 16, "{a}");
                clear_direct(&f).unwrap_or_else(|e| panic!("{e}"));
                let _ = std::fs::remove_file(&path);
            }
            Err(e) => assert!(is_direct_unsupported(&e), "{e}"),
        }
    }
}
