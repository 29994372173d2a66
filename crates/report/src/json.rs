//! One JSON document per command, also on failure (an `error` field, partial results kept).

use results::RunRecord;

/// The run as pretty JSON. Non-finite numbers become `null` (serde_json's behaviour).
pub fn document(run: &RunRecord) -> String {
    serde_json::to_string_pretty(run)
        .unwrap_or_else(|e| format!("{{\"error\":{{\"code\":\"json\",\"message\":\"{e}\"}}}}"))
}

/// Several runs as one pretty JSON array.
pub fn runs(runs: &[RunRecord]) -> String {
    serde_json::to_string_pretty(runs)
        .map(|s| s + "\n")
        .unwrap_or_else(|e| format!("{{\"error\":{{\"code\":\"json\",\"message\":\"{e}\"}}}}"))
}
