//! The archive chosen by `--db` (or the default one), for the commands that read it.

use anyhow::Result;
use store::Store;

use crate::args::StoreArgs;

/// Opens the archive chosen by `a`.
pub fn open_store(a: &StoreArgs) -> Result<Store> {
    pipeline::recorder::open_store(a.db.as_deref())
}

/// Opens the archive chosen by `a` for a command that only reads it: read-only when this
/// process may not write to it.
pub fn open_store_read(a: &StoreArgs) -> Result<Store> {
    pipeline::recorder::open_store_read(a.db.as_deref())
}

pub use pipeline::recorder::this_process;
