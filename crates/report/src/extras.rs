//! Fields other parts of tcplab add to results over time — a diagnosis of what limited a
//! test, the theoretical limit of an emulated or modelled link, emulator counters — read
//! generically from the result's serde form, so the reports show them as soon as they
//! appear and need no change for each new field.

use results::TestResult;
use serde_json::Value;

/// A theoretical limit found in a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// Where it was found, e.g. `diagnosis.link_limit_bps`.
    pub path: String,
    /// Bit/s.
    pub bps: f64,
}

/// One line of a generic section: a dotted path and its value as text.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Dotted field path below the section, e.g. `limited_by`.
    pub key: String,
    /// Value as text.
    pub value: String,
}

/// Top-level result fields that are shown as generic sections when present.
const SECTIONS: [&str; 4] = ["diagnosis", "limit", "model", "emulator"];

/// Generic sections of a result: (field name, its entries flattened).
pub type Sections = Vec<(String, Vec<Entry>)>;

/// Sections present in a result.
pub fn sections(r: &TestResult) -> Sections {
    let Ok(Value::Object(map)) = serde_json::to_value(r) else { return Vec::new() };
    map.iter()
        .filter(|(k, v)| SECTIONS.iter().any(|s| k.contains(s)) && !v.is_null())
        .map(|(k, v)| {
            let mut out = Vec::new();
            flatten("", v, &mut out);
            (k.clone(), out)
        })
        .collect()
}

/// The diagnosis as one sentence, when a result carries one as text (a string field, or a
/// `text` / `summary` / `message` field of a `diagnosis` object).
pub fn diagnosis_text(r: &TestResult) -> Option<String> {
    let v = serde_json::to_value(r).ok()?;
    let d = v.get("diagnosis")?;
    match d {
        Value::String(s) => Some(s.clone()),
        Value::Object(m) => {
            ["text", "summary", "message"].iter().find_map(|k| m.get(*k)?.as_str().map(String::from))
        }
        _ => None,
    }
}

/// Theoretical limits anywhere in a result: numbers whose key names a limit, capacity or
/// theoretical value in bit/s (`*limit*_bps`, `*theoretical*_bps`, `*capacity*_bps`).
pub fn limits(r: &TestResult) -> Vec<Limit> {
    let Ok(v) = serde_json::to_value(r) else { return Vec::new() };
    let mut out = Vec::new();
    find_limits("", &v, &mut out);
    out
}

fn find_limits(path: &str, v: &Value, out: &mut Vec<Limit>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                // Per-iteration copies of the same test repeat the same limits.
                if k == "repetition" {
                    continue;
                }
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                let named = ["limit", "theoretical", "capacity"].iter().any(|w| k.contains(w));
                match x.as_f64() {
                    Some(bps) if named && k.ends_with("_bps") && bps.is_finite() && bps > 0.0 => {
                        out.push(Limit { path: p, bps })
                    }
                    _ => find_limits(&p, x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| find_limits(path, x, out)),
        _ => {}
    }
}

fn flatten(path: &str, v: &Value, out: &mut Vec<Entry>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                flatten(&p, x, out);
            }
        }
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            let items: Vec<String> = a.iter().map(scalar).collect();
            out.push(Entry { key: path.to_string(), value: items.join(", ") });
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate().take(50) {
                flatten(&format!("{path}[{i}]"), x, out);
            }
        }
        Value::Null => {}
        x => out.push(Entry { key: path.to_string(), value: scalar(x) }),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() != 0.0 => format!("{f:.4}").trim_end_matches('0').to_string(),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn limits_are_found_by_name_and_unit() {
        let v = json!({"summary": {"directions": [{"rwnd_limited_frac": 0.5, "sender_bps": 1e9}]},
                       "diagnosis": {"text": "receive-window limited", "link_limit_bps": 1.345e8}});
        let mut out = Vec::new();
        find_limits("", &v, &mut out);
        assert_eq!(out, vec![Limit { path: "diagnosis.link_limit_bps".into(), bps: 1.345e8 }]);
    }

    #[test]
    fn nested_values_flatten_to_dotted_keys() {
        let v = json!({"limited_by": "rwnd", "numbers": {"rtt_us": 300, "share": 0.93}, "tags": ["a", "b"]});
        let mut out = Vec::new();
        flatten("", &v, &mut out);
        let keys: Vec<&str> = out.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["limited_by", "numbers.rtt_us", "numbers.share", "tags"]);
        assert_eq!(out[2].value, "0.93");
        assert_eq!(out[3].value, "a, b");
    }
}
