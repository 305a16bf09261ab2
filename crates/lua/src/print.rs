//! Printing that never panics: `print!`/`println!`/`eprintln!` in this crate are these, not
//! std's, which panic when the write fails. A closed pipe (`pgrig sysbench … | head`) drops the
//! text and the run goes on to its end; nothing else in the crate writes to the terminal.

macro_rules! print {
    ($($arg:tt)*) => {
        $crate::print::out(&::std::format!($($arg)*))
    };
}

macro_rules! println {
    () => {
        $crate::print::out("\n")
    };
    ($($arg:tt)*) => {
        $crate::print::out(&::std::format!("{}\n", ::std::format_args!($($arg)*)))
    };
}

macro_rules! eprintln {
    ($($arg:tt)*) => {
        $crate::print::err(&::std::format!("{}\n", ::std::format_args!($($arg)*)))
    };
}

/// Writes `text` to standard output; a failure (a closed pipe) is ignored.
pub fn out(text: &str) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes()).and_then(|_| o.flush());
}

/// Writes `text` to standard error; a failure is ignored.
pub fn err(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
