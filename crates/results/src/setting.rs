//! Every setting of a [`TestSpec`], named once: its id (the spec field, snake_case, as a
//! server's rejection names it), the other names a sweep accepts, the flag that sets it, its
//! label in reports, the kind of value it takes, and how to read it from a spec and write it
//! into one. Sweeps, the server's checks, the registry's sweepable parameters and the reports'
//! grids all name settings through this table.
//!
//! A few entries are combined settings (`len`, `window`, `size`): one value written into
//! several fields at once, as `-l`, `-w` and `-r` do. Their [`Setting::parts`] list those
//! fields.

use crate::spec::{Direction, TestKind, TestSpec};
use crate::sweep::ParamValue;

mod kind;
pub use kind::{Limit, ValueKind};
use TestKind::{File, SegmentCost, TcpCrr, TcpRr, TcpStream, UdpRr, UdpStream};

/// The TCP types that set TCP socket options.
const TCP: &[TestKind] = &[TcpStream, TcpRr, TcpCrr, File, SegmentCost];
/// The types that run for a time with parallel streams and interval reports.
const TIMED: &[TestKind] = &[TcpStream, TcpRr, TcpCrr, UdpStream, UdpRr];
/// The request/response types.
const RR: &[TestKind] = &[TcpRr, TcpCrr, UdpRr];
/// The UDP types.
const UDP: &[TestKind] = &[UdpStream, UdpRr];
/// `sweep` and `mesh` have no flag for it (a sweep sets it with `--vary` only).
const NO_SHAPE_FLAG: &[(&str, &str)] = &[("sweep", ""), ("mesh", "")];

/// One setting of a test.
#[derive(Debug)]
pub struct Setting {
    /// The spec field's name (`send_len`), or a combined setting's name (`len`).
    pub id: &'static str,
    /// Other names a sweep accepts (`send-len`, `l`), including the names stored sweep plans
    /// used before the ids (`request`, `time`, `rate`).
    pub aliases: &'static [&'static str],
    /// The command-line flag that sets it, for help and error messages (`-l/--len`).
    pub flag: &'static str,
    /// Its flag on the commands where that is not [`Setting::flag`]: `(command, flag)`, an
    /// empty flag for a command that sets it without a flag (errors then name its label). A
    /// test walks clap's commands: every flag named here exists on its command.
    pub flag_on: &'static [(&'static str, &'static str)],
    /// The test types that take it (a sweep may vary it for them; a server refuses the
    /// optional ones elsewhere). Empty for a combined setting: its parts say.
    pub types: &'static [TestKind],
    /// The range a server accepts for it, checked by `engine::limits` for every setting
    /// that has one; `None` for settings without a range or checked with other settings
    /// (times, the byte limit: `engine::limits::check_timing`; a type's own options).
    pub limit: Option<Limit>,
    /// Its name in reports (`write size`, `server rcvbuf`).
    pub label: &'static str,
    /// The kind of value it takes.
    pub kind: ValueKind,
    /// For a combined setting, the ids of the fields it sets; empty for a spec field.
    pub parts: &'static [&'static str],
    /// For a test type's own setting, its name in [`TestSpec::options`] (`window-clamp`);
    /// `None` for a spec field.
    pub option: Option<&'static str>,
    /// Its value in a spec; `None` when unset (the OS or test type default), and for a
    /// combined setting when its parts differ.
    pub get: fn(&TestSpec) -> Option<ParamValue>,
    /// Writes a value into a spec; an error says why the value does not fit.
    pub set: fn(&mut TestSpec, &ParamValue) -> Result<(), String>,
}

impl Setting {
    /// Whether this setting writes several fields at once.
    pub fn is_combined(&self) -> bool {
        !self.parts.is_empty()
    }

    /// The ids of the spec fields it writes: its parts, or its own id.
    pub fn fields(&self) -> &[&'static str] {
        if self.parts.is_empty() {
            std::slice::from_ref(&self.id)
        } else {
            self.parts
        }
    }

    /// Its flag on `command`, `None` when that command has none for it.
    pub fn flag_for(&self, command: &str) -> Option<&'static str> {
        let flag = self.flag_on.iter().find(|(c, _)| *c == command).map_or(self.flag, |(_, f)| *f);
        (!flag.is_empty()).then_some(flag)
    }

    /// Whether a test of `kind` takes it: it, or for a combined setting one of its parts.
    pub fn is_taken_by(&self, kind: TestKind) -> bool {
        self.fields().iter().filter_map(|f| by_id(f)).any(|s| s.types.contains(&kind))
    }

    /// Its name in a `setup` request on the wire (protocol 2): a spec field's id; `None` for
    /// a combined setting (its parts travel) and a test type's own one (it travels in
    /// `options`, by [`Setting::option`]).
    pub fn wire_name(&self) -> Option<&'static str> {
        (!self.is_combined() && self.option.is_none()).then_some(self.id)
    }

    /// Whether `name` is its id or one of its aliases.
    pub fn is_named(&self, name: &str) -> bool {
        self.id == name || self.aliases.contains(&name)
    }
}

