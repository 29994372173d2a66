//! Plain data of a tcplab run (DESIGN.md §4): what was asked ([`spec`]), what each side
//! measured ([`side`]), what it sums to ([`summary`]) and what could not be trusted
//! ([`warning`]). Everything is serde data with units in field names; no logic lives here
//! beyond trivial accessors, so the store, the reports and the diagnosis can all read it.
#![forbid(unsafe_code)]

pub mod cpu;
pub mod emu;
pub mod host;
pub mod run;
pub mod side;
pub mod spec;
pub mod summary;
pub mod warning;

pub use cpu::{CpuUsage, ProcessCpu};
pub use emu::{EmuDirection, EmuReport, EmuTally};
pub use host::HostInfo;
pub use run::{RunRecord, Status, TestError, TestResult};
pub use side::{
    Interval, LatencySummary, Role, SideMeasurement, SocketReport, StreamInterval, StreamStats,
    TcpInfoSummary,
};
pub use spec::{Direction, TestKind, TestSpec};
pub use summary::{CpuCost, DirectionSummary, RrSummary, Summary};
pub use warning::{Warning, WarningKind};
