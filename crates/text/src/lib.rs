//! Text pgrig shows or stores, made safe and familiar, with std alone: passwords masked
//! ([`mask_passwords`], in `mask`) and OS errors as C's `strerror` prints them ([`strerror()`], in
//! `strerror`). The wire client, the results store, compare and report use them; the wire
//! client re-exports both (`pgrig_wire::mask_passwords`, `pgrig_wire::strerror`), so a crate that
//! needs no PostgreSQL connection takes them from here without tokio or rustls.

mod mask;
mod strerror;

pub use mask::{mask_passwords, MASK};
pub use strerror::strerror;