/// The setting stored as option `name` of [`TestSpec::options`], if one is.
pub fn of_option(name: &str) -> Option<&'static Setting> {
    ALL.iter().copied().find(|s| s.option == Some(name))
}

/// The setting whose id or alias is `name`.
pub fn find(name: &str) -> Option<&'static Setting> {
    ALL.iter().copied().find(|s| s.is_named(name))
}

/// The ids of the spec fields a test of `kind` takes, in the table's order: the registry's
/// sweep parameters.
pub fn taken_by(kind: TestKind) -> Vec<&'static str> {
    ALL.iter().filter(|s| !s.is_combined() && s.types.contains(&kind)).map(|s| s.id).collect()
}

/// The settings a `setup` request carries, with their wire names, in the table's order.
pub fn on_wire() -> impl Iterator<Item = (&'static str, &'static Setting)> {
    ALL.iter().filter_map(|s| Some((s.wire_name()?, *s)))
}

/// The setting whose id is `id` (aliases not accepted).
pub fn by_id(id: &str) -> Option<&'static Setting> {
    ALL.iter().copied().find(|s| s.id == id)
}

fn int(v: &ParamValue) -> Result<u64, String> {
    match v {
        ParamValue::Int(n) => Ok(*n),
        other => Err(format!("'{other}' is not a number")),
    }
}

fn int32(v: &ParamValue) -> Result<u32, String> {
    let n = int(v)?;
    u32::try_from(n).map_err(|_| format!("{n} is too large (at most {})", u32::MAX))
}

fn flag(v: &ParamValue) -> Result<bool, String> {
    match v {
        ParamValue::Bool(b) => Ok(*b),
        other => Err(format!("'{other}' is not true or false")),
    }
}

fn text(v: &ParamValue) -> Result<String, String> {
    match v {
        ParamValue::Text(s) => Ok(s.clone()),
        other => Err(format!("'{other}' is not a name")),
    }
}

/// A direction by name: `forward`, `reverse`, `bidir`.
pub fn direction(name: &str) -> Result<Direction, String> {
    match name {
        "forward" => Ok(Direction::Forward),
        "reverse" => Ok(Direction::Reverse),
        "bidir" => Ok(Direction::Bidir),
        other => Err(format!("direction '{other}' must be forward, reverse or bidir")),
    }
}

fn direction_name(d: Direction) -> &'static str {
    match d {
        Direction::Forward => "forward",
        Direction::Reverse => "reverse",
        Direction::Bidir => "bidir",
    }
}

fn n32(v: u32) -> Option<ParamValue> {
    Some(ParamValue::Int(u64::from(v)))
}

fn opt32(v: Option<u32>) -> Option<ParamValue> {
    v.map(|v| ParamValue::Int(u64::from(v)))
}

/// The value all of `parts` share, if they do.
fn same(parts: &[Option<ParamValue>]) -> Option<ParamValue> {
    let first = parts.first()?.clone();
    parts.iter().all(|p| *p == first).then_some(first).flatten()
}

/// A combined setting's value: the one its `parts` (setting ids) share in `spec`, if they do.
fn parts_value(s: &TestSpec, parts: &[&str]) -> Option<ParamValue> {
    same(&parts.iter().map(|p| by_id(p).and_then(|p| (p.get)(s))).collect::<Vec<_>>())
}

/// Writes a combined setting: `v` into each of its `parts`, as each part's own entry does.
fn set_parts(s: &mut TestSpec, parts: &[&str], v: &ParamValue) -> Result<(), String> {
    parts.iter().try_for_each(|p| match by_id(p) {
        Some(part) => (part.set)(s, v),
        None => Err(format!("'{p}' is not a setting")),
    })
}

/// Bytes per write (`-l`).
pub static SEND_LEN: Setting = Setting {
    id: "send_len",
    aliases: &["send-len"],
    flag: "-l/--len",
    flag_on: &[],
    types: &[TcpStream, UdpStream, File],
    limit: Some(Limit::Message),
    label: "write size",
    kind: ValueKind::Bytes,
    parts: &[],
    option: None,
    get: |s| n32(s.send_len),
    set: |s, v| {
        s.send_len = int32(v)?;
        Ok(())
    },
};

