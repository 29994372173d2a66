//! The output format the flags choose, and the pipeline's stdout writer for the commands
//! that do not run tests.

use report::Format;

use crate::args::OutputArgs;

pub use pipeline::output::{emit, now_unix_ms};

/// The format chosen by the flags.
pub fn format_of(o: &OutputArgs) -> Format {
    if o.json {
        Format::Json
    } else if o.json_stream {
        Format::JsonStream
    } else {
        Format::Text
    }
}
