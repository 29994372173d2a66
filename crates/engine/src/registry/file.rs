//! `file`: one file sent over one TCP connection, FTP-style (seed 001's 11 MB transfer), with
//! the time on disk apart from the time on the network, the whole file verified by SHA-256
//! at both ends, and a choice of how the bytes cross the socket: `write`, `sendfile`,
//! `splice` or `MSG_ZEROCOPY` on the sending end, `read` or `skip-copy` (`MSG_TRUNC`) on the
//! receiving end, into a sink of `null`, `page-cache`, `direct` (`O_DIRECT`) or `fsync`.
//!
//! The size is the spec's byte limit; the time limit is a cap (a transfer it cuts short fails
//! verification). The sender prepares its source before the start (generated data goes to a
//! temporary file first, so every send mode reads a file) and hashes it then; the receiver
//! hashes what it reads from the socket. The client compares the two ([`TestType::verify`]).

pub mod figures;
mod recv;
mod send;
mod temp;

use results::setting::ValueKind;
use results::{Direction, Metric, ParamValue, Role, Shape, SideMeasurement, Summary, TestKind, TestSpec};

use self::figures::{FileSide, FileSummary, Verification};
use wire::Rejection;

use crate::registry::{self, Data, Info, TestType, Transport, TypeOption};
use crate::side::{End, Job, WorkDebug};
use crate::Error;

/// The name of a file transfer's own section in measurements and summaries.
pub const SECTION: &str = "file";

/// Seed 001's file: `flute2.wav`, 11 MB.
pub const DEFAULT_SIZE: u64 = 11 * 1024 * 1024;
/// The time cap when none is given, ms.
pub const DEFAULT_CAP_MS: u64 = 60_000;

/// How the sender moves file bytes into the socket.
pub const SEND_MODES: [&str; 4] = ["write", "sendfile", "splice", "zerocopy"];
/// How the receiver takes bytes out of the socket.
pub const RECV_MODES: [&str; 2] = ["read", "skip-copy"];
/// Where received bytes go.
pub const SINKS: [&str; 4] = ["null", "page-cache", "direct", "fsync"];

const OPTIONS: [TypeOption; 6] = [
    TypeOption { name: "send", kind: ValueKind::Text, about: "write, sendfile, splice or zerocopy" },
    TypeOption { name: "recv", kind: ValueKind::Text, about: "read or skip-copy" },
    TypeOption { name: "sink", kind: ValueKind::Text, about: "null, page-cache, direct or fsync" },
    TypeOption { name: "src", kind: ValueKind::Text, about: "file to send, on the client (not with -R)" },
    TypeOption {
        name: "dir",
        kind: ValueKind::Text,
        about: "directory of the sink file, on the client (-R only)",
    },
    TypeOption {
        name: "verify",
        kind: ValueKind::Bool,
        about: "SHA-256 the file at both ends and compare (default on; off: neither end hashes, only the byte count is checked)",
    },
];

/// Why a transfer with `verify` off is not verified (the CLI flag that turns it off).
pub const NOT_VERIFIED: &str = "--no-verify";

/// The file settings of a spec, defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSettings {
    /// Send mode.
    pub send: &'static str,
    /// Receive mode.
    pub recv: &'static str,
    /// Sink.
    pub sink: &'static str,
    /// The client's file to send.
    pub src: Option<String>,
    /// The client's directory for the sink file.
    pub dir: Option<String>,
    /// Whether both ends hash the file (default on).
    pub verify: bool,
}

impl FileSettings {
    /// Reads and checks the options of `spec`; the error names the option.
    pub fn of(spec: &TestSpec) -> Result<FileSettings, Rejection> {
        let s = FileSettings {
            send: choice(spec, "send", &SEND_MODES)?,
            recv: choice(spec, "recv", &RECV_MODES)?,
            sink: choice(spec, "sink", &SINKS)?,
            src: text(spec, "src"),
            dir: text(spec, "dir"),
            verify: !matches!(spec.options.get("verify"), Some(ParamValue::Bool(false))),
        };
        if s.recv == "skip-copy" && s.sink != "null" {
            let msg =
                format!("sink {} needs the data, which skip-copy drops in the kernel: use sink null", s.sink);
            return Err(Rejection::field("options.sink", msg));
        }
        if s.src.is_some() && spec.direction != Direction::Forward {
            return Err(Rejection::field(
                "options.src",
                "src names a file on the client, which sends only without -R",
            ));
        }
        if s.dir.is_some() && spec.direction != Direction::Reverse {
            let msg = "dir names a directory on the client, which receives only with -R (the server writes to its own temporary directory)";
            return Err(Rejection::field("options.dir", msg));
        }
        Ok(s)
    }
}

