//! Printing that never panics. `print!`/`println!`/`eprint!`/`eprintln!` in this crate (and in
//! the `pgrig` binary, through `#[macro_use] extern crate pgrig_cli`) are these, not std's, which
//! panic when the write fails: standard output goes through [`crate::sink::out`] (a closed pipe
//! drops the text, another failure is remembered for the exit status), standard error through
//! [`crate::sink::err`] (a failure is ignored, as pgbench ignores it).

#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::sink::out(&::std::format!($($arg)*))
    };
}

#[macro_export]
macro_rules! println {
    () => {
        $crate::sink::out("\n")
    };
    ($($arg:tt)*) => {
        $crate::sink::out(&::std::format!("{}\n", ::std::format_args!($($arg)*)))
    };
}

#[macro_export]
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::sink::err(&::std::format!($($arg)*))
    };
}

#[macro_export]
macro_rules! eprintln {
    () => {
        $crate::sink::err("\n")
    };
    ($($arg:tt)*) => {
        $crate::sink::err(&::std::format!("{}\n", ::std::format_args!($($arg)*)))
    };
}
