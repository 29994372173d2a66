//! The theory crate's view of an emulated path: the [`model::Link`] one direction of it
//! serializes, so a test over `--path` is compared with the same "theoretical" goodput that
//! `--link` would give for that link (docs/model.md).

use crate::framing::CellFormat;
use crate::spec::{Direction, PathConfig};

/// AAL5 trailer bytes (CPCS-PDU trailer), charged before the PDU is cut into cells.
const AAL5_TRAILER_BYTES: i64 = 8;
/// ATM cell payload and header bytes.
const ATM_CELL: model::raw::Cells = model::raw::Cells { size_bytes: 48, overhead_bytes: 5 };

impl PathConfig {
    /// The link `direction` emulates, as a model link (`raw:` with the emulator's rate,
    /// per-packet overhead, cells and the path MTU); `None` for a direction without a rate,
    /// which has no capacity to compare with.
    pub fn model_link(&self, direction: Direction) -> Option<model::Link> {
        let link = self.link(direction);
        let rate = link.rate?;
        let overhead = i64::from(link.framing.overhead_bytes);
        let (overhead_bytes, cells) = match link.framing.cells {
            None => (overhead, None),
            Some(CellFormat::Aal5 { encap }) => {
                let encap = i64::try_from(encap.bytes()).unwrap_or(i64::MAX);
                (overhead + encap + AAL5_TRAILER_BYTES, Some(ATM_CELL))
            }
            Some(CellFormat::Generic { payload_bytes, overhead_bytes }) => (
                overhead,
                Some(model::raw::Cells {
                    size_bytes: u64::from(payload_bytes.get()),
                    overhead_bytes: u64::from(overhead_bytes),
                }),
            ),
        };
        Some(model::Link::Raw(model::raw::Raw {
            rate,
            overhead_bytes,
            cells,
            mtu_bytes: u64::from(self.mtu_bytes),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn max_mbit(spec: &str, direction: Direction) -> Option<f64> {
        let path: PathConfig = spec.parse().ok()?;
        let link = path.model_link(direction)?;
        let stack: model::Stack = "ipv4:tcp:ts".parse().ok()?;
        let max = model::goodput::max_goodput(&link, &stack).ok()?;
        Some((max.goodput_bps / 1e4).round() / 100.0)
    }

    #[test]
    fn presets_have_the_theoretical_goodput_of_their_links() {
        // docs/model.md's known answers, with TCP timestamps (what Linux sends).
        assert_eq!(max_mbit("atm-oc3-clip", Direction::Up), Some(134.34));
        assert_eq!(max_mbit("gige", Direction::Down), Some(941.48));
        assert_eq!(max_mbit("rate=1gbit,overhead=38,mtu=9000", Direction::Up), Some(990.04));
    }

    #[test]
    fn each_direction_is_its_own_link_and_no_rate_is_no_link() {
        assert_eq!(max_mbit("rate=100mbit,overhead=38,down:rate=10mbit", Direction::Down), Some(9.41));
        assert_eq!(max_mbit("delay=10ms", Direction::Up), None);
        let path: Result<PathConfig, _> = "rate=10mbit,cell=48,celloverhead=5".parse();
        let frame = path.ok().and_then(|p| p.model_link(Direction::Up)).and_then(|l| l.frame(50).ok());
        assert_eq!(frame.map(|f| f.wire_bytes), Some(106), "netem's cell example");
    }
}
