//! Lazy snippets (`fast_apply`, DESIGN §5.1). The deterministic merge lands with the next
//! issue; until then the engine declines with `NOT_IMPLEMENTED`.

use super::{Error, ErrorCode, Merged, Result};

/// Merge a lazy snippet into `content`.
pub fn merge(_content: &str, _snippet: &str, _instruction: Option<&str>) -> Result<Merged> {
    Err(Error::new(
        ErrorCode::NotImplemented,
        "the lazy-snippet merge is not implemented yet",
    ))
}
