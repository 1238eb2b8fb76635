//! The model's exploration loop (`agentic_search` with a model configured): the model gets
//! the query and the index's hits, calls the read-only tools of [`Explorer`] (`view_file`,
//! `grep`, `glob`, `list_dir`) and ends with `report_back` (its files and ranges). The loop is
//! bounded by a number of turns and a deadline (which also stops the tool calls in progress),
//! by the tool calls of one reply run and by the bytes of tool results sent back; when the
//! turns or the time run out, or the model fails, the answer is the index's hits with
//! `partial: true` and the reason.

use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::explore::Explorer;
use super::{Answer, merge_ranges};
use crate::chat::Chat;
use crate::error::Result;
use crate::workspace::config::SearchConfig;
use crate::workspace::userconfig::UserConfig;

const SYSTEM_PROMPT: &str = "You find the code that answers a question about a codebase. \
You get the question and the files a keyword index ranks highest (with line ranges of their \
best-matching definitions); they are hints, not the answer. Explore with the tools: \
view_file reads lines, grep searches lines by regular expression, glob finds files by name, \
list_dir lists a directory. Paths are relative to the project root. Use few turns. When you \
know, call report_back once with a short explanation and the relevant files, most relevant \
first, each with the line ranges [start, end] (1-based, inclusive) that matter.";

/// The most files a model's report may name, and ranges per file.
const MAX_REPORTED_FILES: usize = 50;
const MAX_REPORTED_RANGES: usize = 20;

/// The model and the loop's bounds.
#[derive(Debug, Clone)]
pub struct SearchModel {
    chat: Chat,
    /// The most turns (model calls) of one search.
    pub max_turns: u32,
    /// The longest one search takes.
    pub timeout: Duration,
}

impl SearchModel {
    /// The search model of the user's config: `[fallback]`'s endpoint, `[search]`'s bounds;
    /// `None` without a model or with `[search] agentic = false`.
    pub fn from_user(user: &UserConfig) -> Result<Option<SearchModel>> {
        let search = user.search.clone().unwrap_or_default();
        let Some(fallback) = user.fallback.as_ref().filter(|_| search.agentic) else {
            return Ok(None);
        };
        Ok(Chat::from_config(fallback)?.map(|chat| SearchModel::new(chat, &search)))
    }

    /// A model with the bounds of `search`.
    pub fn new(chat: Chat, search: &SearchConfig) -> SearchModel {
        SearchModel {
            chat,
            max_turns: search.max_turns.clamp(1, 50),
            timeout: Duration::from_secs(search.timeout_s.clamp(1, 3600)),
        }
    }
}

fn function(name: &str, description: &str, properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        }
    })
}

/// The tools offered to the model, in OpenAI's function format.
fn tool_specs() -> Value {
    json!([
        function(
            "view_file",
            "Read lines of a file (at most 400 per call).",
            json!({"path": {"type": "string"}, "start_line": {"type": "integer"}, "end_line": {"type": "integer"}}),
            &["path"],
        ),
        function(
            "grep",
            "List lines matching a regular expression, as path:line: text (at most 100).",
            json!({"pattern": {"type": "string"}, "path": {"type": "string", "description": "a directory or a glob to search in"}, "ignore_case": {"type": "boolean"}}),
            &["pattern"],
        ),
        function(
            "glob",
            "List files whose path matches a glob; a pattern without / matches file names.",
            json!({"pattern": {"type": "string"}}),
            &["pattern"],
        ),
        function(
            "list_dir",
            "List a directory's files and subdirectories (the root when no path).",
            json!({"path": {"type": "string"}}),
            &[],
        ),
        function(
            "report_back",
            "End the search: the explanation and the relevant files, most relevant first.",
            json!({"explanation": {"type": "string"}, "files": {"type": "object", "description": "path -> [[start, end], ...]", "additionalProperties": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}}}),
            &["explanation", "files"],
        ),
    ])
}

