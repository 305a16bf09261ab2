//! pgbench's `doConnect`: when the server asks for a password and none is known, the user is
//! asked once (through the [`Sink`], which owns the terminal) and the connection tried again;
//! the answer then serves every later connection of the run.

use pgrig_wire::{Config, Connection, Error};

use crate::sink::Sink;

/// Connects with `wire`; when the server wanted a password and none was known (none given, or
/// an empty one, `PGPASSWORD=` too), asks and retries once, keeping the answer in `wire`.
pub async fn connect_asking(wire: &mut Config, sink: &dyn Sink) -> Result<Connection, Error> {
    match Connection::connect(wire).await {
        Err(e) if e.needs_password() => {
            let Some(answer) = sink.password() else {
                return Err(e);
            };
            wire.password = Some(pgrig_wire::config::Password::new(answer));
            Connection::connect(wire).await
        }
        other => other,
    }
}
