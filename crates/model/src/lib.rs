//! Theoretical limits of links and protocol stacks. Pure: no I/O, no clock.
#![forbid(unsafe_code)]

pub mod atm;
