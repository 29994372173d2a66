//! netio
