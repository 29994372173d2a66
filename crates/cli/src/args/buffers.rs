//! One flag per socket buffer and end, made from the settings table: each flag's name and id
//! are its setting's ([`results::Buffer::setting`]), so a buffer is spelled once, in
//! [`results::setting`].

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};
use results::{Buffer, End, Setting};

use crate::parse;

/// The buffer flags given, each with the setting it sets (client's first, send first).
#[derive(Debug, Clone, Default)]
pub struct BufferFlags {
    /// `(setting, bytes)` for each buffer flag on the command line.
    pub given: Vec<(&'static Setting, u32)>,
}

/// Each buffer of each end, with its setting.
fn buffers() -> impl Iterator<Item = (End, Buffer, &'static Setting)> {
    End::ALL.into_iter().flat_map(|e| Buffer::ALL.map(move |b| (e, b, b.setting(e))))
}

/// A buffer flag's help: whose socket option it sets, and whose buffer receives by default.
fn help(end: End, b: Buffer) -> &'static str {
    match (end, b) {
        (End::Client, Buffer::Send) => "Client SO_SNDBUF",
        (End::Client, Buffer::Receive) => "Client SO_RCVBUF (the receiver with -R)",
        (End::Server, Buffer::Send) => "Server SO_SNDBUF",
        (End::Server, Buffer::Receive) => "Server SO_RCVBUF (the receiver by default)",
    }
}

impl FromArgMatches for BufferFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let given = buffers().filter_map(|(_, _, s)| m.get_one::<u32>(s.id).map(|&v| (s, v))).collect();
        Ok(BufferFlags { given })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = BufferFlags::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for BufferFlags {
    fn augment_args(cmd: Command) -> Command {
        buffers().fold(cmd, |cmd, (end, b, s)| {
            cmd.arg(
                Arg::new(s.id)
                    .long(s.flag.trim_start_matches("--"))
                    .value_name("BYTES")
                    .value_parser(parse::buffer_size)
                    .help(help(end, b)),
            )
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        BufferFlags::augment_args(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser, Debug)]
    struct Probe {
        #[command(flatten)]
        flags: BufferFlags,
    }

    #[test]
    fn each_buffer_flag_is_its_settings_and_sets_it() {
        use clap::Parser;
        for (_, _, s) in buffers() {
            assert!(s.flag.starts_with("--") && !s.flag.contains(['/', ' ']), "{}: a long flag", s.flag);
            let p = Probe::try_parse_from(["probe", s.flag, "8K"]).unwrap_or_else(|e| panic!("{e}"));
            let given: Vec<(&str, u32)> = p.flags.given.iter().map(|(s, v)| (s.id, *v)).collect();
            assert_eq!(given, vec![(s.id, 8192)], "{}", s.flag);
        }
        assert!(Probe::try_parse_from(["probe", "--sndbuf", "1G"])
            .is_err_and(|e| e.to_string().contains("at most 512M")));
        assert_eq!(Probe::try_parse_from(["probe"]).map(|p| p.flags.given.len()).ok(), Some(0));
    }
}
