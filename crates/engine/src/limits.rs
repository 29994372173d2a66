//! What a server accepts: every field of a [`TestSpec`] checked for range and consistency
//! before anything is allocated (security-notes.md S3, S7). The client runs the same checks
//! first, so a bad flag value fails before any connection is made.

use results::setting::{self, Setting};
use results::TestSpec;
use wire::Rejection;

/// Server-side caps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest test, ms.
    pub max_duration_ms: u64,
    /// Most streams or flows per direction.
    pub max_parallel: u32,
    /// Largest read, write, request or response, bytes.
    pub max_len: u32,
    /// Largest burst.
    pub max_burst: u32,
    /// Largest socket buffer a peer may ask for, bytes.
    pub max_buffer: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_duration_ms: 3_600_000,
            max_parallel: 128,
            max_len: 16 * 1024 * 1024,
            max_burst: 1024,
            max_buffer: 512 * 1024 * 1024,
        }
    }
}

/// What one class of clients may ask — a key class of the server's keys file, or anonymous
/// clients (server flags) — on top of the hard [`Limits`]: each cap is `None` when the class
/// does not set it. A request over a cap is refused with code `limit`, naming the cap and
/// its value ([`check_policy`]); concurrency and tests per minute are counted by the server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Policy {
    /// The class's name (`anonymous` for clients without a key).
    pub class: String,
    /// Longest test, ms; also the hard stop of a test limited by bytes only.
    pub max_duration_ms: Option<u64>,
    /// Highest requested rate of a paced (UDP bulk) test, all flows and directions, bit/s;
    /// an unpaced request (`-b 0`) is refused when set.
    pub max_rate_bps: Option<u64>,
    /// Most parallel streams or flows (`-P`).
    pub max_parallel: Option<u32>,
    /// Most tests of this class running at once.
    pub max_concurrent: Option<u32>,
    /// Most tests per minute from one source address (a token bucket per address).
    pub tests_per_minute: Option<u32>,
}

impl Policy {
    /// No caps beyond the hard limits.
    pub fn open(class: &str) -> Policy {
        Policy { class: class.to_string(), ..Policy::default() }
    }

    /// The longest test this class may run, ms, within `hard` (the server's [`Limits`]).
    pub fn duration_cap_ms(&self, hard: &Limits) -> u64 {
        self.max_duration_ms.map_or(hard.max_duration_ms, |m| m.min(hard.max_duration_ms))
    }

    /// `the limit of key class 'lab'` or `the limit for anonymous clients`.
    pub fn whose(&self) -> String {
        if self.class == ANONYMOUS {
            "the limit for anonymous clients".into()
        } else {
            format!("the limit of key class '{}'", self.class)
        }
    }

    /// The caps a class of clients that cannot show a key must have on a keyed server
    /// (iperf3 clients) and this one does not set, by their keys-file names.
    pub fn unset_caps(&self) -> Vec<&'static str> {
        let caps = [
            ("max-duration", self.max_duration_ms.is_some()),
            ("max-streams", self.max_parallel.is_some()),
            ("max-rate", self.max_rate_bps.is_some()),
            ("max-concurrent", self.max_concurrent.is_some()),
        ];
        caps.into_iter().filter(|(_, set)| !set).map(|(name, _)| name).collect()
    }

    /// A `limit` refusal naming `field` and the cap.
    pub fn refuse(&self, field: &str, what: String, cap: String) -> Rejection {
        Rejection {
            code: wire::ErrorCode::Limit,
            message: format!("{what} exceeds {} ({cap})", self.whose()),
            field: Some(field.to_string()),
            retry_after_ms: None,
        }
    }
}

/// The class name of clients without a key.
pub const ANONYMOUS: &str = "anonymous";

