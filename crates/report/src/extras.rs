//! Fields other parts of tcplab add to results over time — a diagnosis of what limited a
//! test, the reference or theoretical limit it is compared with, emulator counters — read
//! generically from the result's serde form, so the reports show them as soon as they
//! appear, without a change here for each new field.
//!
//! Rules: a top-level field whose name starts with one of [`SECTION_PREFIXES`] becomes a
//! section of tables (scalars as key/value rows, arrays of objects as one row per element);
//! a `diagnosis` field also gives sentences; any number named `*limit*_bps`,
//! `*theoretical*_bps` or `*capacity*_bps` is a theoretical limit, drawn on goodput plots.

use results::TestResult;
use serde_json::{Map, Value};

use crate::tables::Table;

/// Top-level result fields shown as sections when present and not empty.
pub const SECTION_PREFIXES: [&str; 5] = ["diagnos", "reference", "limit", "model", "emu"];

/// A theoretical limit found in a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// What it is: the `description` next to it, else where it was found.
    pub label: String,
    /// Bit/s.
    pub bps: f64,
}

/// One generic section: the field's name and its tables, each with a caption (may be empty).
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// Field name, e.g. `diagnosis`.
    pub name: String,
    /// Captioned tables.
    pub tables: Vec<(String, Table)>,
}

/// A result's serde form, which the functions ending in `_of` read.
pub fn value_of(r: &TestResult) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}

/// The generic sections of a result.
pub fn sections(r: &TestResult) -> Vec<Section> {
    sections_of(&value_of(r))
}

/// Sentences of a result's diagnosis (one per direction or finding).
pub fn diagnosis_lines(r: &TestResult) -> Vec<String> {
    diagnosis_of(&value_of(r))
}

/// Theoretical limits anywhere in a result.
pub fn limits(r: &TestResult) -> Vec<Limit> {
    let mut out = Vec::new();
    find_limits("", &value_of(r), &mut out);
    out
}

fn empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// [`sections`] of a result's serde form.
pub fn sections_of(v: &Value) -> Vec<Section> {
    let Value::Object(map) = v else { return Vec::new() };
    map.iter()
        .filter(|(k, v)| SECTION_PREFIXES.iter().any(|p| k.starts_with(p)) && !empty(v))
        .map(|(k, v)| Section { name: k.clone(), tables: tables_of(k, v) })
        .collect()
}

/// Tables of one value: its scalars as key/value rows, each array of objects as rows.
fn tables_of(name: &str, v: &Value) -> Vec<(String, Table)> {
    let mut scalars = Vec::new();
    let mut arrays = Vec::new();
    flatten("", v, &mut scalars, &mut arrays);
    let mut out = Vec::new();
    if !scalars.is_empty() {
        let rows = scalars.into_iter().map(|(k, v)| vec![k, v]).collect();
        out.push((String::new(), Table { head: vec!["field".into(), "value".into()], rows }));
    }
    for (path, items) in arrays {
        let caption = if path.is_empty() { name.to_string() } else { format!("{name}.{path}") };
        out.push((caption, rows_table(items)));
    }
    out
}

/// Scalars (and arrays of scalars) by dotted path; arrays holding objects set aside.
fn flatten<'a>(
    path: &str,
    v: &'a Value,
    scalars: &mut Vec<(String, String)>,
    arrays: &mut Vec<(String, &'a [Value])>,
) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                flatten(&join(path, k), x, scalars, arrays);
            }
        }
        Value::Array(a) if a.is_empty() => {}
        Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
            arrays.push((path.to_string(), a))
        }
        Value::Array(a) => {
            scalars.push((path.to_string(), a.iter().map(scalar).collect::<Vec<_>>().join(", ")))
        }
        Value::Null => {}
        x => scalars.push((path.to_string(), with_unit(path, x))),
    }
}

/// One row per element; columns are the union of the elements' flattened fields; arrays
/// inside an element are summarised in one cell.
fn rows_table(items: &[Value]) -> Table {
    let mut head: Vec<String> = Vec::new();
    let mut cells: Vec<Vec<(String, String)>> = Vec::new();
    for item in items.iter().take(200) {
        let (mut scalars, mut arrays) = (Vec::new(), Vec::new());
        flatten("", item, &mut scalars, &mut arrays);
        for (path, inner) in arrays {
            scalars.push((path, summary(inner)));
        }
        for (k, _) in &scalars {
            if !head.contains(k) {
                head.push(k.clone());
            }
        }
        cells.push(scalars);
    }
    let rows = cells
        .into_iter()
        .map(|row| {
            head.iter()
                .map(|h| row.iter().find(|(k, _)| k == h).map_or("–".into(), |(_, v)| v.clone()))
                .collect()
        })
        .collect();
    let head = head.into_iter().map(|h| if h.is_empty() { "value".into() } else { h }).collect();
    Table { head, rows }
}