fn text(spec: &TestSpec, name: &str) -> Option<String> {
    match spec.options.get(name) {
        Some(ParamValue::Text(t)) => Some(t.clone()),
        _ => None,
    }
}

fn choice(spec: &TestSpec, name: &str, allowed: &[&'static str]) -> Result<&'static str, Rejection> {
    let Some(value) = text(spec, name) else { return Ok(allowed[0]) };
    allowed.iter().copied().find(|a| *a == value).ok_or_else(|| {
        Rejection::field(
            &format!("options.{name}"),
            format!("{name} '{value}' is not one of {}", allowed.join(", ")),
        )
    })
}

/// The `file` test type.
#[derive(Debug)]
pub struct FileTest;

impl TestType for FileTest {
    fn info(&self) -> &'static Info {
        &Info {
            kind: TestKind::File,
            command: "file",
            netperf_name: "TCP_SENDFILE",
            about: "File transfer, FTP-style: disk and network time apart, SHA-256 verified (unless --no-verify), send by write/sendfile/splice/MSG_ZEROCOPY, receive by read/skip-copy into null/page-cache/O_DIRECT/fsync (-R: server sends)",
            transport: Transport::TcpConnections,
            headline: Metric::Goodput,
            shape: Shape::TcpBulk,
        }
    }
    fn longer(&self) -> Option<&'static str> {
        Some("send a larger file (--size) so the transfer lasts a few seconds")
    }

    fn defaults(&self) -> TestSpec {
        let base = TestSpec::new(TestKind::File);
        TestSpec { bytes_limit: Some(DEFAULT_SIZE), duration_ms: DEFAULT_CAP_MS, ..base }
    }

    fn label(&self, spec: &TestSpec) -> String {
        match FileSettings::of(spec) {
            Ok(s) => format!(
                "file {}/{}→{}{}{}",
                s.send,
                s.recv,
                s.sink,
                if s.verify { "" } else { " unverified" },
                crate::stream::direction_suffix(spec.direction)
            ),
            Err(_) => "file".into(),
        }
    }

    fn check(&self, spec: &TestSpec) -> Result<(), Rejection> {
        if spec.bytes_limit.is_none() {
            return Err(Rejection::field("bytes_limit", "a file test needs a size"));
        }
        if spec.parallel != 1 {
            return Err(Rejection::field("parallel", "a file test moves one file over one connection"));
        }
        if spec.direction == Direction::Bidir {
            return Err(Rejection::field(
                "direction",
                "a file test sends one way (-R for the server to send)",
            ));
        }
        if spec.omit_ms != 0 {
            return Err(Rejection::field("omit_ms", "a file is measured whole; nothing can be omitted"));
        }
        FileSettings::of(spec).map(|_| ())
    }

    fn data_connections(&self, _spec: &TestSpec) -> u32 {
        1
    }

    fn jobs(&self, spec: &TestSpec, end: End, data: Data) -> Result<Vec<Job>, Error> {
        let Data::Tcp(sockets) = data else { return Err(registry::unexpected(self, &data)) };
        let settings = FileSettings::of(spec).map_err(Error::Rejected)?;
        let mut jobs = Vec::with_capacity(sockets.len());
        for ds in sockets {
            let index = ds.index;
            let role = crate::stream::role(spec, end, index);
            let (sock, probe) = ds.split().map_err(crate::stream::prepare_error)?;
            let work = match role {
                Role::Send => send::job(spec, end, &settings, sock)?,
                _ => recv::job(spec, end, &settings, sock)?,
            };
            jobs.push(Job { index, role, socket: Some(probe), work: WorkDebug(work) });
        }
        Ok(jobs)
    }

    fn summarize(
        &self,
        spec: &TestSpec,
        local: &SideMeasurement,
        remote: Option<&SideMeasurement>,
    ) -> Summary {
        let mut s = crate::summarize::tcp_bulk(spec, local, remote);
        let (sender, receiver) = match spec.direction {
            Direction::Reverse => (remote, Some(local)),
            _ => (Some(local), remote),
        };
        let mut notes = Vec::new();
        let mut side_of = |m: Option<&SideMeasurement>| {
            let section = m?.sections.get(SECTION)?;
            figures::side_from_section(section).map_err(|e| notes.push(format!("ignored: {e}"))).ok()
        };
        let (sender, receiver) = (side_of(sender), side_of(receiver));
        let verify = FileSettings::of(spec).map_or(true, |s| s.verify);
        let mut f = file_summary(spec.bytes_limit.unwrap_or(0), verify, sender, receiver);
        f.notes.extend(notes);
        s.figures = figures::figures(&f);
        s.sections.insert(SECTION.into(), figures::to_section(&f));
        s
    }

    fn verify(&self, summary: &Summary) -> Result<(), String> {
        let f = summary
            .sections
            .get(SECTION)
            .and_then(|v| serde_json::from_value::<FileSummary>(v.clone()).ok())
            .ok_or("no file figures in the result")?;
        let got = f.receiver.as_ref().map_or(0, |r| r.bytes);
        if got != f.size {
            return Err(format!("the file did not arrive whole: {got} of {} bytes", f.size));
        }
        match &f.verification {
            Verification::Mismatch { .. } if f.sender.as_ref().is_some_and(|s| s.source_changed) => {
                Err(SOURCE_CHANGED.into())
            }
            Verification::Mismatch { sent, received } => {
                Err(format!("the file arrived corrupted: SHA-256 sent {sent}, received {received}"))
            }
            Verification::Match { .. } | Verification::NotChecked { .. } => Ok(()),
        }
    }

    fn options(&self) -> &'static [TypeOption] {
        &OPTIONS
    }
}

