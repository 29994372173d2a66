//! The one error type of the crate: what is wrong with a path spec.

use crate::spec::Direction;

/// A path spec that cannot be used, with the part of the input that caused it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The spec is empty.
    #[error("empty path spec (try a preset such as `transatlantic`, or `rate=100mbit,delay=20ms`)")]
    Empty,
    /// Two commas in a row, or a trailing comma.
    #[error("empty item #{position} in the path spec")]
    EmptyItem {
        /// 1-based position of the item.
        position: usize,
    },
    /// The first item is a bare word that names no preset.
    #[error("unknown preset `{name}` (list them with `tcplab emu --list`)")]
    UnknownPreset {
        /// The word given.
        name: String,
    },
    /// A preset name after the first item.
    #[error("preset `{name}` must come first in the spec")]
    PresetNotFirst {
        /// The preset named.
        name: String,
    },
    /// A key the spec language does not have.
    #[error("unknown key `{key}`")]
    UnknownKey {
        /// The key given.
        key: String,
    },
    /// A `prefix:` that is neither `up:` nor `down:`.
    #[error("unknown direction `{prefix}:` (use `up:` or `down:`)")]
    UnknownDirection {
        /// The prefix given.
        prefix: String,
    },
    /// A key written without `=value`.
    #[error("`{key}` needs a value (`{key}=…`)")]
    MissingValue {
        /// The key.
        key: String,
    },
    /// A value that does not parse or is out of range.
    #[error("bad value `{value}` for `{key}`: {reason}")]
    BadValue {
        /// The key.
        key: String,
        /// The value as written.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A key that only makes sense for the whole path, given with a direction prefix.
    #[error("`{key}` applies to the whole path and cannot take an `up:`/`down:` prefix")]
    NotPerDirection {
        /// The key.
        key: String,
    },
    /// Settings that contradict each other.
    #[error("conflicting settings for the {direction} direction: {reason}")]
    Conflict {
        /// The direction whose settings conflict.
        direction: Direction,
        /// What conflicts and how to fix it.
        reason: String,
    },
}
