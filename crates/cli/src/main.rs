//! The `tcplab` binary: parse, hand over, print errors once, exit 0 / 1 / 2.
#![forbid(unsafe_code)]

mod args;
mod cmd;
mod inventory;
mod logfile;
mod output;
mod parse;
mod recorder;
mod settings;
mod sweep_plan;
mod udp_settings;

use std::process::ExitCode;

use anyhow::Result;
use engine::StopFlag;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = match Cli::parse_args() {
        Ok(cli) => cli,
        Err(e) => usage_error(e),
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| default_log(&cli.command).into());
    // A server's log is one line per event whatever peers send (escaped, no colours), to
    // --logfile (reopened on SIGHUP) or stderr.
    match &cli.command {
        Command::Server(a) if !a.ops.daemon => match logfile::Log::open(a.ops.logfile.clone()) {
            Ok(log) => {
                tracing_subscriber::fmt().with_writer(log).with_ansi(false).with_env_filter(filter).init()
            }
            Err(e) => {
                eprintln!("error: {e:#}");
                return ExitCode::from(2);
            }
        },
        _ => tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(output::colour_on_stderr())
            .with_env_filter(filter)
            .init(),
    }
    let stop = StopFlag::new();
    // The server handles its own signals (SIGHUP re-reads its keys instead of stopping it);
    // `emu` passes them on to its client-side command.
    if !matches!(cli.command, Command::Server(_) | Command::Emu(_)) {
        pipeline::signals::install(&stop);
    }
    match dispatch(&cli.command, &stop) {
        Ok(code) => code,
        Err(e) => {
            let message = output::error_message(&e, cli.has_flag("no-store"));
            if let Some(format) = output::failure_format(&cli.command) {
                pipeline::output::emit_failure(format, "error", &message);
            }
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// The log level without RUST_LOG: warnings, and on a server one line per test (accepted,
/// refused, failed, finished, with the peer), as iperf3 says "Accepted connection from".
fn default_log(command: &Command) -> &'static str {
    match command {
        Command::Server(_) => "warn,engine::server=info,tcplab::cmd::server=info",
        _ => "warn",
    }
}

/// A command line clap refused: with `--json` (or `-J`), `--json-stream` or `--iperf3-json`
/// also the error the chosen format promises on stdout, then clap's own message and exit status.
fn usage_error(mut e: clap::Error) -> ! {
    if let Some(tip) = renamed_flag_tip(&e) {
        e.insert(
            clap::error::ContextKind::Suggested,
            clap::error::ContextValue::StyledStrs(vec![tip.into()]),
        );
    }
    if e.use_stderr() {
        let message = e.render().to_string();
        let first = message.lines().next().unwrap_or("invalid command line").trim_start_matches("error: ");
        let flag = |names: &[&str]| std::env::args().any(|a| names.contains(&a.as_str()));
        let format = if flag(&["--json", "-J"]) {
            Some(report::Format::Json)
        } else if flag(&["--json-stream"]) {
            Some(report::Format::JsonStream)
        } else if flag(&["--iperf3-json"]) {
            Some(report::Format::Iperf3Json)
        } else {
            None
        };
        if let Some(format) = format {
            pipeline::output::emit_failure(format, "usage", first);
        }
    }
    e.exit()
}

/// A tip for a command line written before a flag changed meaning: `compare-cc --rounds N`
/// interleaved N runs of each control until the schedule flags came; that is `--repeat N` now.
fn renamed_flag_tip(e: &clap::Error) -> Option<&'static str> {
    let args: Vec<String> = std::env::args().collect();
    let has = |flag: &str| args.iter().any(|a| a == flag || a.starts_with(&format!("{flag}=")));
    (e.kind() == clap::error::ErrorKind::MissingRequiredArgument
        && args.iter().any(|a| a == "compare-cc")
        && has("--rounds")
        && !has("--every"))
    .then_some(
        "compare-cc runs each control N times, interleaved, with `--repeat N`; `--rounds N` counts scheduled rounds and needs `--every`",
    )
}

fn dispatch(command: &Command, stop: &StopFlag) -> Result<ExitCode> {
    match command {
        Command::Run(a) => cmd::run::run(a, stop),
        Command::Server(a) => cmd::server::run(a, stop),
        Command::Keygen(a) => cmd::keygen::run(a),
        Command::Test(t) => cmd::test::run(t, stop),
        Command::Model(a) => cmd::model::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Sweep(a) => cmd::sweep::run(a, stop),
        Command::Mesh(a) => cmd::mesh::run(a, stop),
        Command::History(a) => cmd::history::history(a),
        Command::Show(a) => cmd::history::show(a),
        Command::Export(a) => cmd::history::export(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Archive(a) => cmd::fleet::run(a),
        Command::Dashboard(a) => cmd::dashboard::run(a, stop),
        Command::Emu(a) => cmd::emu::run(a),
        Command::CompareCc(a) => cmd::compare_cc::run(a, stop),
        Command::Study(a) => cmd::study::run(a, stop),
        Command::Completions(a) => cmd::install::completions(a),
        Command::Man(a) => cmd::install::man(a),
    }
}
