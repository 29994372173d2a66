//! The crate's one error type.

use crate::units::{Quantity, QuantityReason};

/// Everything that can go wrong in this crate: bad input, never a bug.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A link or stack spec string could not be parsed.
    #[error("invalid spec {spec:?}: field {field:?}: {reason}")]
    Spec {
        /// The whole spec as given.
        spec: String,
        /// The field (between separators) at fault, or the whole spec.
        field: String,
        /// What is wrong with the field.
        reason: SpecReason,
    },
    /// A size or rate could not be read (see [`crate::units`] for the convention).
    #[error("invalid {quantity} {text:?}: {reason}")]
    Quantity {
        /// What the text was read as.
        quantity: Quantity,
        /// The text as given.
        text: String,
        /// What is wrong with it.
        reason: QuantityReason,
    },
    /// A numeric parameter is outside the range the model accepts.
    #[error("{name} = {value} is out of range (expected {expected})")]
    OutOfRange {
        /// Name of the parameter, with its unit suffix.
        name: &'static str,
        /// The offending value, as text.
        value: String,
        /// The accepted range, in words.
        expected: &'static str,
    },
    /// An IP packet is larger than the link's MTU.
    #[error("IP packet of {len_bytes} bytes exceeds the link MTU of {mtu_bytes} bytes")]
    PacketTooLarge {
        /// Length of the IP packet.
        len_bytes: u64,
        /// The link's MTU.
        mtu_bytes: u64,
    },
    /// The MTU cannot carry even one payload byte after the protocol headers.
    #[error("MTU of {mtu_bytes} bytes leaves no payload after {header_bytes} header bytes")]
    MtuTooSmall {
        /// The link's MTU.
        mtu_bytes: u64,
        /// Header bytes the stack puts in every packet.
        header_bytes: u64,
    },
    /// A UDP message does not fit in one datagram.
    #[error("UDP message of {len_bytes} bytes exceeds the largest datagram payload of {max_bytes} bytes")]
    DatagramTooLarge {
        /// Length of the message.
        len_bytes: u64,
        /// Largest UDP payload the IP version allows.
        max_bytes: u64,
    },
    /// A negative per-packet overhead leaves nothing to put on the wire.
    #[error("IP packet of {len_bytes} bytes has nothing left on the wire after an overhead of {overhead_bytes} bytes")]
    EmptyFrame {
        /// Length of the IP packet.
        len_bytes: u64,
        /// The (negative) per-packet overhead.
        overhead_bytes: i64,
    },
    /// A result does not fit in 64 bits.
    #[error("arithmetic overflow computing {what}")]
    Overflow {
        /// The quantity being computed.
        what: &'static str,
    },
}

/// Why one field of a spec string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecReason {
    /// The spec or one of its fields is empty.
    #[error("empty (fields are separated by ':' or ',')")]
    Empty,
    /// The first field names no known link kind.
    #[error("unknown link kind (expected ethernet, atm, taxi or raw)")]
    UnknownKind,
    /// The field is not an option of this link kind or stack.
    #[error("unknown option")]
    UnknownOption,
    /// The same setting was given twice, or two settings exclude each other.
    #[error("conflicts with an earlier field")]
    Conflict,
    /// A flag was given a value.
    #[error("this option takes no value")]
    UnexpectedValue,
    /// An option that needs a value was given without one.
    #[error("this option needs a value (name=value)")]
    MissingValue,
    /// An option was given without another one it depends on.
    #[error("needs {needs} as well")]
    Needs {
        /// The option it depends on.
        needs: &'static str,
    },
    /// A rate or a byte count was expected but not understood.
    #[error("{0}")]
    BadQuantity(QuantityReason),
    /// A numeric value is outside its accepted range.
    #[error("out of range (expected {expected})")]
    OutOfRange {
        /// The accepted range, in words.
        expected: &'static str,
    },
    /// The link rate (or physical layer) was not given.
    #[error("missing rate or physical layer (e.g. ethernet:1g, atm:oc3c, taxi:140, raw:100m)")]
    MissingRate,
    /// The ATM physical layer is not known.
    #[error("unknown ATM physical layer (expected oc3c, oc12c, taxi100 or taxi140)")]
    UnknownPhy,
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
