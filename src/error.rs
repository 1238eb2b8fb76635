//! The error vocabulary shared by every layer: one `ErrorCode` per outcome an agent or a
//! person can act on (docs/DESIGN.md §3), and `Error`, a code with a message that says what to do next.
//!
//! This module sits above the engines in the layer order: it knows nothing of files, MCP or
//! terminals, so every layer may use it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The stable error codes of docs/DESIGN.md §3 (the references' names where they exist).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// The request is malformed: a syntax error, a missing argument, a bad value.
    InvalidInput,
    /// A path escapes the root or names something that may not be edited.
    InvalidPath,
    /// The edit could not be placed without guessing.
    NeedsMoreContext,
    /// The text to replace occurs more than once.
    AmbiguousMatch,
    /// The text to replace does not occur.
    NoMatch,
    /// The edit changes nothing although it asked for a change.
    ApplyNoop,
    /// The edit would change more of the file than a snippet edit should.
    BlastRadiusExceeded,
    /// Placeholder text would end up in the file.
    MarkerLeakage,
    /// The result lost most of the file without being asked to.
    TruncationDetected,
    /// The file changed since the edit was proposed.
    FileChanged,
    /// No dry-run with this run_id.
    RunNotFound,
    /// The dry-run expired.
    RunExpired,
    /// The dry-run was already committed or decided.
    RunAlreadyUsed,
    /// A path rule forbids editing this path.
    DeniedByRule,
    /// Nobody decided in time.
    ReviewTimeout,
    /// The reviewer went away before deciding.
    ReviewerGone,
    /// The file is binary.
    BinaryFile,
    /// The file is not text in an encoding patchgate can keep byte for byte.
    EncodingError,
    /// The file is larger than the configured cap.
    FileTooLarge,
    /// The operating system refused access.
    PermissionError,
    /// Any other file-system failure.
    FsError,
}

impl ErrorCode {
    /// The wire name, e.g. `NO_MATCH`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::InvalidPath => "INVALID_PATH",
            ErrorCode::NeedsMoreContext => "NEEDS_MORE_CONTEXT",
            ErrorCode::AmbiguousMatch => "AMBIGUOUS_MATCH",
            ErrorCode::NoMatch => "NO_MATCH",
            ErrorCode::ApplyNoop => "APPLY_NOOP",
            ErrorCode::BlastRadiusExceeded => "BLAST_RADIUS_EXCEEDED",
            ErrorCode::MarkerLeakage => "MARKER_LEAKAGE",
            ErrorCode::TruncationDetected => "TRUNCATION_DETECTED",
            ErrorCode::FileChanged => "FILE_CHANGED",
            ErrorCode::RunNotFound => "RUN_NOT_FOUND",
            ErrorCode::RunExpired => "RUN_EXPIRED",
            ErrorCode::RunAlreadyUsed => "RUN_ALREADY_USED",
            ErrorCode::DeniedByRule => "DENIED_BY_RULE",
            ErrorCode::ReviewTimeout => "REVIEW_TIMEOUT",
            ErrorCode::ReviewerGone => "REVIEWER_GONE",
            ErrorCode::BinaryFile => "BINARY_FILE",
            ErrorCode::EncodingError => "ENCODING_ERROR",
            ErrorCode::FileTooLarge => "FILE_TOO_LARGE",
            ErrorCode::PermissionError => "PERMISSION_ERROR",
            ErrorCode::FsError => "FS_ERROR",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error with a stable code and a message written for the agent or person who must act.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{code}: {message}")]
pub struct Error {
    /// Which outcome this is.
    pub code: ErrorCode,
    /// What happened and what to send next.
    pub message: String,
}

impl Error {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    /// `INVALID_INPUT` with `message`.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidInput, message)
    }

    /// The `{"code": …, "message": …}` object printed by the command line and the envelope.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "code": self.code, "message": self.message })
    }
}

/// Result with the shared [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialize_to_their_wire_names() {
        let json = serde_json::to_string(&ErrorCode::BlastRadiusExceeded).unwrap();
        assert_eq!(json, "\"BLAST_RADIUS_EXCEEDED\"");
        assert_eq!(
            ErrorCode::BlastRadiusExceeded.as_str(),
            "BLAST_RADIUS_EXCEEDED"
        );
        let back: ErrorCode = serde_json::from_str("\"RUN_NOT_FOUND\"").unwrap();
        assert_eq!(back, ErrorCode::RunNotFound);
    }

    #[test]
    fn error_json_has_code_and_message() {
        let e = Error::new(ErrorCode::NoMatch, "block 1 not found");
        assert_eq!(
            e.to_json(),
            serde_json::json!({"code": "NO_MATCH", "message": "block 1 not found"})
        );
        assert_eq!(e.to_string(), "NO_MATCH: block 1 not found");
    }
}
