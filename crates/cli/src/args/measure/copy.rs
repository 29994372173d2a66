//! `stream`'s copy-avoiding modes and its socket kind (MPTCP), as flags: they become the
//! stream test type's own settings.

use clap::Args;
use results::{ParamValue, TestSpec};

/// How bytes cross the socket in `tcplab stream`, and which kind of socket.
#[derive(Debug, Args, Clone, Default)]
pub struct CopyArgs {
    /// Senders write with MSG_ZEROCOPY (pinned pages instead of a copy). Not iperf3's -Z,
    /// which is sendfile from a file: for that, `tcplab file --send sendfile`. What the kernel
    /// did with each send shows in `tcplab file --send zerocopy`.
    #[arg(short = 'Z', long)]
    pub zerocopy: bool,
    /// Receivers read with MSG_TRUNC: the kernel drops the data instead of copying it (as
    /// iperf3's --skip-rx-copy).
    #[arg(long)]
    pub skip_rx_copy: bool,
    /// Multipath TCP (IPPROTO_MPTCP): the connections may add subflows over other paths (the
    /// server needs `tcplab server --mptcp`); their subflows, announcements and retransmits show
    /// in the result, and a connection that fell back to plain TCP is warned about.
    #[arg(long)]
    pub mptcp: bool,
}

impl CopyArgs {
    /// Sets the chosen modes in `spec` (left out when off, so other specs are unchanged).
    pub fn apply(&self, spec: &mut TestSpec) {
        for (name, on) in
            [("zerocopy", self.zerocopy), ("skip-rx-copy", self.skip_rx_copy), ("mptcp", self.mptcp)]
        {
            if on {
                spec.options.insert(name.into(), ParamValue::Bool(true));
            }
        }
    }
}
