//! The test commands, one per registered test type: their arguments, and what every command
//! hands the run pipeline (its client and path flags, its validated spec, its reference).
//! A new test type adds its variant and arms here and its arguments in a module of its own.

pub mod copy;
pub mod file;
pub mod segment_cost;

use anyhow::Result;
use clap::Subcommand;
use engine::registry;
use results::{Reference, TestKind, TestSpec};

use super::emu::PathArgs;
use super::udp::{UdpArgs, UdpRrArgs};
use super::{ClientArgs, CrrArgs, RrArgs, StreamArgs};
use crate::{settings, udp_settings};

/// A test command; each one's help is its test type's line in the registry.
#[derive(Debug, Subcommand)]
pub enum TestCommand {
    #[command(about = registry::of(TestKind::TcpStream).about())]
    Stream(StreamArgs),
    #[command(about = registry::of(TestKind::TcpRr).about())]
    Rr(RrArgs),
    #[command(about = registry::of(TestKind::TcpCrr).about())]
    Crr(CrrArgs),
    #[command(about = registry::of(TestKind::UdpStream).about())]
    Udp(UdpArgs),
    #[command(about = registry::of(TestKind::UdpRr).about())]
    UdpRr(UdpRrArgs),
    #[command(about = registry::of(TestKind::File).about())]
    File(file::FileArgs),
    #[command(about = registry::of(TestKind::SegmentCost).about())]
    SegmentCost(segment_cost::SegmentCostArgs),
}

impl TestCommand {
    /// Where the server is, how results are shown and kept.
    pub fn client(&self) -> &ClientArgs {
        match self {
            TestCommand::Stream(a) => &a.client,
            TestCommand::Rr(a) => &a.client,
            TestCommand::Crr(a) => &a.client,
            TestCommand::Udp(a) => &a.client,
            TestCommand::UdpRr(a) => &a.client,
            TestCommand::File(a) => &a.client,
            TestCommand::SegmentCost(a) => &a.client,
        }
    }

    /// The emulated path, if any.
    pub fn path(&self) -> &PathArgs {
        match self {
            TestCommand::Stream(a) => &a.path,
            TestCommand::Rr(a) => &a.path,
            TestCommand::Crr(a) => &a.path,
            TestCommand::Udp(a) => &a.path,
            TestCommand::UdpRr(a) => &a.path,
            TestCommand::File(a) => &a.path,
            TestCommand::SegmentCost(a) => &a.path,
        }
    }

    /// The validated spec of the test.
    pub fn spec(&self) -> Result<TestSpec> {
        match self {
            TestCommand::Stream(a) => settings::stream_spec(a),
            TestCommand::Rr(a) => settings::rr_spec(a),
            TestCommand::Crr(a) => settings::crr_spec(a),
            TestCommand::Udp(a) => udp_settings::udp_spec(a),
            TestCommand::UdpRr(a) => udp_settings::udp_rr_spec(a),
            TestCommand::File(a) => file::file_spec(a),
            TestCommand::SegmentCost(a) => segment_cost::segment_cost_spec(a),
        }
    }

    /// What its throughput is compared with (`--link`), for the test types that take one.
    pub fn reference(&self) -> Result<Option<Reference>> {
        match self {
            TestCommand::Stream(a) => settings::link_reference(&a.link, TestKind::TcpStream),
            TestCommand::Udp(a) => settings::link_reference(&a.link, TestKind::UdpStream),
            TestCommand::Rr(_)
            | TestCommand::Crr(_)
            | TestCommand::UdpRr(_)
            | TestCommand::File(_)
            | TestCommand::SegmentCost(_) => Ok(None),
        }
    }
}
