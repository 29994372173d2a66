//! Migration 4's data step: a typed headline for every test stored before headlines existed.
//!
//! The mapping below is frozen history — which number each test type written by tcplab up to
//! schema 3 was judged by — not a second registry: test types added later store their
//! headline themselves. Results are read as plain JSON so that no later change to the
//! `results` types can break an old archive's upgrade.

use serde_json::{json, Value};

use crate::db::{args, Sql};
use crate::{sql, Error, Result};

/// The headline metric id and summary shape of a test type as stored up to schema 3.
fn legacy_kind(test: &str) -> Option<(&'static str, &'static str)> {
    match test {
        "tcp-stream" => Some(("goodput_bps", "tcp-bulk")),
        "udp-stream" => Some(("goodput_bps", "udp-bulk")),
        "tcp-rr" | "udp-rr" => Some(("trans_per_s", "transactions")),
        "tcp-crr" => Some(("conn_per_s", "transactions")),
        _ => None,
    }
}

/// The headline value a schema-3 summary implies: goodput summed over TCP and UDP
/// directions, or the transaction rate; `None` for a test that failed without measuring.
fn legacy_value(metric: &str, status: &str, summary: &Value) -> Option<f64> {
    let sum = |key: &str| -> f64 {
        summary[key]
            .as_array()
            .map(|a| a.iter().filter_map(|d| d["receiver_bps"].as_f64()).sum())
            .unwrap_or(0.0)
    };
    let v = match metric {
        "goodput_bps" => sum("directions") + sum("udp"),
        _ => summary["rr"]["trans_per_s"].as_f64()?,
    };
    (status != "failed" || v > 0.0).then_some(v)
}

/// Fills the headline columns and the stored result's `summary.headline` of every test.
pub(crate) fn backfill_headlines(tx: &mut dyn Sql) -> Result<()> {
    let rows =
        tx.query("SELECT id, run_id, test, status, result FROM tests", &[]).map_err(sql("reading tests"))?;
    for row in rows {
        let read = || {
            Ok::<_, crate::db::DbError>((row.i64(0)?, row.i64(1)?, row.text(2)?, row.text(3)?, row.text(4)?))
        };
        let (id, run, test, status, text) = read().map_err(sql("reading tests"))?;
        let Some((metric, shape)) = legacy_kind(&test) else { continue };
        let mut result: Value =
            serde_json::from_str(&text).map_err(|reason| Error::Json { what: "result", run, reason })?;
        let value = legacy_value(metric, &status, &result["summary"]);
        let kebab = metric_name(metric);
        if let Some(summary) = result.get_mut("summary").and_then(Value::as_object_mut) {
            summary.insert("headline".into(), json!({ "metric": kebab, "value": value }));
            summary.insert("shape".into(), json!(shape));
        }
        let (goodput, rate) = split(metric, value);
        tx.execute(
            "UPDATE tests SET headline_metric = ?2, headline_value = ?3, goodput_bps = ?4, trans_per_s = ?5,
                 result = ?6 WHERE id = ?1",
            args![id, metric, value, goodput, rate, result.to_string()],
        )
        .map_err(sql("back-filling headlines"))?;
    }
    Ok(())
}

/// The serde name of a metric id (as `results::Metric` spells it in JSON).
fn metric_name(id: &str) -> &'static str {
    match id {
        "goodput_bps" => "goodput",
        "trans_per_s" => "transaction-rate",
        _ => "connection-rate",
    }
}

/// The legacy columns: goodput, or a rate (transactions and connections alike).
pub(crate) fn split(metric: &str, value: Option<f64>) -> (Option<f64>, Option<f64>) {
    match metric {
        "goodput_bps" => (value, None),
        _ => (None, value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_udp_goodput_comes_from_its_udp_directions() {
        let s = json!({"directions": [], "udp": [{"receiver_bps": 9.5e7}], "rr": null});
        assert_eq!(legacy_value("goodput_bps", "completed", &s), Some(9.5e7));
        let failed = json!({"directions": [], "udp": []});
        assert_eq!(legacy_value("goodput_bps", "failed", &failed), None);
        let rr = json!({"directions": [], "rr": {"trans_per_s": 1200.0}});
        assert_eq!(legacy_value("trans_per_s", "completed", &rr), Some(1200.0));
        assert_eq!(legacy_value("trans_per_s", "failed", &json!({"rr": null})), None);
    }
}
