//! What a package installs besides the binary: shell completions and manual pages.

use std::path::PathBuf;

use clap::Args;

/// `tcplab completions SHELL`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `tcplab man [COMMAND] [--dir DIR]`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (`tcplab man stream` is tcplab-stream(1)); none:
    /// tcplab(1), which lists them all.
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
    /// Write every page (tcplab.1, tcplab-stream.1, …) into DIR instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<PathBuf>,
}
