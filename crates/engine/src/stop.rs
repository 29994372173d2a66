//! A shared stop request (Ctrl-C, a vanished peer, the server shutting down).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Cheap to clone; every clone sees the same flag.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// A flag that is not set.
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    /// Requests a stop.
    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether a stop was requested.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
