//! The secrets an account holds: the HMAC key its commands are signed with and the hash
//! of its dashboard password. Apart from the accounts (auth.rs) because neither needs to
//! know who holds it, and each has test vectors of its own (RFC 4231, RFC 7914).

use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::Sha256;

pub(super) type HmacSha256 = Hmac<Sha256>;

/// Bytes of a newly made key (256 bits, as SHA-256's block wants at most 64).
const KEY_BYTES: usize = 32;

/// What a key's hex text was not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("not hex (0-9, a-f, an even number of digits)")]
    NotHex,
    #[error("{0} bytes is too short for a key (at least 16)")]
    TooShort(usize),
}

/// A key file that could not be read or does not hold a key.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {error}", path.display())]
    Bad { path: PathBuf, error: KeyError },
}

/// What a new dashboard password was not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    #[error("a password needs at least 8 characters")]
    TooShort,
    #[error("a password has no control characters")]
    ControlCharacter,
}

/// An HMAC key. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Key(Vec<u8>);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(<secret>)")
    }
}

impl Key {
    /// A fresh key from the operating system's generator.
    pub fn generate() -> Key {
        use rand::RngCore;
        let mut k = vec![0u8; KEY_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut k);
        Key(k)
    }

    /// From its hex text (as in the arbiters file and in a key file).
    pub fn from_hex(text: &str) -> Result<Key, KeyError> {
        let text = text.trim();
        let bytes = hex_decode(text).ok_or(KeyError::NotHex)?;
        if bytes.len() < 16 {
            return Err(KeyError::TooShort(bytes.len()));
        }
        Ok(Key(bytes))
    }

    pub fn to_hex(&self) -> String {
        hex_encode(&self.0)
    }

    /// Read a key file: the key's hex text, nothing else but white space.
    pub fn read_file(path: &Path) -> Result<Key, KeyFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| KeyFileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Key::from_hex(&text).map_err(|error| KeyFileError::Bad {
            path: path.to_path_buf(),
            error,
        })
    }

    fn mac(&self, topic: &str, payload: &[u8]) -> HmacSha256 {
        // Any key length is valid for HMAC; `new_from_slice` cannot fail for it.
        let mut mac = match HmacSha256::new_from_slice(&self.0) {
            Ok(m) => m,
            Err(_) => unreachable!("HMAC takes keys of any length"),
        };
        mac.update(topic.as_bytes());
        mac.update(b"\n");
        mac.update(payload);
        mac
    }

    /// The hex HMAC-SHA256 of `topic "\n" payload`.
    pub fn sign(&self, topic: &str, payload: &[u8]) -> String {
        hex_encode(&self.mac(topic, payload).finalize().into_bytes())
    }

    /// Whether `sig` (hex) is this key's signature of `topic "\n" payload`; constant-time.
    pub fn verify(&self, topic: &str, payload: &[u8], sig: &str) -> bool {
        match hex_decode(sig) {
            Some(sig) => self.mac(topic, payload).verify_slice(&sig).is_ok(),
            None => false,
        }
    }
}

pub(super) fn hex_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn hex_decode(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// What a dashboard password must be: long enough to resist guessing over the LAN.
pub fn check_password(password: &str) -> Result<(), PasswordError> {
    if password.chars().count() < 8 {
        return Err(PasswordError::TooShort);
    }
    if password.chars().any(char::is_control) {
        return Err(PasswordError::ControlCharacter);
    }
    Ok(())
}

pub(super) const PBKDF2: &str = "pbkdf2-sha256";

/// Iterations for new hashes: about 0.1 s on a Raspberry Pi 4, once per login.
pub const PBKDF2_ITERATIONS: u32 = 100_000;

/// What an unknown id is checked against (its password is nobody's).
pub(super) static DUMMY_HASH: std::sync::LazyLock<PasswordHash> =
    std::sync::LazyLock::new(|| PasswordHash {
        iterations: PBKDF2_ITERATIONS,
        salt: vec![0; 16],
        hash: [0; 32],
    });

/// A dashboard password as stored: salted PBKDF2-HMAC-SHA256, written
/// `pbkdf2-sha256$<iterations>$<salt hex>$<hash hex>`. Unlike the HMAC key, the server
/// never needs the password itself.
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordHash {
    iterations: u32,
    salt: Vec<u8>,
    hash: [u8; 32],
}

impl std::fmt::Debug for PasswordHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PasswordHash({PBKDF2}, {} iterations)", self.iterations)
    }
}

