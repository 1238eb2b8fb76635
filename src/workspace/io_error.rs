//! Mapping an I/O error on a path to the error vocabulary (`PERMISSION_ERROR`, `FS_ERROR`).

use crate::error::{Error, ErrorCode};

/// Map an I/O error on `path` to the error vocabulary.
pub(crate) fn io_error(path: &str, what: &str, e: &std::io::Error) -> Error {
    let code = match e.kind() {
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
            ErrorCode::PermissionError
        }
        _ => ErrorCode::FsError,
    };
    Error::new(code, format!("cannot {what} `{path}`: {e}"))
}
