//! Who is at the other end of a loopback TCP connection: the kernel names the owner of the
//! client's socket, so a TCP listener can serve only its own user, as a unix socket in a private
//! directory does. Asked first through `sock_diag` netlink for that one socket (an exact lookup
//! by its four addresses and ports: its cost does not grow with the connections on the machine);
//! where netlink is not allowed, the socket table (`/proc/net/tcp`, `/proc/net/tcp6`) is read
//! and searched.

use std::net::{IpAddr, SocketAddr};

/// The address as `/proc/net/tcp*` prints it: the IPv4 address's 32-bit word, or IPv6's four,
/// each in the machine's byte order, in hex; then the port.
fn proc_addr(a: &SocketAddr) -> String {
    let words: Vec<[u8; 4]> = match a.ip() {
        IpAddr::V4(v4) => vec![v4.octets()],
        IpAddr::V6(v6) => v6
            .octets()
            .chunks(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect(),
    };
    let hex: String = words
        .iter()
        .map(|w| format!("{:08X}", u32::from_ne_bytes(*w)))
        .collect();
    format!("{hex}:{:04X}", a.port())
}

/// The user id owning the socket whose local address is `client` and remote address is
/// `server` (the client's end of a connection to us): asked of `sock_diag`, else the table.
pub fn owner(client: &SocketAddr, server: &SocketAddr) -> Option<u32> {
    match crate::capture_diag::owner(client, server) {
        Ok(uid) => uid,
        Err(_) => owner_from_table(client, server),
    }
}

/// The same from `/proc/net/tcp*` (a read of the whole table: its cost grows with it).
pub fn owner_from_table(client: &SocketAddr, server: &SocketAddr) -> Option<u32> {
    let table = if client.is_ipv4() {
        "/proc/net/tcp"
    } else {
        "/proc/net/tcp6"
    };
    let text = std::fs::read_to_string(table).ok()?;
    let (local, remote) = (proc_addr(client), proc_addr(server));
    text.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(1) == Some(&local.as_str()) && f.get(2) == Some(&remote.as_str()))
            .then(|| f.get(7)?.parse().ok())
            .flatten()
    })
}

/// Whether the connection's client runs as the effective user of this process, asked of
/// `sock_diag` alone (one netlink round trip, tens of µs, fit for the accept loop); `None` when
/// netlink cannot be asked here (then [`is_own`], which may read the whole table, decides).
pub fn is_own_quick(client: &SocketAddr, server: &SocketAddr) -> Option<bool> {
    crate::capture_diag::owner(client, server)
        .ok()
        .map(|uid| uid == Some(nix::unistd::geteuid().as_raw()))
}

/// Whether the connection's client runs as the effective user of this process.
pub fn is_own(client: &SocketAddr, server: &SocketAddr) -> bool {
    owner(client, server) == Some(nix::unistd::geteuid().as_raw())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_loopback_connection_is_found_in_the_kernel_table() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = l.local_addr().unwrap();
        let c = std::net::TcpStream::connect(server).unwrap();
        let client = c.local_addr().unwrap();
        assert!(is_own(&client, &server));
        assert_eq!(
            crate::capture_diag::owner(&client, &server).unwrap(),
            owner_from_table(&client, &server)
        );
        assert_eq!(
            owner_from_table(&client, &server),
            Some(nix::unistd::geteuid().as_raw())
        );
        assert_eq!(
            proc_addr(&"127.0.0.1:8080".parse().unwrap()),
            if cfg!(target_endian = "little") {
                "0100007F:1F90"
            } else {
                "7F000001:1F90"
            }
        );
    }
}