/// Bytes per read.
pub static RECV_LEN: Setting = Setting {
    id: "recv_len",
    aliases: &["recv-len"],
    flag: "--recv-len",
    flag_on: NO_SHAPE_FLAG,
    types: &[TcpStream, File],
    limit: Some(Limit::Message),
    label: "read size",
    kind: ValueKind::Bytes,
    parts: &[],
    option: None,
    get: |s| n32(s.recv_len),
    set: |s, v| {
        s.recv_len = int32(v)?;
        Ok(())
    },
};

/// Request size (rr, crr, udp-rr).
pub static REQUEST_LEN: Setting = Setting {
    id: "request_len",
    aliases: &["request", "req", "request-len"],
    flag: "-r/--size",
    flag_on: &[],
    types: RR,
    limit: Some(Limit::Message),
    label: "request",
    kind: ValueKind::Bytes,
    parts: &[],
    option: None,
    get: |s| n32(s.request_len),
    set: |s, v| {
        s.request_len = int32(v)?;
        Ok(())
    },
};

/// Response size (rr, crr, udp-rr).
pub static RESPONSE_LEN: Setting = Setting {
    id: "response_len",
    aliases: &["response", "resp", "response-len"],
    flag: "-r/--size",
    flag_on: &[],
    types: RR,
    limit: Some(Limit::Message),
    label: "response",
    kind: ValueKind::Bytes,
    parts: &[],
    option: None,
    get: |s| n32(s.response_len),
    set: |s, v| {
        s.response_len = int32(v)?;
        Ok(())
    },
};

/// SO_SNDBUF on the client's data sockets.
pub static SNDBUF: Setting = Setting {
    id: "sndbuf",
    aliases: &[],
    flag: "--sndbuf",
    flag_on: &[],
    types: &TestKind::ALL,
    limit: Some(Limit::Buffer),
    label: "sndbuf",
    kind: ValueKind::Bytes,
    parts: &[],
    option: None,
    get: |s| opt32(s.sndbuf),
    set: |s, v| {
        s.sndbuf = Some(int32(v)?);
        Ok(())
    },
};

/// SO_RCVBUF on the client's data sockets.
pub static RCVBUF: Setting = Setting {
    id: "rcvbuf",
    aliases: &[],
    flag: "--rcvbuf",
    flag_on: &[],
    types: &TestKind::ALL,
    limit: Some(Limit::Buffer),
    label: "rcvbuf",
    kind: ValueKind::Bytes,
    parts: &[],
    option: None,
    get: |s| opt32(s.rcvbuf),
    set: |s, v| {
        s.rcvbuf = Some(int32(v)?);
        Ok(())
    },
};

/// SO_SNDBUF on the server's data sockets.
pub static REMOTE_SNDBUF: Setting = Setting {
    id: "remote_sndbuf",
    aliases: &["remote-sndbuf"],
    flag: "--remote-sndbuf",
    flag_on: &[],
    types: &TestKind::ALL,
    limit: Some(Limit::Buffer),
    label: "server sndbuf",
    kind: ValueKind::Bytes,
    parts: &[],
    option: None,
    get: |s| opt32(s.remote_sndbuf),
    set: |s, v| {
        s.remote_sndbuf = Some(int32(v)?);
        Ok(())
    },
};

/// SO_RCVBUF on the server's data sockets.
pub static REMOTE_RCVBUF: Setting = Setting {
    id: "remote_rcvbuf",
    aliases: &["remote-rcvbuf"],
    flag: "--remote-rcvbuf",
    flag_on: &[],
    types: &TestKind::ALL,
    limit: Some(Limit::Buffer),
    label: "server rcvbuf",
    kind: ValueKind::Bytes,
    parts: &[],
    option: None,
    get: |s| opt32(s.remote_rcvbuf),
    set: |s, v| {
        s.remote_rcvbuf = Some(int32(v)?);
        Ok(())
    },
};

/// TCP_MAXSEG.
pub static MSS: Setting = Setting {
    id: "mss",
    aliases: &["M"],
    flag: "-M/--mss",
    flag_on: &[],
    types: TCP,
    limit: Some(Limit::Range(88, 65_535)),
    label: "mss",
    kind: ValueKind::Bytes,
    parts: &[],
    option: None,
    get: |s| opt32(s.mss),
    set: |s, v| {
        s.mss = Some(int32(v)?);
        Ok(())
    },
};

