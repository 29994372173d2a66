//! Auto-scaled units, one style in every output: sizes in binary multiples named KiB/MiB/GiB
//! (tcplab's sizes are powers of 1024), rates in decimal bits (Mbit/s = 10⁶), times in µs/ms/s.
//! All are `model::human`'s, shared with the diagnosis and the model's tables.

pub use model::human::{micros, rate, sig3};
use results::setting::ValueKind;
use results::ParamValue;

/// `512 B`, `1.25 GiB`.
pub fn bytes(n: u64) -> String {
    model::human::size(n as f64)
}

/// A count with thousands separators: `12,345`.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `YYYY-MM-DD hh:mm:ss` (UTC) of milliseconds since the Unix epoch.
pub fn utc_datetime(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil conversion.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// A value of `metric` in its unit: `941 Mbit/s`, `12.3k trans/s`.
pub fn metric(m: results::Metric, v: f64) -> String {
    match m.is_bit_rate() {
        true => rate(v),
        false => format!("{} {}", sig3(v), m.unit()),
    }
}

/// A test's headline for tables: the value in its unit, `–` when it was not measured.
pub fn headline(h: Option<results::Headline>) -> String {
    match h.and_then(|h| Some((h.metric, h.value?))) {
        Some((m, v)) => metric(m, v),
        None => UNKNOWN.to_string(),
    }
}

/// What tables show for a figure that was not measured (never a made-up 0).
pub const UNKNOWN: &str = "–";

/// `v` written by `show`, or [`UNKNOWN`] when it was not measured.
pub fn known<T>(v: Option<T>, show: impl FnOnce(T) -> String) -> String {
    v.map_or_else(|| UNKNOWN.to_string(), show)
}

/// A setting's value as the command line takes it: [`ValueKind::write`], the one writer.
pub fn setting_value(kind: ValueKind, v: &ParamValue) -> String {
    kind.write(v)
}

/// `name=value` of a parameter named by a setting's id or alias (`len=8K`).
pub fn param(name: &str, v: &ParamValue) -> String {
    let kind = results::setting::find(name).map_or(ValueKind::Count, |s| s.kind);
    format!("{name}={}", setting_value(kind, v))
}

/// A unit string stored with `us` for microseconds (`us/KB`, `us/tran`) as shown: `µs/KB`.
pub fn micro_unit(unit: &str) -> String {
    match unit.strip_prefix("us") {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("µs{rest}"),
        _ => unit.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc_datetime(0), "1970-01-01 00:00:00");
        assert_eq!(utc_datetime(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(utc_datetime(1_795_307_465_000), "2026-11-22 00:31:05");
    }

    #[test]
    fn scaling() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.50 KiB");
        assert_eq!(bytes(3 * 1024 * 1024 * 1024), "3.00 GiB");
        assert_eq!(rate(19_800_000_000.0), "19.8 Gbit/s");
        assert_eq!(rate(950.0), "950 bit/s");
        assert_eq!(rate(f64::NAN), "0.00 bit/s");
        assert_eq!(micros(45.24), "45.2 µs");
        assert_eq!(micros(1200.0), "1.20 ms");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(999), "999");
    }

    #[test]
    fn settings_read_as_typed() {
        let int = |n| ParamValue::Int(n);
        assert_eq!(setting_value(ValueKind::Bytes, &int(65_536)), "64K");
        assert_eq!(setting_value(ValueKind::Rate, &int(100_000_000)), "100M");
        assert_eq!(setting_value(ValueKind::Millis, &int(2_500)), "2.5 s");
        assert_eq!(param("send-len", &int(8192)), "send-len=8K");
        assert_eq!(micro_unit("us/KB"), "µs/KB");
        assert_eq!(micro_unit("us/tran"), "µs/tran");
        assert_eq!(micro_unit("usec"), "usec");
        assert_eq!(param("congestion", &ParamValue::Text("bbr".into())), "congestion=bbr");
    }
}
