//! `tcplab study`: one command per seed study.

use clap::Args;

use super::StoreArgs;

/// `tcplab study list` · `tcplab study NAME [HOST] [--quick] [-o report.html] [--resume [ID]]`.
#[derive(Debug, Args)]
pub struct StudyArgs {
    /// `list`, or a study: tcp-atm-2000, nic-eval, atm-loss, slac-stacks, segment-flow.
    pub name: String,
    /// A real server instead of the emulated paths (stages that emulate an impairment or a
    /// slow host are then skipped and named).
    pub host: Option<String>,
    /// Server control port (with HOST only).
    #[arg(short, long, default_value_t = 9180)]
    pub port: u16,
    /// The same shape in at most about 2 minutes instead of the paper's full design.
    #[arg(long)]
    pub quick: bool,
    /// Run the study's sender × receiver matrix (seed 000's Tables 2 and 3) between the real
    /// hosts of this inventory (the format `tcplab mesh` reads; each sender's server needs
    /// --allow-third-party) instead of emulated hosts.
    #[arg(long, value_name = "FILE")]
    pub inventory: Option<std::path::PathBuf>,
    /// Authenticate to the inventory's hosts with the pre-shared key in FILE; TCPLAB_KEY=ID:SECRET
    /// does the same.
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<std::path::PathBuf>,
    /// Seconds per test, overriding the study's (a trimmed run, e.g. in CI): `90`, `90s`, `2m`.
    #[arg(short = 't', long = "time", value_name = "SECS", value_parser = crate::parse::whole_seconds)]
    pub seconds: Option<u64>,
    /// Write the study's HTML report (paper, measured, model, overlays) to FILE.
    #[arg(short = 'o', long = "report", value_name = "FILE")]
    pub report: Option<std::path::PathBuf>,
    /// Continue a run of this study that stopped before its end (Ctrl-C, a kill, a crash):
    /// the cases it finished are read from the archive, the rest run, and the report covers
    /// all. Without RUN-ID, the newest unfinished run of the study. Needs the same --quick,
    /// -t and HOST as the run had. A complete run's RUN-ID: nothing runs; its report and
    /// statuses are made again from the archive.
    #[arg(long, value_name = "RUN-ID", num_args = 0..=1, value_parser = clap::value_parser!(i64).range(1..))]
    pub resume: Option<Option<i64>>,
    /// With --resume: measure again the finished cases a hypervisor stole 10 % or more of
    /// either end's CPU time from (their figures are partly the neighbours'). Each new result
    /// becomes its case's; the first stays in the archive's run. Works on a complete run too.
    #[arg(long, requires = "resume")]
    pub remeasure_stolen: bool,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Refused in one line (a study is resumed, not repeated): `--every`, `--jitter` or
    /// `--rounds` as the test commands spell them, with their value.
    #[arg(long = "every", value_name = "INTERVAL", hide = true)]
    pub every: Option<String>,
    #[arg(long = "jitter", value_name = "DURATION", hide = true)]
    pub jitter: Option<String>,
    #[arg(long = "rounds", value_name = "N", hide = true)]
    pub rounds: Option<String>,
}

impl StudyArgs {
    /// The schedule flag given (`--every`, `--jitter`, `--rounds`), if any: a study refuses it.
    pub fn schedule_flag(&self) -> Option<&'static str> {
        [("--every", &self.every), ("--jitter", &self.jitter), ("--rounds", &self.rounds)]
            .into_iter()
            .find_map(|(flag, v)| v.as_ref().map(|_| flag))
    }
}