/// Checks `spec` against a class's caps on what one test may ask.
pub fn check_policy(spec: &TestSpec, p: &Policy) -> Result<(), Rejection> {
    if let Some(max) = p.max_duration_ms {
        if spec.duration_ms > max {
            let what = format!("a {} s test", spec.duration_ms as f64 / 1000.0);
            return Err(p.refuse(
                setting::DURATION_MS.id,
                what,
                format!("max-duration {} s", max as f64 / 1000.0),
            ));
        }
    }
    if let Some(max) = p.max_parallel {
        if spec.parallel > max {
            let what = format!("{} parallel streams", spec.parallel);
            return Err(p.refuse(setting::PARALLEL.id, what, format!("max-streams {max}")));
        }
    }
    match p.max_rate_bps {
        Some(max) if crate::registry::of(spec.test).rate_capped() => check_rate(spec, p, max),
        _ => Ok(()),
    }
}

/// A paced test's total rate: per-flow rate × flows × directions.
fn check_rate(spec: &TestSpec, p: &Policy, max: u64) -> Result<(), Rejection> {
    let cap = format!("max-rate {}", model::human::rate(max as f64));
    if spec.rate_bps == 0 {
        return Err(p.refuse(setting::RATE_BPS.id, "an unpaced test (no -b rate)".into(), cap));
    }
    let directions = if spec.direction == results::Direction::Bidir { 2 } else { 1 };
    let total = spec.rate_bps.saturating_mul(u64::from(spec.parallel)).saturating_mul(directions);
    if total > max {
        let what = format!("a total rate of {}", model::human::rate(total as f64));
        return Err(p.refuse(setting::RATE_BPS.id, what, cap));
    }
    Ok(())
}

/// What is wrong with a spec: a field outside its range (kept as numbers, so that a client
/// can state it in its own terms: `-w/--window must be at most 512M`), or another problem.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// `field` (a [`results::setting`] id) is `got`, outside `min..=max`.
    Range {
        /// The setting id.
        field: &'static str,
        /// Smallest value allowed.
        min: u64,
        /// Largest value allowed.
        max: u64,
        /// The value asked for.
        got: u64,
    },
    /// Anything else, as the server would answer it.
    Other(Rejection),
}

impl Problem {
    /// The field at fault, if named.
    pub fn field(&self) -> Option<&str> {
        match self {
            Problem::Range { field, .. } => Some(field),
            Problem::Other(r) => r.field.as_deref(),
        }
    }

    /// The server's answer (`bad-field`, in field-id terms).
    pub fn rejection(&self) -> Rejection {
        match self {
            &Problem::Range { field, min, max, got } => {
                Rejection::field(field, format!("{field} must be between {min} and {max}, got {got}"))
            }
            Problem::Other(r) => r.clone(),
        }
    }
}

impl From<Rejection> for Problem {
    fn from(r: Rejection) -> Problem {
        Problem::Other(r)
    }
}

/// Checks `spec` against `limits`; the first problem found is returned with its field name.
pub fn validate(spec: &TestSpec, limits: &Limits) -> Result<(), Rejection> {
    explain(spec, limits).map_err(|p| p.rejection())
}

/// [`validate`], with a range problem kept as numbers.
pub fn explain(spec: &TestSpec, limits: &Limits) -> Result<(), Problem> {
    check_timing(spec, limits)?;
    check_ranges(spec, limits)?;
    if let Some(cc) = &spec.congestion {
        check_congestion_name(cc)?;
    }
    only(spec)?;
    let ty = crate::registry::of(spec.test);
    check_options(spec, ty.options())?;
    check_results_size(spec, ty.data_connections(spec).max(spec.parallel))?;
    Ok(ty.check(spec)?)
}

/// Every setting of `spec` that is set and has a [`setting::Limit`], within it.
fn check_ranges(spec: &TestSpec, limits: &Limits) -> Result<(), Problem> {
    for s in setting::ALL {
        let (Some(limit), Some(results::ParamValue::Int(v))) = (s.limit, (s.get)(spec)) else { continue };
        let (min, max) = match limit {
            setting::Limit::Message => (1, limits.max_len.into()),
            setting::Limit::Buffer => (1, limits.max_buffer.into()),
            setting::Limit::Parallel => (1, limits.max_parallel.into()),
            setting::Limit::Burst => (1, limits.max_burst.into()),
            setting::Limit::Range(min, max) => (min, max),
        };
        range(s.id, v, min, max)?;
    }
    Ok(())
}