/// Streams or flows per direction.
pub static PARALLEL: Setting = Setting {
    id: "parallel",
    aliases: &["P"],
    flag: "-P/--parallel",
    flag_on: &[],
    types: TIMED,
    limit: Some(Limit::Parallel),
    label: "streams",
    kind: ValueKind::Count,
    parts: &[],
    option: None,
    get: |s| n32(s.parallel),
    set: |s, v| {
        s.parallel = int32(v)?;
        Ok(())
    },
};

/// Transactions in flight (rr, udp-rr); datagrams per pacing step (udp).
pub static BURST: Setting = Setting {
    id: "burst",
    aliases: &[],
    flag: "--burst",
    flag_on: &[],
    types: &[TcpRr, UdpStream, UdpRr],
    limit: Some(Limit::Burst),
    label: "burst",
    kind: ValueKind::Count,
    parts: &[],
    option: None,
    get: |s| n32(s.burst),
    set: |s, v| {
        s.burst = int32(v)?;
        Ok(())
    },
};

/// TCP_NODELAY.
pub static NODELAY: Setting = Setting {
    id: "nodelay",
    aliases: &["N"],
    flag: "-N/--nodelay",
    flag_on: &[],
    types: &[TcpStream, TcpRr, TcpCrr, File],
    limit: None,
    label: "nodelay",
    kind: ValueKind::Bool,
    parts: &[],
    option: None,
    get: |s| Some(ParamValue::Bool(s.nodelay)),
    set: |s, v| {
        s.nodelay = flag(v)?;
        Ok(())
    },
};

/// Congestion control on both ends.
pub static CONGESTION: Setting = Setting {
    id: "congestion",
    aliases: &["C"],
    flag: "-C/--congestion",
    flag_on: &[],
    types: TCP,
    limit: None,
    label: "congestion",
    kind: ValueKind::Text,
    parts: &[],
    option: None,
    get: |s| s.congestion.clone().map(ParamValue::Text),
    set: |s, v| {
        s.congestion = Some(text(v)?);
        Ok(())
    },
};

/// Target rate per sending stream, bit/s (UDP, and TCP streams paced with `-b`).
pub static RATE_BPS: Setting = Setting {
    id: "rate_bps",
    aliases: &["rate", "b"],
    flag: "-b/--rate",
    flag_on: &[],
    types: &[TcpStream, UdpStream],
    limit: None,
    label: "rate",
    kind: ValueKind::Rate,
    parts: &[],
    option: None,
    get: |s| Some(ParamValue::Int(s.rate_bps)),
    set: |s, v| {
        s.rate_bps = int(v)?;
        Ok(())
    },
};

/// Bytes to send per direction. Setting it makes the test byte-limited as `-n` does: the
/// time limit and the omitted time go to 0.
pub static BYTES_LIMIT: Setting = Setting {
    id: "bytes_limit",
    aliases: &["bytes", "n"],
    flag: "-n/--bytes",
    flag_on: &[("file", "--size"), ("sweep", ""), ("mesh", "")],
    types: &[TcpStream, UdpStream, File],
    limit: None,
    label: "bytes",
    kind: ValueKind::Bytes,
    parts: &[],
    option: None,
    get: |s| s.bytes_limit.map(ParamValue::Int),
    set: |s, v| {
        (s.bytes_limit, s.duration_ms, s.omit_ms) = (Some(int(v)?), 0, 0);
        Ok(())
    },
};

/// Time limit.
pub static DURATION_MS: Setting = Setting {
    id: "duration_ms",
    aliases: &["time", "t", "duration", "duration-ms"],
    flag: "-t/--time",
    flag_on: &[],
    types: &[TcpStream, TcpRr, TcpCrr, UdpStream, UdpRr, SegmentCost],
    limit: None,
    label: "duration",
    kind: ValueKind::Millis,
    parts: &[],
    option: None,
    get: |s| Some(ParamValue::Int(s.duration_ms)),
    set: |s, v| {
        s.duration_ms = int(v)?;
        Ok(())
    },
};

/// Interval report period.
pub static INTERVAL_MS: Setting = Setting {
    id: "interval_ms",
    aliases: &["interval", "i"],
    flag: "-i/--interval",
    flag_on: &[],
    types: TIMED,
    limit: None,
    label: "interval",
    kind: ValueKind::Millis,
    parts: &[],
    option: None,
    get: |s| Some(ParamValue::Int(s.interval_ms)),
    set: |s, v| {
        s.interval_ms = int(v)?;
        Ok(())
    },
};

