//! `--link SPEC` (and `--stack SPEC`): the link a test runs over, so every throughput is shown
//! as a share of what the link allows. Flatten [`LinkArgs`] into any test command's arguments.

use clap::Args;

/// The link under test.
#[derive(Debug, Args, Clone, Default)]
pub struct LinkArgs {
    /// The link the test crosses, e.g. ethernet:1g or atm:oc3c:mtu=9180: results show "x% of
    /// theoretical" (its maximum goodput for --link-stack).
    #[arg(long, value_name = "SPEC")]
    pub link: Option<String>,
    /// Protocol stack for the theoretical figure [default: ipv4:tcp:ts for TCP tests (Linux
    /// sends timestamps), ipv4:udp for UDP].
    #[arg(long = "link-stack", value_name = "SPEC", requires = "link")]
    pub stack: Option<String>,
}
