//! One JSON document per command, also on failure (an `error` field, partial results kept).

use results::RunRecord;

/// The run as pretty JSON. Non-finite numbers become `null` (serde_json's behaviour).
pub fn document(run: &RunRecord) -> String {
    // A mesh also carries its matrix (`mesh_matrix`), so that readers need not rebuild it.
    if let Some(m) = crate::mesh::Matrix::of(run) {
        let with = serde_json::to_value(run).map(|mut v| {
            if let Some(o) = v.as_object_mut() {
                o.insert("mesh_matrix".into(), serde_json::to_value(&m).unwrap_or_default());
            }
            v
        });
        if let Ok(v) = with {
            return serde_json::to_string_pretty(&v).unwrap_or_default();
        }
    }
    serde_json::to_string_pretty(run)
        .unwrap_or_else(|e| format!("{{\"error\":{{\"code\":\"json\",\"message\":\"{e}\"}}}}"))
}

/// Several runs as one pretty JSON array.
pub fn runs(runs: &[RunRecord]) -> String {
    serde_json::to_string_pretty(runs)
        .map(|s| s + "\n")
        .unwrap_or_else(|e| format!("{{\"error\":{{\"code\":\"json\",\"message\":\"{e}\"}}}}"))
}