/// Leading time left out of summaries.
pub static OMIT_MS: Setting = Setting {
    id: "omit_ms",
    aliases: &["omit", "O"],
    flag: "-O/--omit",
    flag_on: &[],
    types: TIMED,
    limit: None,
    label: "omitted",
    kind: ValueKind::Millis,
    parts: &[],
    option: None,
    get: |s| Some(ParamValue::Int(s.omit_ms)),
    set: |s, v| {
        s.omit_ms = int(v)?;
        Ok(())
    },
};

/// Which way the data flows.
pub static DIRECTION: Setting = Setting {
    id: "direction",
    aliases: &[],
    flag: "-R/--reverse, --bidir",
    flag_on: &[("file", "-R/--reverse"), ("mesh", "")],
    types: &[TcpStream, UdpStream, File],
    limit: None,
    label: "direction",
    kind: ValueKind::Direction,
    parts: &[],
    option: None,
    get: |s| Some(ParamValue::Text(direction_name(s.direction).into())),
    set: |s, v| {
        s.direction = direction(&text(v)?)?;
        Ok(())
    },
};

/// Spin on reads (rr).
pub static BUSY_POLL: Setting = Setting {
    id: "busy_poll",
    aliases: &["busy-poll"],
    flag: "--busy-poll",
    flag_on: NO_SHAPE_FLAG,
    types: &[TcpRr],
    limit: None,
    label: "busy poll",
    kind: ValueKind::Bool,
    parts: &[],
    option: None,
    get: |s| Some(ParamValue::Bool(s.busy_poll)),
    set: |s, v| {
        s.busy_poll = flag(v)?;
        Ok(())
    },
};

/// UDP without checksums.
pub static NO_CHECKSUM: Setting = Setting {
    id: "no_checksum",
    aliases: &["no-checksum"],
    flag: "--no-checksum",
    flag_on: NO_SHAPE_FLAG,
    types: UDP,
    limit: None,
    label: "no checksum",
    kind: ValueKind::Bool,
    parts: &[],
    option: None,
    get: |s| Some(ParamValue::Bool(s.no_checksum)),
    set: |s, v| {
        s.no_checksum = flag(v)?;
        Ok(())
    },
};

/// UDP without GSO/GRO and batches.
pub static NO_OFFLOAD: Setting = Setting {
    id: "no_offload",
    aliases: &["no-offload"],
    flag: "--no-offload",
    flag_on: NO_SHAPE_FLAG,
    types: UDP,
    limit: None,
    label: "no offload",
    kind: ValueKind::Bool,
    parts: &[],
    option: None,
    get: |s| Some(ParamValue::Bool(s.no_offload)),
    set: |s, v| {
        s.no_offload = flag(v)?;
        Ok(())
    },
};

/// CPU the client's workers are pinned to.
pub static CPU_LOCAL: Setting = Setting {
    id: "cpu_local",
    aliases: &["cpu-local"],
    flag: "-A/--affinity",
    flag_on: &[],
    types: &[],
    limit: Some(Limit::Range(0, 4095)),
    label: "client CPU",
    kind: ValueKind::Count,
    parts: &[],
    option: None,
    get: |s| opt32(s.cpu_local),
    set: |s, v| {
        s.cpu_local = Some(int32(v)?);
        Ok(())
    },
};

/// CPU the server's workers are pinned to.
pub static CPU_REMOTE: Setting = Setting {
    id: "cpu_remote",
    aliases: &["cpu-remote"],
    flag: "-A/--affinity",
    flag_on: &[],
    types: &[],
    limit: Some(Limit::Range(0, 4095)),
    label: "server CPU",
    kind: ValueKind::Count,
    parts: &[],
    option: None,
    get: |s| opt32(s.cpu_remote),
    set: |s, v| {
        s.cpu_remote = Some(int32(v)?);
        Ok(())
    },
};

/// An option's integer value in `spec`.
fn option_int(s: &TestSpec, name: &str) -> Option<ParamValue> {
    s.options.get(name).filter(|v| matches!(v, ParamValue::Int(_))).cloned()
}

/// Sets option `name` of `spec` to an integer value.
fn set_option_int(s: &mut TestSpec, name: &str, v: &ParamValue) -> Result<(), String> {
    let n = int(v)?;
    s.options.insert(name.into(), ParamValue::Int(n));
    Ok(())
}

/// The window a stream's receivers announce at most (TCP_WINDOW_CLAMP): the window exactly,
/// where SO_RCVBUF is doubled by Linux and grows with autotuning.
pub static WINDOW_CLAMP: Setting = Setting {
    id: "window_clamp",
    aliases: &["window-clamp"],
    flag: "--window-clamp",
    flag_on: NO_SHAPE_FLAG,
    types: &[TcpStream],
    limit: None,
    label: "window clamp",
    kind: ValueKind::Bytes,
    parts: &[],
    option: Some("window-clamp"),
    get: |s| option_int(s, "window-clamp"),
    set: |s, v| set_option_int(s, "window-clamp", v),
};

