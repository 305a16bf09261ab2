//! The `pgrig` binary.
fn main() {}