impl PasswordHash {
    /// A fresh salt and the hash of `password`.
    pub fn new(password: &str, iterations: u32) -> PasswordHash {
        use rand::RngCore;
        let mut salt = vec![0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut salt);
        let iterations = iterations.max(1);
        let hash = pbkdf2(password.as_bytes(), &salt, iterations);
        PasswordHash {
            iterations,
            salt,
            hash,
        }
    }

    pub fn parse(text: &str) -> Option<PasswordHash> {
        let mut parts = text.split('$');
        if parts.next()? != PBKDF2 {
            return None;
        }
        let iterations: u32 = parts.next()?.parse().ok().filter(|n| *n > 0)?;
        let salt = hex_decode(parts.next()?)?;
        let hash: [u8; 32] = hex_decode(parts.next()?)?.try_into().ok()?;
        parts.next().is_none().then_some(PasswordHash {
            iterations,
            salt,
            hash,
        })
    }

    pub fn to_text(&self) -> String {
        format!(
            "{PBKDF2}${}${}${}",
            self.iterations,
            hex_encode(&self.salt),
            hex_encode(&self.hash)
        )
    }

    /// Constant-time in the hash's bytes.
    pub fn verify(&self, password: &str) -> bool {
        let got = pbkdf2(password.as_bytes(), &self.salt, self.iterations);
        got.iter()
            .zip(self.hash)
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
    }
}

/// PBKDF2-HMAC-SHA256 with one 32-byte block (RFC 8018 §5.2).
fn pbkdf2(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    let Ok(mac) = HmacSha256::new_from_slice(password) else {
        return [0; 32];
    };
    let mut first = mac.clone();
    first.update(salt);
    first.update(&1u32.to_be_bytes());
    let mut u: [u8; 32] = first.finalize().into_bytes().into();
    let mut out = u;
    for _ in 1..iterations {
        let mut m = mac.clone();
        m.update(&u);
        u = m.finalize().into_bytes().into();
        for (o, x) in out.iter_mut().zip(u) {
            *o ^= x;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_is_rfc_4231() {
        // RFC 4231 test case 2: the crate is plain HMAC-SHA256, as Python's hmac is.
        let key = Key(b"Jefe".to_vec());
        let mut mac = HmacSha256::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        assert_eq!(
            hex_encode(&mac.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let sig = key.sign("t", b"p");
        assert!(key.verify("t", b"p", &sig));
        assert!(!key.verify("u", b"p", &sig));
        assert!(!key.verify("t", b"q", &sig));
    }

    #[test]
    fn pbkdf2_matches_rfc_7914_vector() {
        // RFC 7914 §11: PBKDF2-HMAC-SHA256, P="passwd", S="salt", c=1, first 32 bytes.
        assert_eq!(
            hex_encode(&pbkdf2(b"passwd", b"salt", 1)),
            "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
        );
    }

    #[test]
    fn keys_and_passwords_say_what_they_are_not() {
        assert_eq!(Key::from_hex("abc"), Err(KeyError::NotHex));
        assert_eq!(
            Key::from_hex("zz".repeat(16).as_str()),
            Err(KeyError::NotHex)
        );
        assert_eq!(Key::from_hex(&"ab".repeat(15)), Err(KeyError::TooShort(15)));
        assert!(Key::from_hex(&format!(" {}\n", "ab".repeat(16))).is_ok());
        assert_eq!(check_password("short"), Err(PasswordError::TooShort));
        assert_eq!(
            check_password("long enough\u{7}"),
            Err(PasswordError::ControlCharacter)
        );
        assert_eq!(check_password("long enough"), Ok(()));
        let missing = Path::new("/nonexistent/hallclock.key");
        assert!(matches!(
            Key::read_file(missing),
            Err(KeyFileError::Read { .. })
        ));
    }
}
