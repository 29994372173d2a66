//! Plain data of a tcplab run (DESIGN.md §4): what was asked ([`spec`]), what each side
//! measured ([`side`]), what it sums to ([`summary`]) and what could not be trusted
//! ([`warning`]). Everything is serde data with units in field names; no logic lives here
//! beyond trivial accessors, so the store, the reports and the diagnosis can all read it.
#![forbid(unsafe_code)]

pub mod archive;
pub mod cc;
pub mod cpu;
pub mod diagnosis;
pub mod emu;
pub mod extra;
pub mod headline;
pub mod host;
pub mod mesh;
pub mod produces;
pub mod regression;
pub mod repeat;
pub mod run;
pub mod segment_cost;
pub mod segment_flow;
pub mod setting;
pub mod side;
pub mod spec;
pub mod summary;
pub mod sweep;
pub mod udp;
pub mod warning;

pub use archive::{Owner, RunSummary};
pub use cc::CcStudy;
pub use cpu::{CpuUsage, ProcessCpu};
pub use diagnosis::{Cause, Diagnosis, Finding, Reference, ReferenceKind};
pub use emu::{EmuDirection, EmuReport, EmuTally};
pub use extra::{
    AxisScale, Combine, Figure, FigureValue, OwnPlot, OwnTable, PlotAxis, PlotSeries, Sections, Spread,
};
pub use headline::{Better, Headline, Metric};
pub use host::HostInfo;
pub use mesh::{MeshCell, MeshHost, MeshPlan, MeshRole, ThirdParty};
pub use produces::{IntervalLayout, Plot, Produces, SummaryTable};
pub use repeat::{ConfidenceTarget, Estimate, Repetition};
pub use run::{RunRecord, Status, TestError, TestResult};
pub use segment_flow::SegmentFlow;
pub use setting::{Setting, ValueKind};
pub use side::{
    BufferGrant, CpuSeen, Interval, LatencySummary, Placement, Role, SideMeasurement, SocketReport,
    StreamInterval, StreamStats, TcpInfoSummary,
};
pub use spec::{Buffer, BufferSizes, Direction, End, TestKind, TestSpec};
pub use summary::{CpuCost, DirectionSummary, RrSummary, Shape, Summary};
pub use sweep::{Axis, ParamSetting, ParamValue, Sweep, SweepPlan, SweepPoint};
pub use udp::{UdpCounts, UdpSummary};
pub use warning::{Warning, WarningKind};
