//! The server's end of `--trace`: a client that traces a test against this server asks for
//! this end too (`trace_server` in its setup). A server started with `--allow-trace` records
//! the test's segments at its own devices through an [`EndTracer`] the CLI provides (the
//! recording code lives above the engine), and returns them as the section
//! [`SECTION`] of its measurement; a server without one answers why not in the same place.

use std::fmt::Debug;

use results::TestSpec;

/// The name of the section in the server's measurement.
pub const SECTION: &str = "server-trace";

/// What the server says when it was not started to trace.
pub const OFF: &str = "this server was not started with --allow-trace";

/// Starts recording a test's segments at this end.
pub trait EndTracer: Send + Sync + Debug {
    /// Starts recording `spec`, whose data connections arrive on the server's `port`; the
    /// error is one line on why this end cannot be traced.
    fn start(&self, spec: &TestSpec, port: u16) -> Result<Box<dyn EndTrace>, String>;
}

/// A recording under way.
pub trait EndTrace: Send {
    /// Stops and returns the section to send back (rows, sources, lost counts).
    fn finish(self: Box<Self>) -> serde_json::Value;
}

/// A section that says why this end was not traced.
pub fn refused(why: &str) -> serde_json::Value {
    serde_json::json!({ "off": why })
}
