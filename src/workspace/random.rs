//! Unguessable random values (bearer tokens, run ids, temp file names) from the OS random
//! source, failing closed: when the source fails the caller gets an error, never a value made
//! from the clock or anything else guessable.

/// `N` random bytes from the OS random source; an error when it fails.
pub(crate) fn bytes<const N: usize>() -> std::io::Result<[u8; N]> {
    bytes_from(|buf| {
        getrandom::getrandom(buf).map_err(|e| match e.raw_os_error() {
            Some(code) => std::io::Error::from_raw_os_error(code),
            None => std::io::Error::other(e.to_string()),
        })
    })
}

/// `N` random bytes as `2N` lowercase hex characters; an error when the OS source fails.
pub(crate) fn hex<const N: usize>() -> std::io::Result<String> {
    Ok(to_hex(&bytes::<N>()?))
}

/// A fresh bearer token: 128 random bits as 32 hex characters; an error when the OS random
/// source fails (a gate without a token it can trust must not start).
pub fn token() -> std::io::Result<String> {
    hex::<16>()
}

/// `N` bytes filled by `source`; its failure becomes the error (the one place that decides
/// what a failed source means, so a test can hand it a failing one).
fn bytes_from<const N: usize>(
    source: impl FnOnce(&mut [u8]) -> std::io::Result<()>,
) -> std::io::Result<[u8; N]> {
    let mut out = [0u8; N];
    source(&mut out)
        .map_err(|e| std::io::Error::new(e.kind(), format!("the OS random source failed: {e}")))?;
    Ok(out)
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_32_hex_characters_and_distinct() {
        let (a, b) = (token().unwrap(), token().unwrap());
        assert_eq!(a.len(), 32);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, b);
        assert_eq!(hex::<6>().unwrap().len(), 12);
        assert_ne!(bytes::<12>().unwrap(), bytes::<12>().unwrap());
    }

    #[test]
    fn a_failing_source_is_an_error_not_a_value() {
        let failed = bytes_from::<16>(|_| Err(std::io::Error::other("no entropy")));
        let e = failed.unwrap_err();
        assert!(e.to_string().contains("the OS random source failed"), "{e}");
        assert!(e.to_string().contains("no entropy"), "{e}");
        // A source that writes part of the buffer and then fails still gives nothing.
        let partial = bytes_from::<4>(|buf| {
            buf[0] = 7;
            Err(std::io::Error::other("short read"))
        });
        assert!(partial.is_err());
    }
}