/// What a hash mismatch means when the sender's file was written to during the send.
const SOURCE_CHANGED: &str = "the source file changed while it was being sent (its modification time or size moved since it was hashed): the hashes cannot agree, and the mismatch says nothing about the transfer; send a file nothing writes to";

/// Both ends' file figures summed up: verification (none when `verify` was off), zero-copy
/// outcome and notes.
pub fn file_summary(
    size: u64,
    verify: bool,
    sender: Option<FileSide>,
    receiver: Option<FileSide>,
) -> FileSummary {
    let verification = match verify {
        true => verification(sender.as_ref(), receiver.as_ref()),
        false => Verification::NotChecked { why: NOT_VERIFIED.into() },
    };
    let zc = sender.as_ref().and_then(|s| s.zerocopy);
    let mut notes = Vec::new();
    if let Some(z) = zc {
        if z.completed > 0 && z.copied == z.completed {
            notes.push(
                "the kernel copied every MSG_ZEROCOPY send after all (loopback and devices without scatter-gather always copy): no copy was saved".into(),
            );
        }
        if z.completed < z.sends {
            notes.push(format!(
                "{} of {} zero-copy sends had not completed when the sender finished",
                z.sends - z.completed,
                z.sends
            ));
        }
    }
    if sender.as_ref().is_some_and(|s| s.source_changed) {
        notes.push(SOURCE_CHANGED.into());
    }
    if let Some(p) = sender.as_ref().map(|s| s.prepare_s).filter(|p| *p > 0.0) {
        let hashed = if verify { " and hashed" } else { "" };
        notes.push(format!("the sender prepared{hashed} its source in {:.1} ms before sending (not in the times above when the client sends; with -R the server prepares after the start, and the receiver's time includes it)", p * 1e3));
    }
    if let Some(r) = receiver.as_ref().filter(|r| r.hash_s > r.net_s + r.disk_s) {
        notes.push(format!(
            "the receiver spent more time hashing ({:.0} ms) than in socket calls and on disk together ({:.0} ms): SHA-256 verification limits this transfer; --no-verify measures network and disk alone",
            r.hash_s * 1e3,
            (r.net_s + r.disk_s) * 1e3
        ));
    }
    FileSummary {
        size,
        verification,
        sender,
        receiver,
        zero_copied_frac: zc.and_then(|z| z.zero_copied_frac()),
        notes,
    }
}

