//! One duration grammar for every flag: a walk over clap's commands finds each flag that takes
//! a time and checks that it reads `90s`, `1m` and `1500ms` as the grammar says (or refuses
//! them for their range only), and refuses what the grammar does not know.

use std::time::Duration;

use clap::{Arg, Command, CommandFactory};

/// Every subcommand of `cmd` at any depth, with its path (`tcplab fleet run`).
fn commands(cmd: &Command, path: String, out: &mut Vec<(String, Command)>) {
    for sub in cmd.get_subcommands() {
        let p = format!("{path} {}", sub.get_name());
        out.push((p.clone(), sub.clone()));
        commands(sub, p, out);
    }
}

/// What `arg`'s own parser makes of `value`: the value read (a number of ms or seconds, or a
/// `Duration`), or its error line. The parser runs alone, without the flag's relations.
fn parse(arg: &Arg, value: &str) -> Result<String, String> {
    let only =
        Arg::new("v").long("v").allow_negative_numbers(true).value_parser(arg.get_value_parser().clone());
    let m = Command::new("t")
        .arg(only)
        .try_get_matches_from(["t", "--v", value])
        .map_err(|e| e.to_string().lines().next().unwrap_or_default().to_string())?;
    let read = [
        m.try_get_one::<u64>("v").ok().flatten().map(|v| format!("{v}")),
        m.try_get_one::<Duration>("v").ok().flatten().map(|v| format!("{v:?}")),
        m.try_get_one::<f64>("v").ok().flatten().map(|v| format!("{v}")),
    ];
    Ok(read.into_iter().flatten().next().unwrap_or_else(|| "(read)".into()))
}

/// Whether an error refuses a value for its range (or a flag counting whole seconds for its
/// precision), not its spelling.
fn out_of_range(e: &str) -> bool {
    ["range", "at most", "at least", "more than", "too large", "too small", "whole number"]
        .iter()
        .any(|w| e.contains(w))
}

/// Whether a flag's name or value name says it takes a time (a word of it: `--omit`,
/// `--anon-max-duration`, `SECS`).
fn names_a_time(arg: &Arg) -> bool {
    let long = arg.get_long().unwrap_or_default().to_ascii_lowercase();
    let values = arg.get_value_names().map_or(String::new(), |v| v.join("-").to_ascii_lowercase());
    let words =
        ["time", "interval", "omit", "delay", "timeout", "every", "duration", "secs", "period", "rtt", "rto"];
    long.split('-').chain(values.split('-')).any(|w| words.contains(&w))
}

/// Value flags that take a time: named for one, or reading `90s` (as a time or out of its range).
fn time_flags() -> Vec<(String, Command, Arg)> {
    let mut all = Vec::new();
    commands(&super::Cli::command(), "tcplab".into(), &mut all);
    let mut out = Vec::new();
    for (path, cmd) in all {
        for arg in cmd.get_arguments().filter(|a| a.get_action().takes_values() && a.get_long().is_some()) {
            let reads_time =
                parse(arg, "90s").map_or_else(|e| out_of_range(&e), |_| true) && parse(arg, "90q").is_err();
            // Free text (`tcplab model --rtt`) is read by the command with the same parser,
            // after clap, so that its errors stay one line; clap cannot see it.
            let free_text = parse(arg, "x").is_ok();
            if (reads_time || names_a_time(arg)) && !free_text {
                out.push((path.clone(), cmd.clone(), arg.clone()));
            }
        }
    }
    out
}

#[test]
fn every_time_flag_reads_the_one_duration_grammar() {
    let flags = time_flags();
    let mut wrong = Vec::new();
    for (path, _, arg) in &flags {
        let name = format!("{path} --{}", arg.get_long().unwrap_or_default());
        for good in ["90s", "1m", "1500ms", "0.5s"] {
            match parse(arg, good) {
                Err(e) if !out_of_range(&e) => wrong.push(format!("{name} {good}: {e}")),
                _ => {}
            }
        }
        for bad in ["10ss", "1 minute", "5x", "s"] {
            if parse(arg, bad).is_ok() {
                wrong.push(format!("{name} took {bad}"));
            }
        }
    }
    assert!(
        flags.len() >= 20,
        "only {} time flags found: {:?}",
        flags.len(),
        flags.iter().map(|f| f.0.clone()).collect::<Vec<_>>()
    );
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// `1m` is a minute on every time flag that takes it: the same value as `60s`.
#[test]
fn a_minute_is_sixty_seconds_on_every_time_flag() {
    for (path, _, arg) in time_flags() {
        if let (Ok(m), Ok(s)) = (parse(&arg, "1m"), parse(&arg, "60s")) {
            assert_eq!(m, s, "{path} --{}", arg.get_long().unwrap_or_default());
        }
    }
}