/// Bytes of results JSON budgeted per stream and interval (measured: ~125 for TCP, more with
/// UDP counts), so that a test whose results could not be sent is refused up front.
const RESULT_BYTES_PER_STREAM_INTERVAL: u64 = 300;

/// Refuses a test whose per-interval results could exceed what one results message carries.
fn check_results_size(spec: &TestSpec, streams: u32) -> Result<(), Rejection> {
    if spec.interval_ms == 0 {
        return Ok(());
    }
    let intervals = spec.duration_ms.max(spec.interval_ms) / spec.interval_ms + 2;
    let bytes = intervals.saturating_mul(u64::from(streams)).saturating_mul(RESULT_BYTES_PER_STREAM_INTERVAL);
    let max = wire::MAX_RESULTS_FRAME_BYTES as u64;
    if bytes <= max {
        return Ok(());
    }
    let most = max / RESULT_BYTES_PER_STREAM_INTERVAL / u64::from(streams.max(1));
    let msg = format!(
        "{intervals} intervals of {streams} streams are more results than one test can carry \
         (at most {most} intervals per stream): use a longer interval (-i) or fewer streams"
    );
    Err(Rejection::field("interval_ms", msg))
}

/// Most type-specific options a spec may carry, and the longest text value.
const MAX_OPTIONS: usize = 32;
const MAX_OPTION_TEXT: usize = 4096;

/// Every option of `spec` must be one its test type declares, with a value of its kind.
fn check_options(spec: &TestSpec, declared: &[crate::registry::TypeOption]) -> Result<(), Rejection> {
    use results::setting::ValueKind;
    use results::ParamValue;
    if spec.options.len() > MAX_OPTIONS {
        return Err(Rejection::field("options", format!("at most {MAX_OPTIONS} options")));
    }
    for (name, value) in &spec.options {
        // An option with a setting of its own is named by the setting's id, as spec fields are.
        let field = results::setting::of_option(name).map_or(format!("options.{name}"), |s| s.id.to_string());
        let Some(opt) = declared.iter().find(|o| o.name == name) else {
            let known: Vec<&str> = declared.iter().map(|o| o.name).collect();
            let msg =
                format!("{} tests have no setting '{name}' (theirs: {})", spec.test.id(), known.join(", "));
            return Err(Rejection::field(&field, msg));
        };
        let fits = match (opt.kind, value) {
            (ValueKind::Bool, ParamValue::Bool(_)) => true,
            (ValueKind::Text | ValueKind::Direction, ParamValue::Text(t)) => t.len() <= MAX_OPTION_TEXT,
            (
                ValueKind::Bytes | ValueKind::Count | ValueKind::Millis | ValueKind::Rate,
                ParamValue::Int(_),
            ) => true,
            _ => false,
        };
        if !fits {
            return Err(Rejection::field(&field, format!("'{value}' is not a valid {name} ({})", opt.about)));
        }
    }
    Ok(())
}

/// Settings that only some test types take; each type's check names the ones it takes and
/// `only` refuses the others when set, so a sweep over a setting a test ignores is an error
/// instead of the same measurement at every point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Optional {
    /// `bytes_limit` (`-n`, `-k`).
    BytesLimit,
    /// `busy_poll`.
    BusyPoll,
    /// `rate_bps` (`-b`).
    Rate,
    /// `no_checksum`.
    NoChecksum,
    /// `no_offload`.
    NoOffload,
}

impl Optional {
    const ALL: [Optional; 5] =
        [Optional::BytesLimit, Optional::BusyPoll, Optional::Rate, Optional::NoChecksum, Optional::NoOffload];