/// Compares what was sent with what arrived.
pub fn verification(sender: Option<&FileSide>, receiver: Option<&FileSide>) -> Verification {
    let not_checked = |why: &str| Verification::NotChecked { why: why.into() };
    let (Some(s), Some(r)) = (sender, receiver) else { return not_checked("one end's report is missing") };
    match (&s.sha256, &r.sha256) {
        (Some(sent), Some(received)) if sent == received => Verification::Match { sha256: sent.clone() },
        (Some(sent), Some(received)) => {
            Verification::Mismatch { sent: sent.clone(), received: received.clone() }
        }
        (_, None) => not_checked(
            "the receiver dropped the data in the kernel (skip-copy): only the byte count is checked",
        ),
        (None, Some(_)) => not_checked("the sender reported no hash"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{validate, Limits};

    fn spec(options: &[(&str, &str)]) -> TestSpec {
        let mut s = FileTest.defaults();
        for (k, v) in options {
            s.options.insert((*k).into(), ParamValue::Text((*v).into()));
        }
        s
    }

    fn refused_field(s: &TestSpec) -> Option<String> {
        validate(s, &Limits::default()).err().and_then(|r| r.field)
    }

    #[test]
    fn every_mode_and_sink_is_accepted_by_name() {
        for send in SEND_MODES {
            for sink in SINKS {
                assert_eq!(refused_field(&spec(&[("send", send), ("sink", sink)])), None, "{send} {sink}");
            }
        }
        assert_eq!(refused_field(&spec(&[("recv", "skip-copy")])), None);
        assert_eq!(FileTest.label(&spec(&[("send", "sendfile")])), "file sendfile/read→null");
    }

    #[test]
    fn unknown_modes_and_impossible_combinations_are_refused_by_option() {
        assert_eq!(refused_field(&spec(&[("send", "mmap")])).as_deref(), Some("options.send"));
        assert_eq!(refused_field(&spec(&[("recv", "zerocopy")])).as_deref(), Some("options.recv"));
        assert_eq!(refused_field(&spec(&[("sink", "disk")])).as_deref(), Some("options.sink"));
        let skip_to_disk = spec(&[("recv", "skip-copy"), ("sink", "fsync")]);
        assert_eq!(refused_field(&skip_to_disk).as_deref(), Some("options.sink"));
        let mut reverse_src = spec(&[("src", "/etc/passwd")]);
        reverse_src.direction = Direction::Reverse;
        assert_eq!(
            refused_field(&reverse_src).as_deref(),
            Some("options.src"),
            "the server never reads a named file"
        );
        assert_eq!(
            refused_field(&spec(&[("dir", "/")])).as_deref(),
            Some("options.dir"),
            "nor writes into a named directory"
        );
    }

    #[test]
    fn verify_is_on_unless_turned_off_and_takes_only_on_or_off() {
        assert!(FileSettings::of(&spec(&[])).is_ok_and(|s| s.verify));
        let mut off = spec(&[("send", "sendfile")]);
        off.options.insert("verify".into(), ParamValue::Bool(false));
        assert_eq!(refused_field(&off), None);
        assert!(FileSettings::of(&off).is_ok_and(|s| !s.verify));
        assert_eq!(FileTest.label(&off), "file sendfile/read→null unverified");
        off.options.insert("recv".into(), ParamValue::Text("skip-copy".into()));
        assert_eq!(refused_field(&off), None, "with skip-copy too (nothing to hash either way)");
        let text = spec(&[("verify", "no")]);
        assert_eq!(refused_field(&text).as_deref(), Some("options.verify"), "text is not on or off");
    }

    #[test]
    fn one_connection_one_way_whole_file() {
        let mut s = spec(&[]);
        s.parallel = 2;
        assert_eq!(refused_field(&s).as_deref(), Some("parallel"));
        let mut s = spec(&[]);
        s.direction = Direction::Bidir;
        assert_eq!(refused_field(&s).as_deref(), Some("direction"));
        let mut s = spec(&[]);
        s.omit_ms = 100;
        assert_eq!(refused_field(&s).as_deref(), Some("omit_ms"));
    }

    fn side(sha: Option<&str>, bytes: u64) -> FileSide {
        FileSide { sha256: sha.map(str::to_string), bytes, ..FileSide::default() }
    }

    fn summary_of(sender: FileSide, receiver: FileSide) -> Summary {
        let f = file_summary(100, true, Some(sender), Some(receiver));
        Summary { sections: [(SECTION.to_string(), figures::to_section(&f))].into(), ..Summary::default() }
    }

    #[test]
    fn a_corrupted_or_short_transfer_fails_verification() {
        let ok = summary_of(side(Some("aa"), 100), side(Some("aa"), 100));
        assert_eq!(FileTest.verify(&ok), Ok(()));
        let corrupted = summary_of(side(Some("aa"), 100), side(Some("ab"), 100));
        assert!(FileTest.verify(&corrupted).is_err_and(|e| e.contains("corrupted")));
        let short = summary_of(side(Some("aa"), 100), side(None, 99));
        assert!(FileTest.verify(&short).is_err_and(|e| e.contains("99 of 100")));
        let skipped = summary_of(side(Some("aa"), 100), side(None, 100));
        assert_eq!(FileTest.verify(&skipped), Ok(()));
        let f: FileSummary = serde_json::from_value(skipped.sections[SECTION].clone()).unwrap();
        assert!(matches!(f.verification, Verification::NotChecked { .. }));
    }

    #[test]
    fn a_source_changed_during_the_send_is_blamed_on_the_source() {
        let changed = FileSide { source_changed: true, ..side(Some("aa"), 100) };
        let s = summary_of(changed, side(Some("ab"), 100));
        let e = FileTest.verify(&s).unwrap_err();
        assert!(
            e.starts_with("the source file changed while it was being sent") && !e.contains("corrupted"),
            "{e}"
        );
        let f: FileSummary = serde_json::from_value(s.sections[SECTION].clone()).unwrap();
        assert!(f.notes.iter().any(|n| n.starts_with("the source file changed")), "{:?}", f.notes);
    }

    #[test]
    fn without_verify_only_the_byte_count_is_checked() {
        let unverified = |sender: FileSide, receiver: FileSide| {
            let f = file_summary(100, false, Some(sender), Some(receiver));
            Summary {
                sections: [(SECTION.to_string(), figures::to_section(&f))].into(),
                ..Summary::default()
            }
        };
        let whole = unverified(side(None, 100), side(None, 100));
        assert_eq!(FileTest.verify(&whole), Ok(()));
        let f: FileSummary =
            serde_json::from_value(whole.sections[SECTION].clone()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.verification, Verification::NotChecked { why: "--no-verify".into() });
        let text = figures::figures(&f).into_iter().find(|x| x.label == "verification").map(|x| x.value);
        assert_eq!(text, Some(results::FigureValue::Text("not verified: --no-verify".into())));
        let short = unverified(side(None, 100), side(None, 99));
        assert!(
            FileTest.verify(&short).is_err_and(|e| e.contains("99 of 100")),
            "a short transfer still fails"
        );
        let sender = FileSide { prepare_s: 0.01, ..side(None, 100) };
        let notes = file_summary(100, false, Some(sender), None).notes;
        assert!(notes.iter().any(|n| n.starts_with("the sender prepared its source")), "{notes:?}");
    }

    #[test]
    fn a_receiver_busy_hashing_is_called_out() {
        let receiver = FileSide { net_s: 0.03, disk_s: 0.05, hash_s: 1.2, ..FileSide::default() };
        let f = file_summary(1, true, None, Some(receiver));
        assert!(
            f.notes.iter().any(|n| n.contains("SHA-256 verification limits this transfer")),
            "{:?}",
            f.notes
        );
        let quick = FileSide { net_s: 0.5, disk_s: 0.1, hash_s: 0.2, ..FileSide::default() };
        assert!(!file_summary(1, true, None, Some(quick)).notes.iter().any(|n| n.contains("hashing")));
    }

    #[test]
    fn loopback_copies_are_called_out() {
        let zc = figures::ZeroCopyCounts { sends: 4, completed: 4, copied: 4 };
        let sender = FileSide { zerocopy: Some(zc), ..FileSide::default() };
        let f = file_summary(1, true, Some(sender), None);
        assert_eq!(f.zero_copied_frac, Some(0.0));
        assert!(f.notes.iter().any(|n| n.contains("loopback")));
    }
}
