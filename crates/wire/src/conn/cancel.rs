//! Query cancellation: a CancelRequest sent over a new connection to the same server address.

use std::time::Duration;

use bytes::BytesMut;

use super::stream::{Addr, Stream};
use crate::error::{strerror, Error};
use crate::proto::frontend;

/// How long to wait for the server to acknowledge (close) a cancel connection.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything needed to cancel a session's current query; cheap to clone, `Send`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CancelToken {
    addr: Addr,
    process_id: i32,
    secret_key: i32,
}

impl CancelToken {
    pub(crate) fn new(addr: Addr, process_id: i32, secret_key: i32) -> CancelToken {
        CancelToken {
            addr,
            process_id,
            secret_key,
        }
    }

    /// The backend process this token cancels.
    pub fn process_id(&self) -> i32 {
        self.process_id
    }

    /// Asks the server to cancel the session's current query. Success means the request was
    /// delivered, not that a query was cancelled.
    pub async fn cancel(&self) -> Result<(), Error> {
        let fail = |e: std::io::Error| Error::Connect {
            message: format!("could not send cancel request: {}", strerror(&e)),
            db: None,
        };
        let run = async {
            let mut stream = Stream::open(&self.addr).await.map_err(fail)?;
            let mut buf = BytesMut::with_capacity(16);
            frontend::cancel_request(&mut buf, self.process_id, self.secret_key);
            stream.write_all(&buf).await.map_err(fail)?;
            // Wait for the server to close the connection: then the request was processed.
            let mut scratch = [0u8; 16];
            while stream.read(&mut scratch).await.map_err(fail)? > 0 {}
            Ok(())
        };
        tokio::time::timeout(CANCEL_TIMEOUT, run)
            .await
            .unwrap_or_else(|_| {
                Err(Error::Connect {
                    message: "cancel request timed out".into(),
                    db: None,
                })
            })
    }
}
