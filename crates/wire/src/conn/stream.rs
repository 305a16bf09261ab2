//! The byte stream under a connection: TCP (with `TCP_NODELAY`), a Unix-domain socket, or TLS
//! over TCP, on tokio's reactor or moved onto pgrig's own ([`RawStream`]). Static dispatch
//! through an enum; no boxing of futures.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

use std::os::fd::OwnedFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

use tokio_rustls::client::TlsStream;

use super::raw::RawStream;

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
    /// Moved onto [`crate::rt`] (plain or TLS).
    Raw(RawStream),
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
            Stream::Raw(s) => s.read(buf).await,
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
            Stream::Raw(s) => s.write_all(buf).await,
        }
    }

    pub(crate) async fn shutdown(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.shutdown().await,
            Stream::Unix(s) => s.shutdown().await,
            Stream::Tls(s) => s.shutdown().await,
            Stream::Raw(s) => s.shutdown().await,
        }
    }

    pub(crate) fn is_tls(&self) -> bool {
        match self {
            Stream::Tls(_) => true,
            Stream::Raw(s) => s.is_tls(),
            _ => false,
        }
    }

    /// Moves the socket (and its TLS session) off tokio's reactor, onto [`crate::rt`]. Must
    /// run inside the tokio runtime that registered it.
    pub(crate) fn into_raw(self) -> io::Result<Stream> {
        fn owned(fd: impl Into<OwnedFd>) -> OwnedFd {
            fd.into()
        }
        Ok(Stream::Raw(match self {
            Stream::Tcp(s) => RawStream::new(owned(s.into_std()?), None),
            Stream::Unix(s) => RawStream::new(owned(s.into_std()?), None),
            Stream::Tls(s) => {
                let (tcp, session) = s.into_inner();
                RawStream::new(owned(tcp.into_std()?), Some(session))
            }
            Stream::Raw(s) => s,
        }))
    }
}
