//! The five seed studies, one module each: the paper's figures as data, the experiment's
//! stages in quick and full form, the comparisons and the plots.

pub mod atm_loss;
pub mod nic_eval;
pub mod segment_flow;
pub mod slac_stacks;
pub mod tcp_atm;

use crate::Study;

/// Every study, in seed order.
pub const ALL: [&'static dyn Study; 5] = [
    &tcp_atm::TcpAtm,
    &nic_eval::NicEval,
    &atm_loss::AtmLoss,
    &slac_stacks::SlacStacks,
    &segment_flow::SegmentFlow,
];

/// A size in bytes as a case key part (`8K`, `1500`).
pub fn size_key(n: u32) -> String {
    if n >= 1024 && n % 1024 == 0 {
        format!("{}K", n / 1024)
    } else {
        n.to_string()
    }
}
