//! The `tcplab` binary: parse, dispatch, print errors once, exit 0 / 1 / 2.
#![forbid(unsafe_code)]

mod args;
mod cmd;
mod output;
mod parse;
mod recorder;
mod repeat;
mod settings;
mod sweep_plan;
mod udp_settings;

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use engine::StopFlag;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let stop = StopFlag::new();
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || {
        if flag.is_set() {
            eprintln!("error: interrupted twice; exiting now");
            std::process::exit(2);
        }
        flag.set();
    });
    match dispatch(&cli.command, &stop) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn dispatch(command: &Command, stop: &StopFlag) -> Result<ExitCode> {
    match command {
        Command::Run(a) => cmd::run::run(a, stop),
        Command::Server(a) => cmd::server::run(a, stop),
        Command::Stream(a) => cmd::test::run_with(
            &a.client,
            &a.path,
            settings::stream_spec(a)?,
            settings::link_reference(&a.link, results::TestKind::TcpStream)?,
            stop,
        ),
        Command::Rr(a) => cmd::test::run_with(&a.client, &a.path, settings::rr_spec(a)?, None, stop),
        Command::Crr(a) => cmd::test::run_with(&a.client, &a.path, settings::crr_spec(a)?, None, stop),
        Command::Model(a) => cmd::model::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Sweep(a) => cmd::sweep::run(a, stop),
        Command::History(a) => cmd::history::history(a),
        Command::Show(a) => cmd::history::show(a),
        Command::Export(a) => cmd::history::export(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Udp(a) => cmd::test::run_with(
            &a.client,
            &a.path,
            udp_settings::udp_spec(a)?,
            settings::link_reference(&a.link, results::TestKind::UdpStream)?,
            stop,
        ),
        Command::UdpRr(a) => {
            cmd::test::run_with(&a.client, &a.path, udp_settings::udp_rr_spec(a)?, None, stop)
        }
        Command::Emu(a) => cmd::emu::run(a),
    }
}