/// Elements of a nested array in one cell: each element's scalars joined by ` · `.
fn summary(items: &[Value]) -> String {
    let parts: Vec<String> = items
        .iter()
        .map(|x| {
            let (mut s, mut a) = (Vec::new(), Vec::new());
            flatten("", x, &mut s, &mut a);
            s.into_iter().map(|(_, v)| v).collect::<Vec<_>>().join(" · ")
        })
        .collect();
    parts.join("; ")
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Sentences of the `diagnosis` field: a string; an object's `text`/`summary`/`message`; or
/// built from `direction`, the `primary` finding's `cause` and its `evidence`; arrays give
/// one sentence per element.
pub fn diagnosis_of(v: &Value) -> Vec<String> {
    match v.get("diagnosis") {
        Some(Value::Array(a)) => a.iter().filter_map(sentence).collect(),
        Some(d) => sentence(d).into_iter().collect(),
        None => Vec::new(),
    }
}

fn sentence(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(m) => {
            if let Some(s) = ["text", "summary", "message"].iter().find_map(|k| m.get(*k)?.as_str()) {
                return Some(s.to_string());
            }
            let finding = m.get("primary").and_then(Value::as_object).unwrap_or(m);
            let cause = text_field(finding, "cause").map(|c| format!("limited by {}", c.replace('-', " ")));
            let body: Vec<String> = cause.into_iter().chain(text_field(finding, "evidence")).collect();
            if body.is_empty() {
                return None;
            }
            let head = text_field(m, "direction").map(|d| format!("{d}: ")).unwrap_or_default();
            Some(format!("{head}{}", body.join(" — ")))
        }
        _ => None,
    }
}

fn text_field(m: &Map<String, Value>, key: &str) -> Option<String> {
    m.get(key)?.as_str().map(String::from)
}

fn find_limits(path: &str, v: &Value, out: &mut Vec<Limit>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                // Per-iteration copies of a repeated test carry the same limits.
                if k == "repetition" {
                    continue;
                }
                let p = join(path, k);
                let named = ["limit", "theoretical", "capacity"].iter().any(|w| k.contains(w));
                match x.as_f64() {
                    Some(bps) if named && k.ends_with("_bps") && bps.is_finite() && bps > 0.0 => {
                        let label = text_field(m, "description").unwrap_or(p);
                        out.push(Limit { label, bps });
                    }
                    _ => find_limits(&p, x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| find_limits(path, x, out)),
        _ => {}
    }
}

/// A scalar written with the unit its field name carries (`_bps`, `_us`, `_bytes`).
fn with_unit(path: &str, v: &Value) -> String {
    use crate::units::{bytes, micros, rate};
    match v.as_f64() {
        Some(f) if path.ends_with("_bps") => rate(f),
        Some(f) if path.ends_with("_us") => micros(f),
        Some(f) if path.ends_with("_bytes") && f >= 0.0 => bytes(f as u64),
        _ => scalar(v),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() != 0.0 => {
                let s = format!("{f:.4}");
                s.trim_end_matches('0').to_string()
            }
            Some(f) if n.is_f64() && f.abs() < 1e15 => format!("{f:.0}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Shaped like the `model` helper's diagnosis and reference and the emulator's counters.
    fn result() -> Value {
        json!({
            "label": "stream",
            "summary": {"directions": [{"rwnd_limited_frac": 0.5, "sender_bps": 1e9}]},
            "reference": {"kind": "link", "description": "atm:oc3c", "limit_bps": 1.345e8},
            "diagnosis": [{
                "direction": "client→server",
                "primary": {"cause": "receive-window", "weight": 0.9, "evidence": "rwnd-limited 93% of busy time", "advice": "raise -w"},
                "contributing": [{"cause": "sender-cpu", "weight": 0.3, "evidence": "cpu0 99%", "advice": "-P 2"}]
            }],
            "emu": {"path": "atm", "directions": [{"direction": "a→b", "offered": {"packets": 10, "bytes": 15000}}]},
            "warnings": []
        })
    }

    #[test]
    fn limits_are_found_by_name_and_labelled_by_their_description() {
        let mut out = Vec::new();
        find_limits("", &result(), &mut out);
        assert_eq!(out, vec![Limit { label: "atm:oc3c".into(), bps: 1.345e8 }]);
        let mut out = Vec::new();
        find_limits("", &json!({"model": {"theoretical_bps": 5.0}}), &mut out);
        assert_eq!(out, vec![Limit { label: "model.theoretical_bps".into(), bps: 5.0 }]);
    }

    #[test]
    fn diagnosis_sentences_from_strings_objects_and_findings() {
        assert_eq!(
            diagnosis_of(&result()),
            ["client→server: limited by receive window — rwnd-limited 93% of busy time"]
        );
        assert_eq!(diagnosis_of(&json!({"diagnosis": "window-limited"})), ["window-limited"]);
        assert_eq!(diagnosis_of(&json!({"diagnosis": {"text": "cpu"}})), ["cpu"]);
        assert!(diagnosis_of(&json!({"diagnosis": []})).is_empty());
    }

    #[test]
    fn sections_become_tables() {
        let s = sections_of(&result());
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["diagnosis", "emu", "reference"]);
        let (caption, diag) = &s[0].tables[0];
        assert_eq!(caption, "diagnosis");
        assert_eq!(diag.head[..3], ["direction", "primary.advice", "primary.cause"]);
        assert_eq!(diag.head.last().map(String::as_str), Some("contributing"));
        assert_eq!(diag.rows[0].last().map(String::as_str), Some("-P 2 · sender-cpu · cpu0 99% · 0.3"));
        let emu = &s[1].tables;
        assert_eq!(emu[0].1.rows, vec![vec!["path".to_string(), "atm".to_string()]]);
        assert_eq!(emu[1].0, "emu.directions");
        assert_eq!(emu[1].1.head, ["direction", "offered.bytes", "offered.packets"]);
        assert!(sections_of(&json!({"diagnosis": [], "emu": null})).is_empty());
    }
}
