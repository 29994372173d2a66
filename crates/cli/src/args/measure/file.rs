//! `tcplab file`: its arguments and its spec. The size is the spec's byte limit; the modes,
//! the sink and the client's paths are the `file` test type's own settings.

use anyhow::{bail, Context, Result};
use clap::Args;
use engine::registry::file::{RECV_MODES, SEND_MODES, SINKS};
use results::{Direction, ParamValue, TestKind, TestSpec};

use crate::args::emu::PathArgs;
use crate::args::{ClientArgs, SocketArgs};
use crate::{parse, settings};

/// `tcplab file`.
#[derive(Debug, Args)]
pub struct FileArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub path: PathArgs,
    #[command(flatten)]
    pub socket: SocketArgs,
    /// Bytes of generated data to send (K, M, G = powers of 1024; seed 001's file is 11M).
    #[arg(long, value_parser = parse::size_u64, default_value = "11M", conflicts_with = "src")]
    pub size: u64,
    /// Send this file instead of generated data (a file on this host; not with -R).
    #[arg(long, value_name = "PATH", conflicts_with = "reverse")]
    pub src: Option<std::path::PathBuf>,
    /// How the sender moves file bytes into the socket: write (read + write), sendfile,
    /// splice (file → pipe → socket) or zerocopy (MSG_ZEROCOPY, completions counted).
    #[arg(long, default_value = "write", value_parser = clap::builder::PossibleValuesParser::new(SEND_MODES))]
    pub send: String,
    /// How the receiver takes bytes out of the socket: read, or skip-copy (MSG_TRUNC: the
    /// kernel drops the data; only the byte count is checked, and the sink must be null).
    #[arg(long, default_value = "read", value_parser = clap::builder::PossibleValuesParser::new(RECV_MODES))]
    pub recv: String,
    /// Where received bytes go: null (hashed unless --no-verify, then dropped), page-cache
    /// (a temporary file), direct (O_DIRECT, past the page cache) or fsync (page cache,
    /// fdatasync at the end, counted in the time). Temporary files are removed at the end,
    /// also on Ctrl-C.
    #[arg(long, default_value = "null", value_parser = clap::builder::PossibleValuesParser::new(SINKS))]
    pub sink: String,
    /// Directory of the sink file when this host receives (-R); the server always uses its
    /// own temporary directory.
    #[arg(long, value_name = "DIR", requires = "reverse")]
    pub dir: Option<std::path::PathBuf>,
    /// Bytes per send call (K, M = powers of 1024).
    #[arg(short = 'l', long = "len", value_parser = parse::size_u32, default_value = "128K")]
    pub len: u32,
    /// Bytes per receive call (default: -l).
    #[arg(long = "recv-len", value_parser = parse::size_u32)]
    pub recv_len: Option<u32>,
    /// Do not SHA-256 the file at either end; only the byte count is checked. Verification is
    /// on by default (it catches corruption a byte count misses) and costs CPU per byte at both
    /// ends: turn it off to compare CPU with tools that do not verify (iperf3 -Z).
    #[arg(long)]
    pub no_verify: bool,
    /// Server sends, client receives (FTP `get`; without -R it is a `put`).
    #[arg(short = 'R', long)]
    pub reverse: bool,
    /// Give up after this many seconds (a transfer cut short fails verification).
    #[arg(short = 't', long = "time", value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true, default_value = "60")]
    pub time_ms: u64,
    /// Seconds between interval reports (0 = none).
    #[arg(short = 'i', long = "interval", value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true, default_value = "1")]
    pub interval_ms: u64,
}

/// The spec of `tcplab file`.
pub fn file_spec(a: &FileArgs) -> Result<TestSpec> {
    let mut spec = engine::registry::defaults(TestKind::File);
    settings::apply_socket(&mut spec, &a.socket);
    spec.duration_ms = a.time_ms;
    spec.interval_ms = a.interval_ms;
    spec.send_len = a.len;
    spec.recv_len = a.recv_len.unwrap_or(a.len);
    spec.direction = if a.reverse { Direction::Reverse } else { Direction::Forward };
    spec.bytes_limit = Some(a.size);
    if let Some(src) = &a.src {
        let path = std::fs::canonicalize(src).with_context(|| format!("--src {}", src.display()))?;
        let len = std::fs::metadata(&path).with_context(|| format!("--src {}", src.display()))?.len();
        if len == 0 {
            bail!("--src {}: the file is empty", src.display());
        }
        spec.bytes_limit = Some(len);
        set(&mut spec, "src", &path.to_string_lossy());
    }
    if let Some(dir) = &a.dir {
        let path = std::fs::canonicalize(dir).with_context(|| format!("--dir {}", dir.display()))?;
        set(&mut spec, "dir", &path.to_string_lossy());
    }
    set(&mut spec, "send", &a.send);
    set(&mut spec, "recv", &a.recv);
    set(&mut spec, "sink", &a.sink);
    // Left out when on (the default), so verified specs are as before.
    if a.no_verify {
        spec.options.insert("verify".into(), ParamValue::Bool(false));
    }
    check(spec)
}

