//! Content hashes: the SHA-256 of some bytes, as hex (the hash guard, and short stable names
//! in the state directory).

use sha2::{Digest, Sha256};

/// The SHA-256 of `bytes`, hex.
pub(crate) fn hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_sha256_hex() {
        assert_eq!(hash(b"").len(), 64);
        assert_ne!(hash(b"a"), hash(b"b"));
        assert_eq!(
            hash(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
