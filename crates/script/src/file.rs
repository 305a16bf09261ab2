//! Reading a script file, the one way every front end does it (`pgrig bench -f`, `pgrig run
//! --workload FILE`, a study's `scripts`): like pgbench, which reads the file into a C string, the
//! script ends at its first NUL byte, and bytes that are not UTF-8 are kept as they are
//! ([`crate::bytes`]), so a Latin-1 script reaches the server byte for byte wherever it is named.
//! The only I/O of this crate.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Why a script could not be read: pgbench words the two stages differently.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be opened (`could not open file`).
    Open(std::io::Error),
    /// It was opened but reading failed, e.g. a directory (`could not read file`).
    Read(std::io::Error),
}

impl ReadError {
    /// The operating system's error.
    pub fn io(&self) -> &std::io::Error {
        match self {
            ReadError::Open(e) | ReadError::Read(e) => e,
        }
    }
}

/// The file system path an argument names: stand-in characters (an argument's bytes that were
/// not UTF-8) become their bytes again.
pub fn path_of(arg: &str) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(&crate::bytes::encode(arg)).into()
}

/// Reads the script at `path`.
pub fn read_path(path: &Path) -> Result<String, ReadError> {
    let mut file = std::fs::File::open(path).map_err(ReadError::Open)?;
    read_all(&mut file)
}

/// Reads a script from standard input (pgbench's `-f -`).
pub fn read_stdin() -> Result<String, ReadError> {
    read_all(&mut std::io::stdin().lock())
}

fn read_all(from: &mut dyn Read) -> Result<String, ReadError> {
    let mut bytes = Vec::new();
    from.read_to_end(&mut bytes).map_err(ReadError::Read)?;
    Ok(text_of(bytes))
}

/// A script's text from its bytes: up to the first NUL, non-UTF-8 bytes as stand-ins.
fn text_of(mut bytes: Vec<u8>) -> String {
    if let Some(nul) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(nul);
    }
    crate::bytes::decode(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_bytes_survive_and_a_nul_ends_the_script() {
        let text = text_of(b"select 'caf\xe9';\0ignored".to_vec());
        assert_eq!(crate::bytes::encode(&text), b"select 'caf\xe9';");
        assert_eq!(text_of(b"plain".to_vec()), "plain");
    }

    #[test]
    fn open_and_read_failures_are_told_apart() {
        assert!(matches!(
            read_path(Path::new("/nonexistent/x.sql")),
            Err(ReadError::Open(_))
        ));
        assert!(matches!(read_path(Path::new("/")), Err(ReadError::Read(_))));
    }
}
