//! Known answers from theory.md §4 (window, BDP), §5 (loss) and §6.1 (CUBIC).
#![allow(clippy::expect_used, reason = "in tests a panic is the failure report")]

mod common;

use std::time::Duration;

use common::assert_printed;
use model::cubic;
use model::loss::{self, LossPath, MathisConstant, Padhye};
use model::window::{self, Bound};

const RTT_170: Duration = Duration::from_millis(170);
const RTT_1: Duration = Duration::from_millis(1);

#[test]
fn bdp_1g_170ms() {
    let bdp = window::bdp(1e9, RTT_170, 1448).expect("computable");
    assert_printed(bdp.bdp_bytes / 1e6, "21.25");
    assert_eq!(bdp.bdp_segments.floor(), 14_675.0);
    assert_eq!(bdp.min_window_scale, Some(9));
    // theory.md prints 33.5 MB for 65,535 × 2⁹ = 33,553,920 bytes.
    let scaled = (window::MAX_UNSCALED_WINDOW_BYTES << 9) as f64 / 1e6;
    assert!((scaled - 33.5).abs() < 0.1, "{scaled}");
}

#[test]
fn window_limits_at_170ms() {
    let limit = |w| window::window_limit(w, RTT_170, None).expect("computable");
    assert_printed(limit(65_535).limit_bps / 1e6, "3.08");
    assert_printed(limit(4 << 20).limit_bps / 1e6, "197");
}

#[test]
fn oc3_bdp_at_134_5_over_1ms() {
    let bdp = window::bdp(134.5e6, RTT_1, 9140).expect("computable");
    assert_printed(bdp.bdp_bytes / 1e3, "16.8");
}

#[test]
fn window_limits_at_1ms_against_the_atm_limit() {
    let cases = [
        (8 * 1024, "65.5", Bound::Window, "65.5"),
        (16 * 1024, "131", Bound::Window, "131"),
        (32 * 1024, "262", Bound::Link, "134.5"),
        (64 * 1024, "524", Bound::Link, "134.5"),
    ];
    for (window, window_mbit, bound, limit_mbit) in cases {
        let w = window::window_limit(window, RTT_1, Some(134.5e6)).expect("computable");
        assert_printed(w.window_rate_bps / 1e6, window_mbit);
        assert_eq!(w.bound, bound, "{window}");
        assert_printed(w.limit_bps / 1e6, limit_mbit);
    }
}

fn path(p: f64) -> LossPath {
    LossPath::new(1448, RTT_170, p)
}

#[test]
fn mathis_table() {
    let cases = [(1e-2, "0.835", "0.590"), (1e-4, "8.35", "5.90"), (1e-6, "83.5", "59.0")];
    for (p, every, delayed) in cases {
        let rate = |c| loss::mathis_bps(&path(p), c).expect("computable") / 1e6;
        assert_printed(rate(MathisConstant::AckEverySegment), every);
        assert_printed(rate(MathisConstant::DelayedAck), delayed);
    }
    assert_printed(MathisConstant::AckEverySegment.value(), "1.22");
    assert_printed(MathisConstant::DelayedAck.value(), "0.87");
}

#[test]
fn mathis_loss_budget_for_1g() {
    let c = MathisConstant::AckEverySegment;
    let budget = loss::mathis_loss_budget(1448, RTT_170, 1e9, c).expect("computable");
    assert_printed(budget.loss_probability * 1e9, "7.0");
    assert_printed(budget.segments_per_loss / 1e8, "1.44");
    assert_printed(budget.seconds_between_losses / 60.0, "28");
}

#[test]
fn reno_recovery_after_one_loss() {
    let r = loss::reno_recovery(14_675.0, RTT_170).expect("computable");
    assert_printed(r.rtts, "7338");
    assert_printed(r.seconds, "1247");
}

#[test]
fn padhye_and_tfrc_table() {
    let pftk = Padhye { segments_per_ack: 2, rto_ns: 1_000_000_000, max_window_bytes: None };
    let cases = [
        (1e-4, "5.89", "8.34", "8.35"),
        (1e-3, "1.84", "2.62", "2.64"),
        (1e-2, "0.52", "0.77", "0.83"),
        (5e-2, "0.15", "0.25", "0.37"),
    ];
    for (p, padhye, tfrc, mathis) in cases {
        let mathis_rate = loss::mathis_bps(&path(p), MathisConstant::AckEverySegment);
        assert_printed(loss::padhye_bps(&path(p), &pftk).expect("ok") / 1e6, padhye);
        assert_printed(loss::tfrc_bps(&path(p)).expect("ok") / 1e6, tfrc);
        assert_printed(mathis_rate.expect("ok") / 1e6, mathis);
    }
}

#[test]
fn padhye_is_capped_by_the_window() {
    let params = Padhye { segments_per_ack: 2, rto_ns: 1_000_000_000, max_window_bytes: Some(65_535) };
    let rate = loss::padhye_bps(&path(1e-4), &params).expect("computable");
    assert_printed(rate / 1e6, "3.08");
}

#[test]
fn cubic_recovery_k() {
    let k = cubic::recovery(14_675.0, RTT_170).expect("computable");
    assert_printed(k.k_seconds, "22.2");
    assert_printed(k.k_rtts, "131");
}

#[test]
fn cubic_window_table() {
    assert_printed(cubic::window_coefficient(), "1.054");
    let cases = [
        (1e-2, "8.8", "0.60", "0.83", true),
        (1e-3, "49.6", "3.38", "2.64", false),
        (1e-4, "279", "19.0", "8.35", false),
        (1e-6, "8823", "601", "83.5", false),
    ];
    for (p, window, mbit, reno_mbit, reno_friendly) in cases {
        let c = cubic::loss_limit(&path(p)).expect("computable");
        assert_printed(c.window_segments, window);
        assert_printed(c.rate_bps / 1e6, mbit);
        assert_printed(c.reno_rate_bps / 1e6, reno_mbit);
        assert_eq!(c.reno_friendly, reno_friendly, "p = {p}");
    }
}

#[test]
fn scenario_1g_170ms_p_1e_4() {
    let reno = loss::mathis_bps(&path(1e-4), MathisConstant::AckEverySegment).expect("ok");
    let cubic = cubic::loss_limit(&path(1e-4)).expect("ok");
    assert_printed(reno / 1e6, "8");
    assert_printed(cubic.rate_bps / 1e6, "19");
}