/// Multipath TCP (`IPPROTO_MPTCP`): a stream's connections are MPTCP, whose subflows may take
/// other paths; a connection that fell back to plain TCP is said in the result.
pub static MPTCP: Setting = Setting {
    id: "mptcp",
    aliases: &[],
    flag: "--mptcp",
    flag_on: NO_SHAPE_FLAG,
    types: &[TcpStream],
    limit: None,
    label: "MPTCP",
    kind: ValueKind::Bool,
    parts: &[],
    option: Some("mptcp"),
    get: |s| s.options.get("mptcp").filter(|v| matches!(v, ParamValue::Bool(true))).cloned(),
    set: |s, v| {
        if flag(v)? {
            s.options.insert("mptcp".into(), ParamValue::Bool(true));
        } else {
            s.options.remove("mptcp");
        }
        Ok(())
    },
};

/// The time a UDP receiver works per datagram it reads, µs (a slow receiving host).
pub static RECV_DELAY_US: Setting = Setting {
    id: "recv_delay_us",
    aliases: &["recv-delay-us", "recv-delay"],
    flag: "--recv-delay",
    flag_on: NO_SHAPE_FLAG,
    types: &[UdpStream],
    limit: None,
    label: "receiver µs per datagram",
    kind: ValueKind::Count,
    parts: &[],
    option: Some("recv-delay-us"),
    get: |s| option_int(s, "recv-delay-us"),
    set: |s, v| set_option_int(s, "recv-delay-us", v),
};

/// Write and read size together, as `-l` sets them.
pub static LEN: Setting = Setting {
    id: "len",
    aliases: &["l"],
    flag: "-l/--len",
    flag_on: &[],
    types: &[],
    limit: None,
    label: "write size",
    kind: ValueKind::Bytes,
    parts: &["send_len", "recv_len"],
    option: None,
    get: |s| parts_value(s, LEN.parts),
    set: |s, v| set_parts(s, LEN.parts, v),
};

/// All four socket buffers, as `-w` sets them.
pub static WINDOW: Setting = Setting {
    id: "window",
    aliases: &["w"],
    flag: "-w/--window",
    flag_on: &[],
    types: &[],
    limit: None,
    label: "window",
    kind: ValueKind::Bytes,
    parts: &["sndbuf", "rcvbuf", "remote_sndbuf", "remote_rcvbuf"],
    option: None,
    get: |s| parts_value(s, WINDOW.parts),
    set: |s, v| set_parts(s, WINDOW.parts, v),
};

/// Request and response size together, as `-r N` sets them.
pub static SIZE: Setting = Setting {
    id: "size",
    aliases: &[],
    flag: "-r/--size",
    flag_on: &[],
    types: &[],
    limit: None,
    label: "request=response",
    kind: ValueKind::Bytes,
    parts: &["request_len", "response_len"],
    option: None,
    get: |s| parts_value(s, SIZE.parts),
    set: |s, v| set_parts(s, SIZE.parts, v),
};

