//! `tcplab completions` and `tcplab man`: generated from the same command-line definition
//! that parses the arguments, so they never drift from it.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};

use crate::args::install::{CompletionsArgs, ManArgs};
use crate::args::Cli;

/// The binary's name in completions and pages.
const NAME: &str = "tcplab";

/// Prints the completion script for the chosen shell.
pub fn completions(a: &CompletionsArgs) -> Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut Cli::definition(), NAME, &mut script);
    print(&script)
}

/// Prints one manual page (roff), or writes all of them into `--dir`.
pub fn man(a: &ManArgs) -> Result<ExitCode> {
    let mut cli = Cli::definition().disable_help_subcommand(true);
    cli.build();
    if let Some(dir) = &a.dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        clap_mangen::generate_to(cli, dir)
            .with_context(|| format!("writing pages into {}", dir.display()))?;
        eprintln!("wrote the manual pages into {}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let page = match &a.command {
        None => cli,
        Some(name) => match cli.find_subcommand(name) {
            // Once built, a subcommand's display name is `tcplab-NAME`, its page's title.
            Some(sub) => sub.clone(),
            None => bail!("no command `{name}` (`tcplab --help` lists them)"),
        },
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page).render(&mut roff).context("rendering the manual page")?;
    print(&roff)
}

/// Writes `bytes` to stdout; a reader that went away is not an error.
fn print(bytes: &[u8]) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e).context("writing to stdout"),
        _ => Ok(ExitCode::SUCCESS),
    }
}