fn set(spec: &mut TestSpec, name: &str, value: &str) {
    spec.options.insert(name.into(), ParamValue::Text(value.into()));
}

/// The shared checks, with the test type's own settings named by their flags.
fn check(spec: TestSpec) -> Result<TestSpec> {
    if let Err(r) = engine::limits::validate(&spec, &engine::limits::Limits::default()) {
        if let Some(name) = r.field.as_deref().and_then(|f| f.strip_prefix("options.")) {
            bail!("invalid --{name}: {}", r.message);
        }
    }
    settings::check(&spec)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::args::measure::TestCommand;
    use crate::args::{Cli, Command};

    fn spec_of(args: &[&str]) -> Result<TestSpec> {
        let mut argv = vec!["tcplab", "file", "127.0.0.1"];
        argv.extend_from_slice(args);
        let cli = Cli::try_parse_from(argv).map_err(|e| anyhow::anyhow!("{e}"))?;
        let Command::Test(t @ TestCommand::File(_)) = cli.command else { bail!("not a file command") };
        t.spec()
    }

    fn option(spec: &TestSpec, name: &str) -> Option<String> {
        spec.options.get(name).map(|v| v.to_string())
    }

    #[test]
    fn defaults_are_seed_001s_file_written_and_read() {
        let s = spec_of(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.bytes_limit, Some(11 * 1024 * 1024));
        assert_eq!((s.duration_ms, s.parallel, s.direction), (60_000, 1, Direction::Forward));
        assert_eq!(option(&s, "send").as_deref(), Some("write"));
        assert_eq!(option(&s, "sink").as_deref(), Some("null"));
        assert_eq!(option(&s, "verify"), None, "verified unless told");
    }

    #[test]
    fn no_verify_turns_verification_off() {
        let s = spec_of(&["--no-verify", "--send", "sendfile"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.options.get("verify"), Some(&ParamValue::Bool(false)));
        assert!(spec_of(&["--no-verify", "--recv", "skip-copy"]).is_ok());
    }

    #[test]
    fn modes_sizes_and_direction_reach_the_spec() {
        let s = spec_of(&["--size", "3M", "--send", "zerocopy", "--sink", "fsync", "-R", "-l", "64K"])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.bytes_limit, Some(3 << 20));
        assert_eq!((s.direction, s.send_len, s.recv_len), (Direction::Reverse, 65_536, 65_536));
        assert_eq!(option(&s, "send").as_deref(), Some("zerocopy"));
        assert_eq!(option(&s, "sink").as_deref(), Some("fsync"));
    }

    #[test]
    fn bad_values_and_combinations_fail_naming_the_flag() {
        let err = |args: &[&str]| spec_of(args).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err(&["--send", "mmap"]).contains("mmap"));
        assert!(err(&["--recv", "skip-copy", "--sink", "direct"]).starts_with("invalid --sink:"));
        assert!(err(&["--src", "/no/such/file"]).starts_with("--src /no/such/file"));
        assert!(err(&["--src", "/etc/hostname", "-R"]).contains("cannot be used with"));
        assert!(err(&["--dir", "/tmp"]).contains("--reverse"));
        assert!(err(&["--size", "0"]).contains("byte limit"));
    }

    #[test]
    fn a_source_file_sets_the_size() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("f");
        std::fs::write(&path, vec![1u8; 1234]).unwrap_or_else(|e| panic!("{e}"));
        let s = spec_of(&["--src", &path.to_string_lossy()]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.bytes_limit, Some(1234));
        assert!(option(&s, "src").is_some_and(|p| p.ends_with("/f")));
    }
}
