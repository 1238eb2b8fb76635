//! One copy of a file's content however many proposals start from it: proposals of the same
//! file read the same bytes (an agent's dry-runs against one large file, say), so the bytes
//! and their decoded text are kept once, by content hash, for as long as a proposal holds
//! them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use sha2::{Digest, Sha256};

use crate::edit::text::Text;

/// The contents live now, by hash (entries whose proposals are all gone are swept).
type Table = HashMap<[u8; 32], (Weak<[u8]>, Weak<Text>)>;

fn table() -> &'static Mutex<Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// `before` and its decoded `text`, shared with every other proposal holding the same bytes.
/// A new file (`None`) has its own (empty) text.
pub(crate) fn intern(before: Option<Vec<u8>>, text: Text) -> (Option<Arc<[u8]>>, Arc<Text>) {
    let Some(bytes) = before else {
        return (None, Arc::new(text));
    };
    let key: [u8; 32] = Sha256::digest(&bytes).into();
    let mut t = table()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // The same SHA-256 is the same bytes (and so the same decoded text): nothing is compared
    // under the lock.
    if let Some((b, x)) = t.get(&key)
        && let (Some(b), Some(x)) = (b.upgrade(), x.upgrade())
        && b.len() == bytes.len()
    {
        return (Some(b), x);
    }
    let (b, x): (Arc<[u8]>, Arc<Text>) = (bytes.into(), Arc::new(text));
    if t.len() >= 64 {
        t.retain(|_, (b, _)| b.strong_count() > 0);
    }
    t.insert(key, (Arc::downgrade(&b), Arc::downgrade(&x)));
    (Some(b), x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_bytes_are_kept_once_and_different_ones_apart() {
        let bytes = b"fn main() {}\r\n".to_vec();
        let text = || Text::decode(&bytes).unwrap();
        let (a, ta) = intern(Some(bytes.clone()), text());
        let (b, tb) = intern(Some(bytes.clone()), text());
        assert!(Arc::ptr_eq(a.as_ref().unwrap(), b.as_ref().unwrap()));
        assert!(Arc::ptr_eq(&ta, &tb));
        let other = b"fn main() {}\n".to_vec();
        let (c, _) = intern(Some(other.clone()), Text::decode(&other).unwrap());
        assert!(!Arc::ptr_eq(a.as_ref().unwrap(), c.as_ref().unwrap()));
        // Once nobody holds them, they go.
        drop((a, b, ta, tb));
        let (d, _) = intern(Some(bytes.clone()), text());
        assert_eq!(Arc::strong_count(d.as_ref().unwrap()), 1);
    }
}
