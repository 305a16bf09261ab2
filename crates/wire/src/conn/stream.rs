//! The byte stream under a connection: TCP (with `TCP_NODELAY`), a Unix-domain socket, or TLS
//! over TCP. Static dispatch through an enum; no boxing of futures.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio_rustls::client::TlsStream;

/// A concrete server address (one resolved address of a configured host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addr {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Stream {
    /// Opens a plain connection to `addr`.
    pub(crate) async fn open(addr: &Addr) -> io::Result<Stream> {
        match addr {
            Addr::Tcp(sa) => {
                let s = TcpStream::connect(sa).await?;
                s.set_nodelay(true)?;
                Ok(Stream::Tcp(s))
            }
            Addr::Unix(path) => Ok(Stream::Unix(UnixStream::connect(path).await?)),
        }
    }

    /// Reads whatever is available (at least one byte unless at EOF).
    #[inline]
    pub(crate) async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf).await,
            Stream::Unix(s) => s.read(buf).await,
            Stream::Tls(s) => s.read(buf).await,
        }
    }

    /// Writes all of `buf` (and pushes TLS records out).
    #[inline]
    pub(crate) async fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.write_all(buf).await,
            Stream::Unix(s) => s.write_all(buf).await,
            Stream::Tls(s) => {
                s.write_all(buf).await?;
                s.flush().await
            }
        }
    }

    pub(crate) async fn shutdown(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.shutdown().await,
            Stream::Unix(s) => s.shutdown().await,
            Stream::Tls(s) => s.shutdown().await,
        }
    }

    pub(crate) fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }
}
