//! A test's full result and a run of several tests.

use serde::{Deserialize, Serialize};

use crate::cc::CcStudy;
use crate::diagnosis::{Diagnosis, Reference};
use crate::emu::EmuReport;
use crate::host::HostInfo;
use crate::repeat::Repetition;
use crate::side::SideMeasurement;
use crate::spec::TestSpec;
use crate::summary::Summary;
use crate::sweep::Sweep;
use crate::warning::Warning;

/// How a test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Ran to its end.
    Completed,
    /// Stopped by the user (Ctrl-C); what was measured is kept.
    Interrupted,
    /// Failed; see `error`. What was measured before is kept.
    Failed,
}

/// Why a test failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestError {
    /// Stable code, e.g. `busy`, `connect`, `peer-vanished`, `bad-field`.
    pub code: String,
    /// One line for a person.
    pub message: String,
}

/// One test: its spec, both ends' measurements, the summary, warnings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// Short name for tables, e.g. `stream reverse` or `rr 64/64`.
    pub label: String,
    /// What was asked.
    pub spec: TestSpec,
    /// Server address as `host:port`.
    pub server: String,
    /// Start, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// How it ended.
    pub status: Status,
    /// Why it failed, if it did.
    pub error: Option<TestError>,
    /// Client's measurement.
    pub local: SideMeasurement,
    /// Server's measurement, when it arrived.
    pub remote: Option<SideMeasurement>,
    /// Headline numbers.
    pub summary: Summary,
    /// Doubts about the numbers.
    pub warnings: Vec<Warning>,
    /// What the throughput is compared with (`--link`, or the loopback baseline).
    #[serde(default)]
    pub reference: Option<Reference>,
    /// What limited each direction of a stream test.
    #[serde(default)]
    pub diagnosis: Vec<Diagnosis>,
    /// Repeat-until-confident: every iteration and the estimates. When present, `summary`
    /// holds the means over the iterations and `local`/`remote` are the last iteration's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetition: Option<Repetition>,
    /// The emulated path's counters, when the test ran over one (`--path`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emu: Option<EmuReport>,
    /// The segment flow `--trace` recorded (TCP tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment_flow: Option<crate::SegmentFlow>,
    /// When another server ran the test on request: which, against which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub third_party: Option<crate::ThirdParty>,
}

impl TestResult {
    /// A result of `spec` that has not measured anything yet: completed, no error, empty
    /// measurements and summary. Engines fill it in; tests override the fields they need.
    pub fn new(
        label: impl Into<String>,
        spec: TestSpec,
        server: impl Into<String>,
        started_unix_ms: u64,
    ) -> Self {
        TestResult {
            label: label.into(),
            spec,
            server: server.into(),
            started_unix_ms,
            status: Status::Completed,
            error: None,
            local: SideMeasurement::default(),
            remote: None,
            summary: Summary::default(),
            warnings: Vec::new(),
            repetition: None,
            reference: None,
            diagnosis: Vec::new(),
            emu: None,
            segment_flow: None,
            third_party: None,
        }
    }

    /// The larger share of CPU time a hypervisor took from either end's host during the
    /// test (`/proc/stat` steal), %; 0 where it was not measured.
    pub fn stolen_pct(&self) -> f64 {
        let remote = self.remote.as_ref().and_then(|s| s.cpu.as_ref());
        [self.local.cpu.as_ref(), remote].into_iter().flatten().map(|c| c.steal_pct).fold(0.0, f64::max)
    }

    /// Whether a hypervisor took [`crate::cpu::STOLEN_PCT`] or more of either end's CPU time
    /// during the test: its figures are partly the host's neighbours', not the path's.
    pub fn stolen_from(&self) -> bool {
        self.stolen_pct() >= crate::cpu::STOLEN_PCT
    }

    /// The runs whose figures make this result: each counted repetition, or the result
    /// itself when it did not repeat.
    pub fn counted_runs(&self) -> &[TestResult] {
        match &self.repetition {
            Some(rep) if !rep.runs.is_empty() => rep.runs.as_slice(),
            _ => std::slice::from_ref(self),
        }
    }

    /// Whether a hypervisor stole from any of [`TestResult::counted_runs`]
    /// ([`TestResult::stolen_from`]): the result is then partly the neighbours'.
    pub fn any_run_stolen_from(&self) -> bool {
        self.counted_runs().iter().any(TestResult::stolen_from)
    }
}

/// A run: one command's tests, with both hosts described.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// tcplab version.
    pub tool_version: String,
    /// The command line as typed.
    pub command_line: Vec<String>,
    /// Start, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// The client host.
    pub local_host: HostInfo,
    /// The server host, when reached.
    pub remote_host: Option<HostInfo>,
    /// Tests in order.
    pub tests: Vec<TestResult>,
    /// Why the run as a whole failed, if it did.
    pub error: Option<TestError>,
    /// The archive's id of this run, when it was loaded from or written to the archive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    /// The sweep this run is, if it is one; its points index into `tests`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,
    /// The congestion-control comparison this run is, if it is one; its runs index into `tests`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<CcStudy>,
}

impl RunRecord {
    /// A run of `tool_version` started at `started_unix_ms` on `local_host` that holds nothing
    /// yet: no command line, peer, tests, error, archive id, sweep or comparison.
    pub fn new(tool_version: impl Into<String>, started_unix_ms: u64, local_host: HostInfo) -> Self {
        RunRecord {
            tool_version: tool_version.into(),
            command_line: Vec::new(),
            started_unix_ms,
            local_host,
            remote_host: None,
            tests: Vec::new(),
            error: None,
            id: None,
            sweep: None,
            cc: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_json_without_new_fields_parses() {
        let mut r = RunRecord {
            command_line: vec!["tcplab".into()],
            ..RunRecord::new("0.1.0", 1, HostInfo::default())
        };
        let json = serde_json::to_string(&r).unwrap_or_default();
        assert!(!json.contains("sweep") && !json.contains("\"id\"") && !json.contains("\"cc\""));
        r.id = Some(3);
        let back: RunRecord = serde_json::from_str(&json).unwrap_or(r.clone());
        assert_eq!(back.id, None);
    }
}