/// The table: spec fields first (sizes first, the order reports list them in), then the
/// test types' own settings (kept in [`TestSpec::options`]), then the combined settings.
pub static ALL: &[&Setting] = &[
    &SEND_LEN,
    &RECV_LEN,
    &REQUEST_LEN,
    &RESPONSE_LEN,
    &SNDBUF,
    &RCVBUF,
    &REMOTE_SNDBUF,
    &REMOTE_RCVBUF,
    &MSS,
    &PARALLEL,
    &BURST,
    &NODELAY,
    &CONGESTION,
    &RATE_BPS,
    &BYTES_LIMIT,
    &DURATION_MS,
    &INTERVAL_MS,
    &OMIT_MS,
    &DIRECTION,
    &BUSY_POLL,
    &NO_CHECKSUM,
    &NO_OFFLOAD,
    &CPU_LOCAL,
    &CPU_REMOTE,
    &WINDOW_CLAMP,
    &MPTCP,
    &RECV_DELAY_US,
    &LEN,
    &WINDOW,
    &SIZE,
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The spec's fields as JSON, keyed by name.
    fn fields(spec: &TestSpec) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(spec) {
            Ok(serde_json::Value::Object(m)) => m,
            other => panic!("a spec serializes to an object, not {other:?}"),
        }
    }

    /// The fields whose values differ between `a` and `b`.
    fn changed(a: &TestSpec, b: &TestSpec) -> BTreeSet<String> {
        let (fa, fb) = (fields(a), fields(b));
        fa.keys().chain(fb.keys()).filter(|k| fa.get(*k) != fb.get(*k)).cloned().collect()
    }

    /// A value of `kind` that differs from every default of [`TestSpec::new`].
    fn sample(kind: ValueKind) -> ParamValue {
        match kind {
            ValueKind::Bytes => ParamValue::Int(4096),
            ValueKind::Count => ParamValue::Int(3),
            ValueKind::Millis => ParamValue::Int(2500),
            ValueKind::Bool => ParamValue::Bool(true),
            ValueKind::Text => ParamValue::Text("reno".into()),
            ValueKind::Rate => ParamValue::Int(5_000_000),
            ValueKind::Direction => ParamValue::Text("reverse".into()),
        }
    }

    #[test]
    fn every_spec_field_but_the_test_type_is_a_setting_and_no_other() {
        let spec_fields: BTreeSet<String> =
            fields(&TestSpec::new(TestKind::TcpStream)).keys().cloned().collect();
        let ids: BTreeSet<String> =
            ALL.iter().filter(|s| !s.is_combined() && s.option.is_none()).map(|s| s.id.to_string()).collect();
        let mut expected = spec_fields;
        expected.remove("test");
        expected.remove("options");
        assert_eq!(ids, expected);
    }

    #[test]
    fn every_name_means_one_setting() {
        let mut seen = BTreeSet::new();
        for s in ALL {
            for name in std::iter::once(&s.id).chain(s.aliases) {
                assert!(seen.insert(*name), "'{name}' names two settings");
                assert_eq!(find(name).map(|f| f.id), Some(s.id));
            }
            assert!(!s.label.is_empty() && s.flag.starts_with('-'), "{}", s.id);
        }
        assert!(find("colour").is_none() && by_id("len").is_some() && by_id("l").is_none());
    }

    #[test]
    fn a_combined_setting_is_made_of_fields_of_its_kind() {
        for s in ALL.iter().filter(|s| s.is_combined()) {
            for part in s.parts {
                let p = by_id(part).unwrap_or_else(|| panic!("{}: part '{part}' is not an id", s.id));
                assert!(!p.is_combined() && p.kind == s.kind, "{}: {part}", s.id);
            }
        }
        assert_eq!(LEN.fields(), &["send_len", "recv_len"]);
        assert_eq!(MSS.fields(), &["mss"]);
    }

    #[test]
    fn a_setter_writes_its_own_fields_and_the_getter_reads_them_back() {
        for s in ALL {
            let mut before = TestSpec::new(TestKind::TcpStream);
            before.omit_ms = 500;
            let mut after = before.clone();
            let v = sample(s.kind);
            (s.set)(&mut after, &v).unwrap_or_else(|e| panic!("{}: {e}", s.id));
            assert_eq!((s.get)(&after), Some(v.clone()), "{}", s.id);
            let mut expected: BTreeSet<String> = s.fields().iter().map(|f| f.to_string()).collect();
            if s.option.is_some() {
                expected = BTreeSet::from(["options".to_string()]);
            }
            if s.id == "bytes_limit" {
                expected.extend(["duration_ms".to_string(), "omit_ms".to_string()]);
            }
            assert_eq!(changed(&before, &after), expected, "{}", s.id);
            for part in s.parts {
                let p = by_id(part).unwrap_or_else(|| panic!("{part}"));
                assert_eq!((p.get)(&after), Some(v.clone()), "{} sets {part}", s.id);
            }
        }
    }

    #[test]
    fn a_value_of_the_wrong_kind_or_size_is_refused() {
        let mut spec = TestSpec::new(TestKind::TcpStream);
        let text = ParamValue::Text("x".into());
        for s in ALL.iter().filter(|s| s.kind != ValueKind::Text && s.kind != ValueKind::Direction) {
            assert!((s.set)(&mut spec, &text).is_err(), "{}", s.id);
        }
        assert!((SEND_LEN.set)(&mut spec, &ParamValue::Int(1 << 32)).is_err());
        assert!((NODELAY.set)(&mut spec, &ParamValue::Int(1)).is_err());
        let up = (DIRECTION.set)(&mut spec, &ParamValue::Text("up".into()));
        assert!(up.is_err_and(|e| e.contains("forward, reverse or bidir")));
        assert_eq!(spec, TestSpec::new(TestKind::TcpStream), "a refused value changes nothing");
    }

    #[test]
    fn a_type_option_setting_reads_and_writes_its_option_only() {
        let mut spec = TestSpec::new(TestKind::TcpStream);
        assert_eq!((WINDOW_CLAMP.get)(&spec), None, "unset");
        (WINDOW_CLAMP.set)(&mut spec, &ParamValue::Int(4096)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spec.options.get("window-clamp"), Some(&ParamValue::Int(4096)));
        assert_eq!(of_option("recv-delay-us").map(|s| s.id), Some("recv_delay_us"));
        assert_eq!(find("window-clamp").map(|s| s.id), Some("window_clamp"));
        assert!(of_option("zerocopy").is_none());
    }

    /// MPTCP is a stream option: on when set, absent (not `false`) otherwise, so that a
    /// plain stream's settings read as before.
    #[test]
    fn mptcp_is_a_stream_option_present_only_when_on() {
        let mut spec = TestSpec::new(TcpStream);
        assert_eq!((MPTCP.get)(&spec), None);
        (MPTCP.set)(&mut spec, &ParamValue::Bool(true)).unwrap();
        assert_eq!((MPTCP.get)(&spec), Some(ParamValue::Bool(true)));
        assert_eq!(of_option("mptcp").map(|s| s.id), Some("mptcp"));
        (MPTCP.set)(&mut spec, &ParamValue::Bool(false)).unwrap();
        assert!(spec.options.is_empty() && (MPTCP.get)(&spec).is_none());
        assert!(MPTCP.is_taken_by(TcpStream) && !MPTCP.is_taken_by(UdpStream));
        assert!((MPTCP.set)(&mut spec, &ParamValue::Int(1)).is_err());
    }

    #[test]
    fn a_setting_has_a_flag_per_command_and_the_types_that_take_it() {
        assert_eq!(BYTES_LIMIT.flag_for("stream"), Some("-n/--bytes"));
        assert_eq!(BYTES_LIMIT.flag_for("file"), Some("--size"));
        assert_eq!(BYTES_LIMIT.flag_for("sweep"), None);
        assert!(RCVBUF.is_taken_by(TestKind::SegmentCost) && !BUSY_POLL.is_taken_by(TestKind::TcpStream));
        assert!(LEN.is_taken_by(TestKind::TcpStream) && !LEN.is_taken_by(TestKind::TcpRr), "by its parts");
        assert!(SIZE.is_taken_by(TestKind::UdpRr) && !WINDOW.types.iter().any(|_| true));
        for s in ALL.iter().filter(|s| s.limit.is_some()) {
            assert!(s.kind.is_numeric() && !s.is_combined() && s.option.is_none(), "{}", s.id);
        }
        assert_eq!(RCVBUF.limit, Some(Limit::Buffer));
        let rr = taken_by(TestKind::TcpRr);
        assert!(rr.contains(&"busy_poll") && !rr.contains(&"rate_bps") && !rr.contains(&"size"));
        for kind in TestKind::ALL {
            assert!(taken_by(kind).contains(&"rcvbuf"), "{kind:?}");
        }
    }

    #[test]
    fn values_are_written_as_their_flags_take_them() {
        let int = ParamValue::Int;
        assert_eq!(ValueKind::Bytes.write(&int(65_536)), "64K");
        assert_eq!(ValueKind::Bytes.write(&int(512 << 20)), "512M");
        assert_eq!(ValueKind::Bytes.write(&int(52_428)), "52428");
        assert_eq!(ValueKind::Bytes.write(&int(3 << 30)), "3G");
        assert_eq!(ValueKind::Rate.write(&int(100_000_000)), "100M");
        assert_eq!(ValueKind::Rate.write(&int(1_500_000)), "1500k");
        assert_eq!(ValueKind::Millis.write(&int(2_500)), "2.5 s");
        assert_eq!(ValueKind::Millis.write(&int(3_600_000)), "3600 s");
        assert_eq!(ValueKind::Millis.write(&int(1)), "0.001 s");
        assert_eq!(ValueKind::Millis.write(&int(u64::MAX)), "18446744073709551.615 s", "exact, no float");
        assert_eq!(ValueKind::Count.write(&int(0)), "0");
        assert_eq!(ValueKind::Bool.write(&ParamValue::Bool(true)), "true");
    }

    #[test]
    fn a_combined_setting_reads_nothing_when_its_parts_differ() {
        let mut spec = TestSpec::new(TestKind::TcpStream);
        spec.recv_len = 1;
        assert_eq!((LEN.get)(&spec), None);
        assert_eq!((WINDOW.get)(&spec), None, "unset buffers have no common value");
        spec.sndbuf = Some(8);
        assert_eq!((WINDOW.get)(&spec), None);
    }
}
