//! How pgrig's own commands (`run`, `server`, `study`, `results`, ...) read their arguments:
//! clap, its usage errors on stderr with exit status 1 (as pgrig's other errors), `--help` on
//! stdout with 0. (`bench` and `init` keep pgbench's getopt emulation: `args`.)

use std::ffi::OsString;

/// The arguments parsed, or the exit status after clap has printed its message.
pub fn parse<T: clap::Parser>(
    argv: impl IntoIterator<Item = impl Into<OsString> + Clone>,
) -> Result<T, i32> {
    T::try_parse_from(argv).map_err(|e| {
        let _ = e.print();
        if e.use_stderr() {
            1
        } else {
            0
        }
    })
}
