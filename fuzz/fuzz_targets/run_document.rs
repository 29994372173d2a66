//! Any bytes as a saved `--json` run document (`tcplab report --from FILE`, `--report`): the
//! reader takes one run or an array of runs, or refuses; every accepted document renders in
//! every registered report format without a panic (renderers read peer- and file-supplied
//! numbers: NaN, huge counts, empty intervals).
//! Run: `cargo fuzz run run_document` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;
use results::RunRecord;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let runs = if value.is_array() {
        serde_json::from_value::<Vec<RunRecord>>(value)
    } else {
        serde_json::from_value::<RunRecord>(value).map(|r| vec![r])
    };
    let Ok(runs) = runs else { return };
    for renderer in report::renderers() {
        let _ = renderer.render_runs(&runs);
        if let Some(run) = runs.first() {
            let _ = renderer.render_run(run);
        }
    }
});
