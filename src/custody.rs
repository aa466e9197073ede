//! Custody of sealed moves (Guidelines I.3): the daemon is the envelope's keeper.
//!
//! Events and views carry only `commitment = hex(sha256(nonce ‖ move text))`; the move
//! text and its nonce are kept here, encrypted at rest, until the arbiter opens the
//! envelope. A stolen SD card or a copied journal shows no sealed move.
//!
//! - The key: 32 random bytes in `<state_dir>/custody.key`, created once with mode 0600
//!   (created exclusively, so two daemons never race to different keys).
//! - One record per commitment, `<state_dir>/custody/<commitment>.bin`:
//!   `12-byte AEAD nonce ‖ ChaCha20-Poly1305(key, plaintext, aad = commitment)`. The AAD
//!   ties a record to its name: a record copied under another commitment fails to open.
//! - The plaintext is `nonce hex ‖ '\n' ‖ move text` (the text exactly as written).
//! - Written to a temporary name, fsynced, renamed, then the directory fsynced: a crash
//!   leaves either the whole record or none.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use rand::RngCore;
use rand::rngs::OsRng as SystemRng;

const KEY_LEN: usize = 32;
const AEAD_NONCE_LEN: usize = 12;
/// What the daemon draws for every seal (the core accepts 16 to 64 bytes).
pub const SEAL_NONCE_LEN: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum CustodyError {
    #[error("custody {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("custody key {0}: expected {KEY_LEN} bytes")]
    BadKey(PathBuf),
    #[error("'{0}' is not a commitment (64 hex digits)")]
    BadCommitment(String),
    #[error("no sealed move is kept for commitment {0}")]
    Missing(String),
    #[error("the record for commitment {0} does not decrypt (damaged, or another key)")]
    Damaged(String),
    /// The custody could not be opened at start-up; every seal and opening carries why.
    #[error("the custody is unavailable: {0}")]
    Unavailable(std::sync::Arc<CustodyError>),
}

/// A sealed move and its nonce, as kept. `Debug` never shows the move.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    pub mv: String,
    /// Hex, as sent to the core.
    pub nonce: String,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<sealed>)")
    }
}

/// The keeper of sealed moves.
pub struct Custody {
    dir: PathBuf,
    /// `Err`: the key could not be read; the hall runs on (the clocks matter more) and
    /// every seal and opening is refused with this reason.
    cipher: Result<ChaCha20Poly1305, std::sync::Arc<CustodyError>>,
}

impl std::fmt::Debug for Custody {
    // Never the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Custody").field("dir", &self.dir).finish()
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> CustodyError + '_ {
    move |source| CustodyError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A fresh nonce for a seal, from the operating system's generator, in hex.
pub fn fresh_nonce() -> String {
    let mut bytes = [0u8; SEAL_NONCE_LEN];
    SystemRng.fill_bytes(&mut bytes);
    hex(&bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn valid_commitment(c: &str) -> bool {
    // Also what keeps the file name inside the custody directory.
    c.len() == 64
        && c.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

impl Custody {
    /// Open the custody under `state_dir`, creating the key on first start.
    pub fn open(state_dir: &Path) -> Result<Custody, CustodyError> {
        fs::create_dir_all(state_dir).map_err(io_err(state_dir))?;
        let dir = state_dir.join("custody");
        fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        let key_path = state_dir.join("custody.key");
        if !key_path.exists() {
            create_key(state_dir, &key_path)?;
        }
        let mut bytes = Vec::new();
        File::open(&key_path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map_err(io_err(&key_path))?;
        let key = <[u8; KEY_LEN]>::try_from(bytes.as_slice())
            .map_err(|_| CustodyError::BadKey(key_path.clone()))?;
        Ok(Custody {
            dir,
            cipher: Ok(ChaCha20Poly1305::new(Key::from_slice(&key))),
        })
    }

    /// A custody that refuses everything, for a daemon whose key is damaged: games go on,
    /// sealing waits for the operator.
    pub fn unavailable(state_dir: &Path, why: CustodyError) -> Custody {
        Custody {
            dir: state_dir.join("custody"),
            cipher: Err(std::sync::Arc::new(why)),
        }
    }

    fn cipher(&self) -> Result<&ChaCha20Poly1305, CustodyError> {
        self.cipher
            .as_ref()
            .map_err(|why| CustodyError::Unavailable(std::sync::Arc::clone(why)))
    }

    fn record_path(&self, commitment: &str) -> Result<PathBuf, CustodyError> {
        if !valid_commitment(commitment) {
            return Err(CustodyError::BadCommitment(commitment.to_string()));
        }
        Ok(self.dir.join(format!("{commitment}.bin")))
    }

    /// Keep `secret` under `commitment`, durably, before anyone is told of the seal.
    pub fn keep(&self, commitment: &str, secret: &Secret) -> Result<(), CustodyError> {
        let path = self.record_path(commitment)?;
        let cipher = self.cipher()?;
        let mut plain = Vec::with_capacity(secret.nonce.len() + 1 + secret.mv.len());
        plain.extend_from_slice(secret.nonce.as_bytes());
        plain.push(b'\n');
        plain.extend_from_slice(secret.mv.as_bytes());
        let nonce = ChaCha20Poly1305::generate_nonce(&mut OsRng);
        let sealed = cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: &plain,
                    aad: commitment.as_bytes(),
                },
            )
            .map_err(|_| CustodyError::Damaged(commitment.to_string()))?;
        let tmp = self.dir.join(format!("{commitment}.tmp"));
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io_err(&tmp))?;
        f.write_all(&nonce).map_err(io_err(&tmp))?;
        f.write_all(&sealed).map_err(io_err(&tmp))?;
        f.sync_all().map_err(io_err(&tmp))?;
        drop(f);
        fs::rename(&tmp, &path).map_err(io_err(&path))?;
        sync_dir(&self.dir)
    }

    /// The sealed move and nonce kept under `commitment`.
    pub fn fetch(&self, commitment: &str) -> Result<Secret, CustodyError> {
        let path = self.record_path(commitment)?;
        let cipher = self.cipher()?;
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(CustodyError::Missing(commitment.to_string()));
            }
            Err(e) => return Err(io_err(&path)(e)),
        };
        let damaged = || CustodyError::Damaged(commitment.to_string());
        if bytes.len() < AEAD_NONCE_LEN {
            return Err(damaged());
        }
        let (nonce, sealed) = bytes.split_at(AEAD_NONCE_LEN);
        let plain = cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: commitment.as_bytes(),
                },
            )
            .map_err(|_| damaged())?;
        let text = String::from_utf8(plain).map_err(|_| damaged())?;
        let (nonce, mv) = text.split_once('\n').ok_or_else(damaged)?;
        Ok(Secret {
            mv: mv.to_string(),
            nonce: nonce.to_string(),
        })
    }

    /// Drop a record that no event refers to (a seal the rules refused).
    pub fn discard(&self, commitment: &str) {
        if let Ok(path) = self.record_path(commitment) {
            let _ = fs::remove_file(path);
        }
    }
}

