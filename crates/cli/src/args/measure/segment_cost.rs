//! `tcplab segment-cost`: its arguments and its spec. The sizes are the `segment-cost` test
//! type's own setting; `-t` is the time per size (the test runs all sizes in one test).

use anyhow::{bail, Result};
use clap::Args;
use engine::registry::segment_cost::{MAX_SIZE, MAX_SIZES, MIN_SIZE};
use results::{ParamValue, TestKind, TestSpec};

use crate::args::emu::PathArgs;
use crate::args::{ClientArgs, SocketArgs};
use crate::{parse, settings};

/// `tcplab segment-cost`.
#[derive(Debug, Args)]
pub struct SegmentCostArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub path: PathArgs,
    #[command(flatten)]
    pub socket: SocketArgs,
    /// Message sizes: a list `64,1K`, a doubling range `64..65536:x2` or a stepped range
    /// `64..4096:+64` (K, M = powers of 1024; 64 B to 1 MiB each, at most 32 sizes).
    #[arg(long, default_value = "64..65536:x2")]
    pub sizes: String,
    /// Seconds per size.
    #[arg(short = 't', long = "time", value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true, default_value = "1")]
    pub time_ms: u64,
    /// Seconds between interval reports (0 = none).
    #[arg(short = 'i', long = "interval", value_name = "SECS", value_parser = parse::seconds_ms, allow_negative_numbers = true, default_value = "1")]
    pub interval_ms: u64,
}

/// The spec of `tcplab segment-cost`.
pub fn segment_cost_spec(a: &SegmentCostArgs) -> Result<TestSpec> {
    let sizes = parse::size_list(&a.sizes).map_err(|e| anyhow::anyhow!("invalid --sizes: {e}"))?;
    if let Some(bad) = sizes.iter().find(|s| !(u64::from(MIN_SIZE)..=u64::from(MAX_SIZE)).contains(s)) {
        bail!("invalid --sizes: {bad} is outside {MIN_SIZE} B..1M");
    }
    if sizes.len() > MAX_SIZES {
        bail!("invalid --sizes: {} sizes, at most {MAX_SIZES}", sizes.len());
    }
    let mut spec = engine::registry::defaults(TestKind::SegmentCost);
    settings::apply_socket(&mut spec, &a.socket);
    spec.nodelay = true;
    spec.duration_ms = a.time_ms.saturating_mul(sizes.len() as u64);
    let max = engine::limits::Limits::default().max_duration_ms;
    if spec.duration_ms > max {
        let secs = |ms: u64| results::setting::ValueKind::Millis.write(&ParamValue::Int(ms));
        bail!(
            "-t/--time: {} sizes × {} = {}, more than the longest test ({})",
            sizes.len(),
            secs(a.time_ms),
            secs(spec.duration_ms),
            secs(max)
        );
    }
    spec.interval_ms = a.interval_ms;
    // Shown as the transaction's sizes: the largest message and the reply.
    spec.request_len = sizes.iter().copied().max().unwrap_or(64) as u32;
    spec.response_len = engine::registry::segment_cost::REPLY_LEN as u32;
    let list: Vec<String> = sizes.iter().map(u64::to_string).collect();
    spec.options.insert("sizes".into(), ParamValue::Text(list.join(",")));
    if let Err(r) = engine::limits::validate(&spec, &engine::limits::Limits::default()) {
        if r.field.as_deref() == Some("options.sizes") {
            bail!("invalid --sizes: {}", r.message);
        }
    }
    settings::check(&spec)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::args::measure::TestCommand;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        cmd: TestCommand,
    }

    fn spec_of(args: &[&str]) -> Result<TestSpec> {
        let cli = Cli::try_parse_from([&["x", "segment-cost", "127.0.0.1"], args].concat())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        cli.cmd.spec()
    }

    #[test]
    fn sizes_expand_and_time_is_per_size() {
        let s = spec_of(&["--sizes", "64..1K:x2", "-t", "0.5"]).unwrap();
        assert_eq!(s.options.get("sizes"), Some(&ParamValue::Text("64,128,256,512,1024".into())));
        assert_eq!(s.duration_ms, 2500);
        assert!(s.nodelay);
    }

    #[test]
    fn bad_sizes_are_one_clear_error() {
        for bad in ["32..64", "64,64", "abc", "64..2M:x2", "64..8K:+1"] {
            let e = spec_of(&["--sizes", bad]).map(|_| ()).unwrap_err().to_string();
            assert!(e.starts_with("invalid --sizes"), "{bad}: {e}");
            assert!(!e.contains('\n'), "{bad}: {e}");
        }
    }
}
