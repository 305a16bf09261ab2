//! Installing PostgreSQL's server binaries when they are missing — only when the caller asks
//! for it ([`Install::AptAsRoot`]): as root on a Debian-like system, the `postgresql` package
//! with apt-get; otherwise an error that says exactly what to install.

use crate::PgBinaries;

/// What to do when the server binaries are missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Install {
    /// never install: say what to install
    Never,
    /// as root with apt-get: install the `postgresql` package
    AptAsRoot,
}

/// Makes sure `initdb` and `postgres` are found ([`PgBinaries::discover`]), installing them per
/// `install`. Progress goes to `note`; the error is the lines to print.
pub fn ensure_server_binaries(install: Install, note: &dyn Fn(&str)) -> Result<(), Vec<String>> {
    if PgBinaries::discover().is_ok() {
        return Ok(());
    }
    let root = nix::unistd::geteuid().is_root();
    let apt = std::path::Path::new("/usr/bin/apt-get").exists();
    if install == Install::Never || !(root && apt) {
        return Err(vec![
            "PostgreSQL server binaries (initdb, postgres) not found".into(),
            "hint: install them, e.g. \"sudo apt-get install postgresql\" (Debian/Ubuntu) or \"sudo dnf install postgresql-server\" (Fedora), or put their directory on PATH".into(),
        ]);
    }
    note("PostgreSQL server binaries not found; installing the Debian package \"postgresql\" (running as root)...");
    let run = |args: &[&str]| {
        std::process::Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|s| s.success())
    };
    let ok = run(&["update", "-qq"]) && run(&["install", "-y", "-qq", "postgresql"]);
    if !ok || PgBinaries::discover().is_err() {
        return Err(vec![
            "could not install the \"postgresql\" package with apt-get".into(),
        ]);
    }
    Ok(())
}
