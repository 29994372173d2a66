//! A progress bar for runs of several tests, on a terminal and in text format only.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps (hidden unless people watch the output).
#[derive(Debug)]
pub struct Progress(ProgressBar);

impl Progress {
    /// A bar of `len` steps, `done` of them already done (a resumed sweep); with an ETA.
    pub fn new(len: u64, done: u64, for_people: bool) -> Progress {
        if !for_people {
            return Progress(ProgressBar::hidden());
        }
        let bar = ProgressBar::new(len);
        let style = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} ETA {eta} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_position(done);
        bar.reset_eta();
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress(bar)
    }

    /// What is under way.
    pub fn message(&self, m: String) {
        self.0.set_message(m);
    }

    /// One step done.
    pub fn inc(&self) {
        self.0.inc(1);
    }

    /// Prints `line` above the bar, or to stderr when the bar is hidden (not a terminal, or
    /// not text): one line per finished step where no bar can be seen.
    pub fn line(&self, line: &str) {
        if self.0.is_hidden() {
            eprintln!("{line}");
        } else {
            self.0.println(line);
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}