/// The question and the hints, as the first user message.
fn first_message(query: &str, seeds: &Answer) -> String {
    let mut m = format!("Question: {query}\n\nThe index's best files:\n");
    if seeds.files.is_empty() {
        m.push_str("(none matched the question's words)\n");
    }
    for (path, ranges) in &seeds.files {
        let r: Vec<String> = ranges.iter().map(|[a, b]| format!("{a}-{b}")).collect();
        m.push_str(&format!("- {path}: lines {}\n", r.join(", ")));
    }
    m
}

/// At most this many tool calls of one reply are run; the others are answered "not run".
const MAX_CALLS_PER_REPLY: usize = 16;

/// The tool results of one search hold at most about this many bytes in all; past it, calls
/// are answered "not run".
const MAX_RESULT_BYTES: usize = 1 << 20;

/// One tool result holds at most this many bytes.
const MAX_ONE_RESULT: usize = 64 << 10;

/// `text` cut to at most `max` bytes (on a character boundary), saying so.
fn cut(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    text.push_str("\n… (cut: narrow the range or the pattern)");
    text
}

/// Run one tool call; errors become text the model reads.
fn run_tool(explorer: &Explorer, name: &str, args: &Map<String, Value>) -> String {
    let s = |k: &str| args.get(k).and_then(Value::as_str);
    let n = |k: &str| args.get(k).and_then(Value::as_u64);
    let result = match name {
        "view_file" => match s("path") {
            Some(p) => explorer.view_file(p, n("start_line"), n("end_line")),
            None => Err(crate::error::Error::invalid_input("view_file needs `path`")),
        },
        "grep" => match s("pattern") {
            Some(p) => explorer.grep(
                p,
                s("path"),
                args.get("ignore_case")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            ),
            None => Err(crate::error::Error::invalid_input("grep needs `pattern`")),
        },
        "glob" => match s("pattern") {
            Some(p) => explorer.glob(p),
            None => Err(crate::error::Error::invalid_input("glob needs `pattern`")),
        },
        "list_dir" => explorer.list_dir(s("path")),
        other => Err(crate::error::Error::invalid_input(format!(
            "no tool `{other}`: use view_file, grep, glob, list_dir or report_back"
        ))),
    };
    result.unwrap_or_else(|e| format!("error: {}", e.message))
}

/// The model's report as an answer: files it named that a search may see, with sane ranges.
fn report(explorer: &Explorer, query: &str, args: &Map<String, Value>, turns: u32) -> Answer {
    let mut files = Vec::new();
    let mut dropped = Vec::new();
    if let Some(Value::Object(named)) = args.get("files") {
        for (path, ranges) in named.iter().take(MAX_REPORTED_FILES) {
            let Ok(rel) = explorer.resolve(path) else {
                dropped.push(path.clone());
                continue;
            };
            let mut ranges: Vec<[u32; 2]> = ranges
                .as_array()
                .into_iter()
                .flatten()
                .take(MAX_REPORTED_RANGES)
                .filter_map(|r| {
                    let a = r.get(0)?.as_u64()?.clamp(1, u64::from(u32::MAX)) as u32;
                    let b = r.get(1).and_then(Value::as_u64).unwrap_or(u64::from(a));
                    Some([a, (b.min(u64::from(u32::MAX)) as u32).max(a)])
                })
                .collect();
            merge_ranges(&mut ranges);
            if !files.iter().any(|(p, _)| p == &rel) {
                files.push((rel, ranges));
            }
        }
    }
    Answer {
        query: query.to_string(),
        explanation: args
            .get("explanation")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        files,
        turns_used: turns,
        error: (!dropped.is_empty()).then(|| {
            format!(
                "the model named files outside the root or refused by a rule, left out: {}",
                dropped.join(", ")
            )
        }),
        ..Answer::default()
    }
}

/// The index's answer, marked partial with the reason.
fn fallback(seeds: &Answer, turns: u32, why: String) -> Answer {
    Answer {
        turns_used: turns,
        partial: true,
        explanation: format!("{} {}", why, seeds.explanation),
        error: Some(why),
        ..seeds.clone()
    }
}

