//! The owner of one TCP socket, asked of the kernel through `sock_diag` netlink
//! (`SOCK_DIAG_BY_FAMILY` with the socket's exact addresses and ports, as `ss` does): one
//! request, one answer, whatever the number of sockets on the machine. Only the layout of the
//! kernel's structures is used (`linux/inet_diag.h`, `linux/netlink.h`).

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const NETLINK_SOCK_DIAG: libc::c_int = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLMSG_ERROR: u16 = 2;
const NLM_F_REQUEST: u16 = 1;
/// `nlmsghdr`: length, type, flags, sequence, port id.
const NLMSG_HDR: usize = 16;
/// `inet_diag_req_v2`: family, protocol, ext, pad, states, then the 48-byte `inet_diag_sockid`.
const REQ_LEN: usize = 56;
/// Offset of `idiag_uid` in `inet_diag_msg` (4 bytes, the sockid, expires, rqueue, wqueue).
const UID_AT: usize = 4 + 48 + 12;

/// The 48-byte `inet_diag_sockid` of the socket bound to `local` and connected to `remote`:
/// ports and addresses in network order, no interface, no cookie (`INET_DIAG_NOCOOKIE`).
fn sockid(local: &SocketAddr, remote: &SocketAddr) -> [u8; 48] {
    let mut id = [0u8; 48];
    id[0..2].copy_from_slice(&local.port().to_be_bytes());
    id[2..4].copy_from_slice(&remote.port().to_be_bytes());
    let addr = |a: &SocketAddr| -> [u8; 16] {
        let mut b = [0u8; 16];
        match a.ip() {
            IpAddr::V4(v4) => b[..4].copy_from_slice(&v4.octets()),
            IpAddr::V6(v6) => b.copy_from_slice(&v6.octets()),
        }
        b
    };
    id[4..20].copy_from_slice(&addr(local));
    id[20..36].copy_from_slice(&addr(remote));
    id[40..48].copy_from_slice(&[0xff; 8]);
    id
}

/// The uid owning the socket bound to `client` and connected to `server` (`Ok(None)`: the
/// kernel has no such socket); `Err` when netlink cannot be asked here.
pub fn owner(client: &SocketAddr, server: &SocketAddr) -> io::Result<Option<u32>> {
    // SAFETY: plain socket(2) call; the descriptor is owned below.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by socket(2) and nothing else owns it.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let timeout = libc::timeval {
        tv_sec: 1,
        tv_usec: 0,
    };
    // SAFETY: setsockopt with a valid timeval of the size given.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&timeout as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    let family = if client.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    let mut msg = Vec::with_capacity(NLMSG_HDR + REQ_LEN);
    msg.extend_from_slice(&((NLMSG_HDR + REQ_LEN) as u32).to_ne_bytes());
    msg.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    msg.extend_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    msg.extend_from_slice(&1u32.to_ne_bytes()); // sequence
    msg.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel's
    msg.extend_from_slice(&[family as u8, libc::IPPROTO_TCP as u8, 0, 0]);
    msg.extend_from_slice(&u32::MAX.to_ne_bytes()); // every state
    msg.extend_from_slice(&sockid(client, server));
    // SAFETY: sending `msg`'s bytes on an open socket; a zeroed sockaddr_nl is the kernel.
    let sent = unsafe {
        let mut to: libc::sockaddr_nl = std::mem::zeroed();
        to.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        libc::sendto(
            sock.as_raw_fd(),
            msg.as_ptr().cast(),
            msg.len(),
            0,
            (&to as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = [0u8; 8192];
    // SAFETY: receiving into `buf`, writable for its length.
    let n = unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
    answer(&buf[..n])
}

/// The uid in the kernel's answer; `Ok(None)` for "no such socket".
fn answer(reply: &[u8]) -> io::Result<Option<u32>> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "short sock_diag answer");
    let kind = u16::from_ne_bytes(
        reply
            .get(4..6)
            .ok_or_else(bad)?
            .try_into()
            .map_err(|_| bad())?,
    );
    let word = |at: usize| -> io::Result<[u8; 4]> {
        reply
            .get(at..at + 4)
            .ok_or_else(bad)?
            .try_into()
            .map_err(|_| bad())
    };
    match kind {
        SOCK_DIAG_BY_FAMILY => Ok(Some(u32::from_ne_bytes(word(NLMSG_HDR + UID_AT)?))),
        NLMSG_ERROR => match -i32::from_ne_bytes(word(NLMSG_HDR)?) {
            libc::ENOENT => Ok(None),
            0 => Err(bad()),
            e => Err(io::Error::from_raw_os_error(e)),
        },
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_that_does_not_exist_has_no_owner_and_a_real_one_has_ours() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = l.local_addr().unwrap();
        let c = std::net::TcpStream::connect(server).unwrap();
        let client = c.local_addr().unwrap();
        let me = nix::unistd::geteuid().as_raw();
        assert_eq!(owner(&client, &server).unwrap(), Some(me));
        let nowhere: SocketAddr = "127.0.0.1:9".parse().unwrap();
        assert_eq!(owner(&nowhere, &server).unwrap(), None);
    }
}
