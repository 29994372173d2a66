//! `tcplab model …`: computes with the `model` crate and prints with `report::model`.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use model::loss::{self, LossPath, MathisConstant, Padhye};
use model::{goodput, window, BitRate, Link, Stack, Transport};
use report::model as render;
use serde::Serialize;

use crate::args::model::{
    BdpArgs, CurveArgs, GoodputArgs, LinkStack, LossArgs, ModelArgs, ModelCommand, ModelOutput, WindowArgs,
};
use crate::output::emit;
use crate::parse;

/// Runs one `tcplab model` subcommand.
pub fn run(a: &ModelArgs) -> Result<ExitCode> {
    match &a.what {
        ModelCommand::Goodput(g) => goodput_cmd(g),
        ModelCommand::Curve(c) => curve_cmd(c),
        ModelCommand::Window(w) => window_cmd(w),
        ModelCommand::Bdp(b) => bdp_cmd(b),
        ModelCommand::Loss(l) => loss_cmd(l),
    }?;
    Ok(ExitCode::SUCCESS)
}

/// Parses a link spec, naming the flag in the error.
pub fn link(spec: &str) -> Result<Link> {
    spec.parse::<Link>().map_err(|e| anyhow!("--link: {e}"))
}

/// Parses a stack spec, naming the flag in the error.
pub fn stack(spec: &str, flag: &str) -> Result<Stack> {
    spec.parse::<Stack>().map_err(|e| anyhow!("{flag}: {e}"))
}

fn path(p: &LinkStack) -> Result<(Link, Stack)> {
    Ok((link(&p.link)?, stack(&p.stack, "--stack")?))
}

fn flag<T>(name: &str, r: std::result::Result<T, String>) -> Result<T> {
    r.map_err(|e| anyhow!("{name}: {e}"))
}

fn rate(name: &str, text: &str) -> Result<BitRate> {
    BitRate::parse(text).map_err(|e| anyhow!("{name}: {e}"))
}

/// Prints `value` as JSON, CSV or text.
fn print<T: Serialize>(
    o: &ModelOutput,
    value: &T,
    csv: impl FnOnce() -> String,
    text: impl FnOnce() -> String,
) {
    let out = if o.json {
        render::json(value)
    } else if o.csv {
        csv()
    } else {
        text()
    };
    emit(out.trim_end());
}

#[derive(Serialize)]
struct GoodputDoc<'a> {
    link: String,
    stack: String,
    goodput: &'a goodput::Goodput,
    acks: Option<&'a goodput::AckLoad>,
}

fn goodput_cmd(a: &GoodputArgs) -> Result<()> {
    let (link, stack) = path(&a.path)?;
    let g = match &a.size {
        Some(s) => goodput::message_goodput(&link, &stack, flag("--size", parse::size_u64(s))?),
        None => goodput::max_goodput(&link, &stack),
    }
    .context("computing the goodput")?;
    let ack = match stack.transport {
        Transport::Tcp { .. } => {
            Some(goodput::ack_load(&link, &stack, a.segments_per_ack).context("--segments-per-ack")?)
        }
        Transport::Udp => None,
    };
    let doc =
        GoodputDoc { link: link.to_string(), stack: stack.to_string(), goodput: &g, acks: ack.as_ref() };
    print(
        &a.output,
        &doc,
        || render::goodput_csv(&g),
        || render::goodput_text(&link, &stack, &g, ack.as_ref()),
    );
    Ok(())
}

#[derive(Serialize)]
struct CurveDoc<'a> {
    link: String,
    stack: String,
    points: &'a [goodput::CurvePoint],
}

fn curve_cmd(a: &CurveArgs) -> Result<()> {
    let (link, stack) = path(&a.path)?;
    let sizes = flag("--sizes", parse::size_list(&a.sizes))?;
    let points = goodput::curve(&link, &stack, &sizes).context("computing the curve")?;
    let doc = CurveDoc { link: link.to_string(), stack: stack.to_string(), points: &points };
    print(&a.output, &doc, || render::curve_csv(&points), || render::curve_text(&link, &stack, &points));
    Ok(())
}

fn window_cmd(a: &WindowArgs) -> Result<()> {
    let bytes = flag("--window", parse::size_u64(&a.window))?;
    let rtt = flag("--rtt", parse::duration(&a.rtt))?;
    let cap = match &a.link {
        Some(spec) => Some(goodput::max_goodput(&link(spec)?, &stack(&a.stack, "--stack")?)?.goodput_bps),
        None => None,
    };
    let w = window::window_limit(bytes, rtt, cap).context("--window")?;
    let pairs = render::window_pairs(&w);
    print(&a.output, &w, || render::pairs_csv(&pairs), || render::window_text(&w));
    Ok(())
}

fn bdp_cmd(a: &BdpArgs) -> Result<()> {
    let rtt = flag("--rtt", parse::duration(&a.rtt))?;
    let (rate_bps, link_mss) = match (&a.rate, &a.link) {
        (Some(r), _) => (rate("--rate", r)?.bps_f64(), None),
        (None, Some(spec)) => {
            let (l, s) = (link(spec)?, stack(&a.stack, "--stack")?);
            (goodput::max_goodput(&l, &s)?.goodput_bps, Some(s.max_payload_bytes(l.mtu_bytes())?))
        }
        (None, None) => return Err(anyhow!("give --rate or --link")),
    };
    let mss = match &a.mss {
        Some(m) => flag("--mss", parse::size_u64(m))?,
        None => link_mss.unwrap_or(1448),
    };
    let b = window::bdp(rate_bps, rtt, mss).context("computing the BDP")?;
    let pairs = render::bdp_pairs(&b);
    print(&a.output, &b, || render::pairs_csv(&pairs), || render::bdp_text(&b));
    Ok(())
}

#[derive(Serialize)]
struct LossDoc<'a> {
    models: &'a loss::Comparison,
    target_bps: Option<f64>,
    budget: Option<&'a loss::LossBudget>,
}

fn loss_cmd(a: &LossArgs) -> Result<()> {
    let mss = flag("--mss", parse::size_u64(&a.mss))?;
    let rtt = flag("--rtt", parse::duration(&a.rtt))?;
    let rto = flag("--rto", parse::duration(&a.rto))?;
    let p: f64 = a
        .loss
        .trim()
        .parse()
        .map_err(|_| anyhow!("--loss: '{}' is not a probability (e.g. 1e-4)", a.loss))?;
    let max_window_bytes = a.window.as_deref().map(|w| flag("--window", parse::size_u64(w))).transpose()?;
    let padhye = Padhye { segments_per_ack: a.segments_per_ack, rto_ns: nanos(rto), max_window_bytes };
    let c = loss::compare(&LossPath::new(mss, rtt, p), padhye).context("--loss/--mss/--rtt")?;
    let target = a.target.as_deref().map(|t| rate("--target", t)).transpose()?.map(BitRate::bps_f64);
    let budget = target
        .map(|t| loss::mathis_loss_budget(mss, rtt, t, MathisConstant::AckEverySegment))
        .transpose()
        .context("--target")?;
    let doc = LossDoc { models: &c, target_bps: target, budget: budget.as_ref() };
    let pairs = render::loss_pairs(&c, budget.as_ref());
    let with_target = target.zip(budget.as_ref());
    print(&a.output, &doc, || render::pairs_csv(&pairs), || render::loss_text(&c, with_target));
    Ok(())
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