    fn setting(self) -> &'static Setting {
        match self {
            Optional::BytesLimit => &setting::BYTES_LIMIT,
            Optional::BusyPoll => &setting::BUSY_POLL,
            Optional::Rate => &setting::RATE_BPS,
            Optional::NoChecksum => &setting::NO_CHECKSUM,
            Optional::NoOffload => &setting::NO_OFFLOAD,
        }
    }

    fn is_set(self, spec: &TestSpec) -> bool {
        match self {
            Optional::BytesLimit => spec.bytes_limit.is_some(),
            Optional::BusyPoll => spec.busy_poll,
            Optional::Rate => spec.rate_bps != 0,
            Optional::NoChecksum => spec.no_checksum,
            Optional::NoOffload => spec.no_offload,
        }
    }
}

/// Refuses every optional setting of `spec` that is set but that its test type does not take
/// (the settings table's `types`), naming the test type (`tcp-rr`).
fn only(spec: &TestSpec) -> Result<(), Rejection> {
    let ignored = |o: &Optional| !o.setting().types.contains(&spec.test) && o.is_set(spec);
    match Optional::ALL.into_iter().find(ignored) {
        Some(o) => {
            let field = o.setting().id;
            Err(Rejection::field(field, format!("{field} does not apply to {} tests", spec.test.id())))
        }
        None => Ok(()),
    }
}

/// Datagram payloads: room for tcplab's header, at most one IPv4 datagram's payload; `field`
/// is a [`results::setting`] id.
pub fn check_datagram(field: &str, len: u32) -> Result<(), Rejection> {
    check_range(field, len.into(), wire::udp::HEADER_LEN as u64, wire::udp::MAX_DATAGRAM as u64)
}

fn check_timing(spec: &TestSpec, limits: &Limits) -> Result<(), Problem> {
    match (spec.duration_ms, spec.bytes_limit) {
        (0, None) => {
            return Err(
                Rejection::field(setting::DURATION_MS.id, "a test needs a time or a byte limit").into()
            )
        }
        (_, Some(0)) => {
            return Err(Rejection::field(setting::BYTES_LIMIT.id, "byte limit must be at least 1").into())
        }
        _ => {}
    }
    range(setting::DURATION_MS.id, spec.duration_ms, 0, limits.max_duration_ms)?;
    if spec.interval_ms != 0 {
        range(setting::INTERVAL_MS.id, spec.interval_ms, 100, 60_000)?;
    }
    if spec.duration_ms > 0 && spec.omit_ms >= spec.duration_ms {
        return Err(
            Rejection::field(setting::OMIT_MS.id, "omitted time must be shorter than the test").into()
        );
    }
    range(setting::OMIT_MS.id, spec.omit_ms, 0, limits.max_duration_ms)
}

/// Checks that this host may run threads on `cpu` (the pinning of `-A`); `field` names the
/// spec field for the error (a [`results::setting`] id).
pub fn check_pin(field: &str, cpu: Option<u32>) -> Result<(), Rejection> {
    let Some(cpu) = cpu else { return Ok(()) };
    let allowed = netio::sched::allowed_cpus().unwrap_or_default();
    if allowed.contains(&cpu) {
        return Ok(());
    }
    let list: Vec<String> = allowed.iter().map(u32::to_string).collect();
    Err(Rejection::field(field, format!("CPU {cpu} is not available here (allowed: {})", list.join(","))))
}

/// Refuses `v` outside `min..=max`, naming `field` (a [`results::setting`] id).
pub fn check_range(field: &str, v: u64, min: u64, max: u64) -> Result<(), Rejection> {
    if v < min || v > max {
        return Err(Rejection::field(field, format!("{field} must be between {min} and {max}, got {v}")));
    }
    Ok(())
}

fn range(field: &'static str, got: u64, min: u64, max: u64) -> Result<(), Problem> {
    if got < min || got > max {
        return Err(Problem::Range { field, min, max, got });
    }
    Ok(())
}

