//! The optional model fallback for lazy snippets (docs/DESIGN.md §5.1 step 5): an OpenAI-compatible
//! `chat/completions` endpoint, called only when the deterministic merge declines. Its answer
//! passes the same guards as a deterministic merge. The engines never see this adapter.

use serde_json::json;

use crate::chat::Chat;
use crate::edit::{Hints, Merged, lazy, text::normalize_newlines};
use crate::error::{Error, ErrorCode, Result};
use crate::workspace::config::FallbackConfig;

const SYSTEM_PROMPT: &str = "You merge code edits into files. You receive the current file \
and an edit snippet in which unchanged code is elided by placeholder comments such as \
`// ... existing code ...`. Reply with the complete merged file: apply every change in the \
snippet, replace every placeholder with the original code it stands for, and keep all other \
lines exactly as they are. Reply with the file content only: no explanation, no code fence.";

/// A configured fallback endpoint.
#[derive(Debug, Clone)]
pub struct Fallback {
    chat: Chat,
}

impl Fallback {
    /// Build the client for `config`; `None` when the section is disabled.
    pub fn from_config(config: &FallbackConfig) -> Result<Option<Fallback>> {
        Ok(Chat::from_config(config)?.map(|chat| Fallback { chat }))
    }

    /// Ask the model for the merged file.
    pub async fn complete(
        &self,
        original: &str,
        snippet: &str,
        hints: &Hints<'_>,
    ) -> Result<String> {
        let mut user = String::new();
        if let Some(path) = hints.path {
            user.push_str(&format!("<path>{path}</path>\n"));
        }
        if let Some(instruction) = hints.instruction.filter(|i| !i.trim().is_empty()) {
            user.push_str(&format!("<instruction>{instruction}</instruction>\n"));
        }
        user.push_str(&format!(
            "<code>\n{original}</code>\n<update>\n{snippet}\n</update>"
        ));
        let body = json!({
            "temperature": 0,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": user},
            ],
        });
        let value = self.chat.post(body, "the fallback model").await?;
        let failed = |what: String| {
            Error::new(
                ErrorCode::FsError,
                format!("the fallback model failed: {what}"),
            )
        };
        let content = value["choices"][0]["message"]["content"]
            .as_str()
            .ok_or_else(|| failed("the answer has no choices[0].message.content".to_string()))?;
        Ok(content.to_string())
    }
}

/// The deterministic merge, on a blocking thread: a large merge must not hold up the async
/// runtime that serves the other clients meanwhile.
async fn merge_blocking(original: &str, snippet: &str, hints: &Hints<'_>) -> Result<Merged> {
    let (original, snippet) = (original.to_owned(), snippet.to_owned());
    let path = hints.path.map(str::to_owned);
    let instruction = hints.instruction.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let hints = Hints {
            path: path.as_deref(),
            instruction: instruction.as_deref(),
        };
        lazy::merge(&original, &snippet, &hints)
    })
    .await
    .map_err(|e| Error::new(ErrorCode::FsError, format!("the merge stopped: {e}")))?
}

/// Merge a lazy snippet deterministically, and when that declines ask the fallback (if any).
/// The model's answer passes the same guards; when the model cannot help, the deterministic
/// refusal is returned with a note.
pub async fn merge_lazy(
    fallback: Option<&Fallback>,
    original: &str,
    snippet: &str,
    hints: &Hints<'_>,
) -> Result<Merged> {
    let declined = match merge_blocking(original, snippet, hints).await {
        Ok(merged) => return Ok(merged),
        // Nothing a model could do better: bad input, a new file, no change, too large.
        Err(e)
            if matches!(
                e.code,
                ErrorCode::InvalidInput | ErrorCode::ApplyNoop | ErrorCode::FileTooLarge
            ) || original.is_empty() =>
        {
            return Err(e);
        }
        Err(e) => e,
    };
    let Some(fallback) = fallback else {
        return Err(declined);
    };
    let answer = match fallback.complete(original, snippet, hints).await {
        Ok(answer) => answer,
        Err(e) => {
            return Err(Error::new(
                declined.code,
                format!("{} ({})", declined.message, e.message),
            ));
        }
    };
    let mut merged = normalize_newlines(&answer).into_owned();
    let markdown = lazy::is_markdown(hints.path.and_then(|p| p.rsplit_once('.')).map(|(_, e)| e));
    if !markdown {
        merged = lazy::strip_fence(&merged).to_string();
    }
    // Models drop or add the final line break: follow the file.
    let wants_newline = original.ends_with('\n');
    while merged.ends_with("\n\n") && !original.ends_with("\n\n") {
        merged.pop();
    }
    if wants_newline && !merged.ends_with('\n') {
        merged.push('\n');
    } else if !wants_newline && merged.ends_with('\n') {
        merged.pop();
    }
    lazy::check_external(original, snippet, hints, &merged)
}