/// Explore from `seeds` (the index's answer) until the model reports back, the turns or the
/// time run out, or the model fails. `progress` hears of each turn.
pub async fn explore(
    model: &SearchModel,
    explorer: &Explorer,
    query: &str,
    seeds: &Answer,
    progress: &mut (dyn FnMut(u32, u32) + Send),
) -> Answer {
    let deadline = Instant::now() + model.timeout;
    let mut sent = 0usize;
    let mut messages = vec![
        json!({"role": "system", "content": SYSTEM_PROMPT}),
        json!({"role": "user", "content": first_message(query, seeds)}),
    ];
    for turn in 1..=model.max_turns {
        progress(turn, model.max_turns);
        let body = json!({"temperature": 0, "messages": messages, "tools": tool_specs()});
        let left = deadline.saturating_duration_since(Instant::now());
        let reply =
            match tokio::time::timeout(left, model.chat.post(body, "the search model")).await {
                Err(_) => {
                    let why = format!(
                        "The model did not finish within {} s; these are the index's hits.",
                        model.timeout.as_secs()
                    );
                    return fallback(seeds, turn - 1, why);
                }
                Ok(Err(e)) => return fallback(seeds, turn - 1, format!("{}.", e.message)),
                Ok(Ok(v)) => v,
            };
        let message = reply["choices"][0]["message"].clone();
        let calls = message["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        messages.push(message);
        if calls.is_empty() {
            messages.push(json!({"role": "user", "content": "Call report_back with the relevant files and their line ranges."}));
            continue;
        }
        for (k, call) in calls.into_iter().enumerate() {
            if Instant::now() >= deadline {
                let why = format!(
                    "The model did not finish within {} s; these are the index's hits.",
                    model.timeout.as_secs()
                );
                return fallback(seeds, turn, why);
            }
            let name = call["function"]["name"].as_str().unwrap_or_default();
            let args: Map<String, Value> = match &call["function"]["arguments"] {
                Value::String(s) => serde_json::from_str(s).unwrap_or_default(),
                Value::Object(m) => m.clone(),
                _ => Map::new(),
            };
            if name == "report_back" {
                return report(explorer, query, &args, turn);
            }
            let content = if k >= MAX_CALLS_PER_REPLY {
                format!(
                    "error: not run: at most {MAX_CALLS_PER_REPLY} tool calls of one reply are \
                     run; ask for fewer, or call report_back"
                )
            } else if sent >= MAX_RESULT_BYTES {
                "error: not run: the tool results so far are as much as this search may read; \
                 call report_back"
                    .to_string()
            } else {
                let x = explorer.clone().until(deadline.into_std());
                let name_owned = name.to_string();
                let left = deadline.saturating_duration_since(Instant::now());
                let work = tokio::task::spawn_blocking(move || run_tool(&x, &name_owned, &args));
                match tokio::time::timeout(left, work).await {
                    Err(_) => {
                        let why = format!(
                            "The model did not finish within {} s; these are the index's hits.",
                            model.timeout.as_secs()
                        );
                        return fallback(seeds, turn, why);
                    }
                    Ok(done) => done.unwrap_or_else(|e| format!("error: the tool stopped: {e}")),
                }
            };
            let content = cut(content, MAX_ONE_RESULT);
            sent += content.len();
            messages.push(json!({
                "role": "tool",
                "tool_call_id": call["id"].as_str().unwrap_or_default(),
                "content": content,
            }));
        }
    }
    let why = format!(
        "The model did not report back within {} turns; these are the index's hits.",
        model.max_turns
    );
    fallback(seeds, model.max_turns, why)
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn a_long_result_is_cut_on_a_character_boundary_and_says_so() {
        let text = "é".repeat(10);
        let out = cut(text.clone(), 5);
        assert!(out.starts_with("éé") && !out.starts_with("ééé"), "{out}");
        assert!(out.contains("(cut:"), "{out}");
        assert_eq!(cut(text.clone(), 100), text);
    }
}
