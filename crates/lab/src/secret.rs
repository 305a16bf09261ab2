//! [`Secret`]: a password pgrig makes for a server's TCP access: 32 random alphanumeric
//! characters (nothing to escape in a password file or an SQL literal), never shown by `Debug`.

use crate::error::LabError;

const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const LEN: usize = 32;

/// A generated password.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    /// A new password from the kernel's random source.
    pub fn random() -> Result<Secret, LabError> {
        let mut out = String::with_capacity(LEN);
        let mut buf = [0u8; 64];
        while out.len() < LEN {
            fill_random(&mut buf)?;
            // Rejection sampling: 248 = 4 * 62, so every character is equally likely.
            for b in buf.iter().filter(|b| **b < 248) {
                if out.len() < LEN {
                    out.push(ALPHABET[usize::from(*b) % ALPHABET.len()] as char);
                }
            }
        }
        Ok(Secret(out))
    }

    /// The password itself, for the bootstrap statement and the password file only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(hidden)")
    }
}

fn fill_random(buf: &mut [u8]) -> Result<(), LabError> {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: the pointer and length describe `rest`, which the call writes at most.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(LabError::io("making a random password", "getrandom", e));
            }
        } else {
            filled += n as usize;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn passwords_are_long_alphanumeric_distinct_and_hidden_from_debug() {
        let a = Secret::random().unwrap();
        let b = Secret::random().unwrap();
        assert_eq!(a.expose().len(), 32);
        assert!(a.expose().chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(a, b);
        assert!(!format!("{a:?}").contains(a.expose()));
    }
}
