//! A captured batch of frontend messages on a replay connection: queued as recorded (Parse
//! with its parameter types, Bind with its formats and values), to be sent with the session's
//! next write.

use pgrig_wire::Connection;

use crate::capture_msg;

/// Queues the batch (checked when it was read) and returns how many ReadyForQuery answers it
/// asks for (0: a batch without Sync, whose answers arrive with a later one).
pub fn queue(conn: &mut Connection, messages: &[u8]) -> usize {
    conn.write_buffer().extend_from_slice(messages);
    capture_msg::readies(messages)
}