/// The key appears whole or not at all: written and fsynced under a temporary name
/// (created exclusively, mode 0600), then linked to its name, which fails if another
/// process made one meanwhile (theirs is kept). A crash never leaves a short key that
/// would keep the daemon from starting.
fn create_key(state_dir: &Path, key_path: &Path) -> Result<(), CustodyError> {
    let tmp = state_dir.join("custody.key.new");
    // A leftover from a crash before the link: never used, so safe to drop.
    let _ = fs::remove_file(&tmp);
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io_err(&tmp))?;
    let mut key = [0u8; KEY_LEN];
    SystemRng.fill_bytes(&mut key);
    f.write_all(&key).map_err(io_err(&tmp))?;
    f.sync_all().map_err(io_err(&tmp))?;
    drop(f);
    match fs::hard_link(&tmp, key_path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io_err(key_path)(e)),
    }
    let _ = fs::remove_file(&tmp);
    sync_dir(state_dir)
}

fn sync_dir(dir: &Path) -> Result<(), CustodyError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("hallclock-{}-custody-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn keeps_and_fetches_encrypted_with_a_private_key() {
        let dir = scratch("roundtrip");
        let c = Custody::open(&dir).unwrap();
        let nonce = fresh_nonce();
        assert_eq!(nonce.len(), 2 * SEAL_NONCE_LEN);
        let commitment = crate::rules::adjournment::commitment(&nonce, "Nbd2!").unwrap();
        let secret = Secret {
            mv: "Nbd2!".into(),
            nonce: nonce.clone(),
        };
        c.keep(&commitment, &secret).unwrap();
        let mode = fs::metadata(dir.join("custody.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let raw = fs::read(dir.join("custody").join(format!("{commitment}.bin"))).unwrap();
        assert!(!raw.windows(4).any(|w| w == b"Nbd2"), "plaintext on disk");
        assert!(!raw.windows(nonce.len()).any(|w| w == nonce.as_bytes()));
        // A second open reads the same key.
        let again = Custody::open(&dir).unwrap();
        assert_eq!(again.fetch(&commitment).unwrap(), secret);
        assert!(format!("{secret:?} {again:?}").find("Nbd2").is_none());
        // A record renamed to another commitment does not open.
        let other = "0".repeat(64);
        fs::copy(
            dir.join("custody").join(format!("{commitment}.bin")),
            dir.join("custody").join(format!("{other}.bin")),
        )
        .unwrap();
        assert!(matches!(again.fetch(&other), Err(CustodyError::Damaged(_))));
        assert!(matches!(
            again.fetch(&"1".repeat(64)),
            Err(CustodyError::Missing(_))
        ));
        assert!(matches!(
            again.fetch("../custody.key"),
            Err(CustodyError::BadCommitment(_))
        ));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_short_key_file_is_refused() {
        let dir = scratch("badkey");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("custody.key"), b"short").unwrap();
        assert!(matches!(Custody::open(&dir), Err(CustodyError::BadKey(_))));
        let c = Custody::unavailable(&dir, CustodyError::BadKey(dir.join("custody.key")));
        let secret = Secret {
            mv: "e4".into(),
            nonce: fresh_nonce(),
        };
        assert!(matches!(
            c.keep(&"a".repeat(64), &secret),
            Err(CustodyError::Unavailable(_))
        ));
        let _ = fs::remove_dir_all(&dir);
    }
}