fn check_congestion_name(cc: &str) -> Result<(), Rejection> {
    let ok = !cc.is_empty() && cc.len() < 16 && cc.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Rejection::field(setting::CONGESTION.id, format!("'{cc}' is not a congestion control name")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{ParamValue, TestKind};

    fn spec(kind: TestKind) -> TestSpec {
        crate::registry::defaults(kind)
    }

    fn ok(spec: &TestSpec) -> bool {
        validate(spec, &Limits::default()).is_ok()
    }

    fn field_of(spec: &TestSpec) -> Option<String> {
        validate(spec, &Limits::default()).err().and_then(|r| r.field)
    }

    #[test]
    fn udp_settings_are_refused_on_tcp_tests_but_a_stream_may_be_paced() {
        let mut s = spec(TestKind::TcpStream);
        s.rate_bps = 1_000_000;
        assert!(ok(&s), "-b on a TCP stream");
        s.test = TestKind::TcpRr;
        assert_eq!(field_of(&s).as_deref(), Some("rate_bps"));
        (s.test, s.rate_bps) = (TestKind::TcpStream, 0);
        s.no_offload = true;
        assert_eq!(field_of(&s).as_deref(), Some("no_offload"));
        let mut u = spec(TestKind::UdpStream);
        (u.send_len, u.recv_len, u.rate_bps, u.no_offload) = (1400, 1400, 1_000_000, true);
        assert!(ok(&u));
    }

    #[test]
    fn an_option_the_test_type_does_not_declare_is_refused() {
        let mut s = spec(TestKind::TcpStream);
        s.options.insert("sink".into(), results::ParamValue::Text("fsync".into()));
        assert_eq!(field_of(&s).as_deref(), Some("options.sink"));
    }

    #[test]
    fn results_too_large_for_one_message_are_refused_up_front() {
        let mut s = spec(TestKind::TcpStream);
        (s.duration_ms, s.interval_ms, s.parallel) = (3_600_000, 1000, 8);
        assert!(ok(&s), "an hour of 1 s intervals of 8 streams fits");
        (s.interval_ms, s.parallel) = (100, 128);
        assert_eq!(field_of(&s).as_deref(), Some("interval_ms"));
    }

    #[test]
    fn a_range_problem_keeps_its_numbers_and_the_server_answer_its_text() {
        let mut s = spec(TestKind::TcpStream);
        s.sndbuf = Some(1 << 30);
        let p = explain(&s, &Limits::default()).unwrap_err();
        assert_eq!(p, Problem::Range { field: "sndbuf", min: 1, max: 512 << 20, got: 1 << 30 });
        let r = validate(&s, &Limits::default()).unwrap_err();
        assert_eq!(r.field.as_deref(), Some("sndbuf"));
        assert_eq!(r.message, "sndbuf must be between 1 and 536870912, got 1073741824");
    }

    #[test]
    fn defaults_are_valid() {
        for k in TestKind::ALL {
            assert!(ok(&spec(k)), "{}", k.id());
        }
    }

    type Mutation = Box<dyn Fn(&mut TestSpec)>;

    #[test]
    fn each_bad_field_is_named() {
        let base = spec(TestKind::TcpStream);
        let cases: Vec<(Mutation, &str)> = vec![
            (Box::new(|s| s.parallel = 0), "parallel"),
            (Box::new(|s| s.parallel = 129), "parallel"),
            (Box::new(|s| s.send_len = 0), "send_len"),
            (Box::new(|s| s.recv_len = u32::MAX), "recv_len"),
            (Box::new(|s| s.duration_ms = 0), "duration_ms"),
            (Box::new(|s| s.duration_ms = 3_600_001), "duration_ms"),
            (Box::new(|s| s.interval_ms = 5), "interval_ms"),
            (Box::new(|s| s.omit_ms = 10_000), "omit_ms"),
            (Box::new(|s| s.mss = Some(10)), "mss"),
            (Box::new(|s| s.congestion = Some("bbr; rm -rf".into())), "congestion"),
            (Box::new(|s| s.bytes_limit = Some(0)), "bytes_limit"),
            (Box::new(|s| s.burst = 0), "burst"),
        ];
        let buffers = setting::ALL.iter().filter(|s| s.limit == Some(setting::Limit::Buffer));
        let cases = cases.into_iter().chain(buffers.map(|b| {
            let zero: Mutation = Box::new(|s| (b.set)(s, &results::ParamValue::Int(0)).unwrap_or_default());
            (zero, b.id)
        }));
        for (mutate, field) in cases {
            let mut s = base.clone();
            mutate(&mut s);
            assert_eq!(field_of(&s).as_deref(), Some(field));
            assert!(setting::by_id(field).is_some_and(|s| !s.is_combined()), "'{field}' is no setting id");
        }
    }

    /// Every rejection `validate` can give for these specs, with the field it names.
    fn rejected_fields() -> Vec<String> {
        let mut specs = Vec::new();
        for kind in TestKind::ALL {
            let base = spec(kind);
            for s in setting::ALL.iter().filter(|s| !s.is_combined()) {
                for v in [ParamValue::Int(0), ParamValue::Int(u64::from(u32::MAX)), ParamValue::Int(1)] {
                    let mut bad = base.clone();
                    if (s.set)(&mut bad, &v).is_ok() {
                        specs.push(bad);
                    }
                }
                for v in [ParamValue::Bool(true), ParamValue::Text("no such cc!".into())] {
                    let mut bad = base.clone();
                    if (s.set)(&mut bad, &v).is_ok() {
                        specs.push(bad);
                    }
                }
            }
        }
        specs.iter().filter_map(field_of).collect()
    }

    #[test]
    fn every_rejection_names_a_setting_id() {
        let fields = rejected_fields();
        assert!(fields.len() > 40, "the mutations reach the checks: {fields:?}");
        for field in fields {
            assert!(setting::by_id(&field).is_some_and(|s| !s.is_combined()), "'{field}' is no setting id");
        }
        for o in Optional::ALL {
            assert!(setting::by_id(o.setting().id).is_some());
        }
    }

    #[test]
    fn a_type_sweeps_exactly_the_optional_settings_it_takes() {
        for t in crate::registry::all() {
            for o in Optional::ALL {
                let mut s = t.defaults();
                let on = if o == Optional::BytesLimit || o == Optional::Rate {
                    ParamValue::Int(1_000_000)
                } else {
                    ParamValue::Bool(true)
                };
                (o.setting().set)(&mut s, &on).unwrap_or_else(|e| panic!("{e}"));
                let refused = field_of(&s).as_deref() == Some(o.setting().id);
                let swept = t.sweep_params().contains(&o.setting().id);
                assert_eq!(
                    swept,
                    !refused,
                    "{}: {} swept {swept}, refused {refused}",
                    t.kind().id(),
                    o.setting().id
                );
            }
        }
    }

    #[test]
    fn udp_datagram_sizes_are_bounded() {
        let mut s = spec(TestKind::UdpStream);
        s.send_len = 15;
        assert_eq!(field_of(&s).as_deref(), Some("send_len"));
        s.send_len = 65_508;
        assert_eq!(field_of(&s).as_deref(), Some("send_len"));
        s.send_len = 64;
        assert!(ok(&s));
        let mut r = spec(TestKind::UdpRr);
        r.request_len = 1;
        assert_eq!(field_of(&r).as_deref(), Some("request_len"), "1-byte requests cannot carry a sequence");
        (r.request_len, r.response_len) = (64, 70_000);
        assert_eq!(field_of(&r).as_deref(), Some("response_len"));
    }

    #[test]
    fn byte_limited_stream_needs_no_duration_but_rr_cannot_be_byte_limited() {
        let mut s = spec(TestKind::TcpStream);
        s.duration_ms = 0;
        s.bytes_limit = Some(1 << 20);
        assert!(ok(&s));
        s.test = TestKind::TcpRr;
        assert_eq!(field_of(&s).as_deref(), Some("bytes_limit"));
    }
}
