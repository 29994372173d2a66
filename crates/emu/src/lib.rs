//! Link emulator: a sans-I/O link model per direction (time passed in, seeded RNG).
#![forbid(unsafe_code)]
