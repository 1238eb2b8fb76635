//! The tool definitions `tools/list` returns: names and argument names of the references
//! (Relace, patchitRIGHT, wcgw), descriptions in our own words that teach each edit format
//! and when to pick which, JSON input schemas, an output schema for the envelope, and
//! behaviour annotations.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::args::ToolName;

/// The server's instructions to the agent, sent at initialisation.
pub(crate) const INSTRUCTIONS: &str = "\
patchgate edits files under the project root. Every edit is computed exactly (no model \
guesses), shown to the person who owns the code when their policy asks for it, and written \
atomically with the file's line endings, encoding and indentation kept.

Pick the tool by the size of the change:
- fast_apply: the changed region with `// ... existing code ...` for what stays. Best default \
for code edits.
- patch_file: exact search/replace (one pair or several), an insertion at a line, or a unified \
diff; `dry_run` to preview, then apply_last_dry_run to write without resending.
- batch_patch_files: several files that must change together (all or nothing).
- FileWriteOrEdit: SEARCH/REPLACE blocks, or the whole file when most of it changes.
To find code first: agentic_search (files and line ranges for a question) or \
agentic_retrieval (the same, plus the definitions and uses around the hits); both read only.

Every result has `status`: `ok` (written, or a dry-run computed), `pending` (a person is \
reviewing: call await_review with the run_id, do not resend), `rejected` (nothing written; \
`review.note` says why — adjust before trying again) or `error` (`code` and `message` say \
what to send next). Paths are relative to the project root, or absolute inside it.";

fn schema(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The fields `patch_file` and each `batch_patch_files` entry share.
fn patch_fields() -> serde_json::Map<String, Value> {
    let v = json!({
        "target_file": {
            "type": "string",
            "description": "The file to change: relative to the project root, or absolute inside it."
        },
        "search_content": {
            "type": "string",
            "description": "Exact text to find (whitespace and line breaks included; CRLF files match LF text). Must occur once unless allow_multiple is true. Use with replace_content."
        },
        "replace_content": {
            "type": "string",
            "description": "The text that replaces search_content (empty string deletes it)."
        },
        "replacements": {
            "type": "array",
            "description": "Several exact replacements applied in order, each on the result of the previous one. Use instead of search_content/replace_content.",
            "items": {
                "type": "object",
                "properties": {
                    "search_content": {"type": "string"},
                    "replace_content": {"type": "string"}
                },
                "required": ["search_content", "replace_content"],
                "additionalProperties": false
            }
        },
        "patch_content": {
            "type": "string",
            "description": "A unified diff of this one file (`@@ -a,b +c,d @@` hunks with context lines; `---`/`+++` headers optional). Hunks may be a few lines off; each failing hunk is reported."
        },
        "insert_line": {
            "type": "integer",
            "description": "Insert insert_content so that it becomes this line (1-based); -1 appends at the end of the file."
        },
        "insert_content": {
            "type": "string",
            "description": "The text to insert at insert_line."
        },
        "start_line": {
            "type": "integer",
            "minimum": 1,
            "description": "Only match search_content from this line on (1-based, inclusive)."
        },
        "end_line": {
            "type": "integer",
            "minimum": 1,
            "description": "Only match search_content up to this line (1-based, inclusive)."
        },
        "allow_multiple": {
            "type": "boolean",
            "description": "Replace every occurrence of search_content instead of requiring exactly one.",
            "default": false
        }
    });
    match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

/// The optional `revision_of` of every edit tool (docs/DESIGN.md §3, §4).
fn revision_of_field() -> Value {
    json!({
        "type": "string",
        "description": "The run_id of a review a person rejected that this edit answers (the same client's, touching the same file). Without it, an edit counts as the answer only when it changes the lines the rejected edit changed, or lines next to them; an unknown run_id, or one that is not such a rejection, is INVALID_INPUT."
    })
}

fn dry_run_field() -> Value {
    json!({
        "type": "boolean",
        "description": "Only compute the change and return its diff with a run_id; nothing is written until apply_last_dry_run(run_id) within expires_in seconds.",
        "default": false
    })
}

/// The envelope's schema (every tool's output).
fn output_schema() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["ok", "pending", "rejected", "error"]},
            "code": {"type": "string", "description": "Why nothing was written (status error)."},
            "message": {"type": "string"},
            "path": {"type": "string"},
            "paths": {"type": "array", "items": {"type": "string"}},
            "run_id": {"type": "string"},
            "expires_in": {"type": "integer", "description": "Seconds a dry-run stays committable."},
            "dry_run": {"type": "boolean"},
            "diff": {"type": "string", "description": "Unified diff of what was (or would be) written."},
            "review": {
                "type": "object",
                "properties": {
                    "decision": {"type": "string", "enum": ["accept", "reject"]},
                    "note": {"type": "string"},
                    "edited_by_reviewer": {"type": "boolean"},
                    "hunks_accepted": {"type": "integer"},
                    "hunks_total": {"type": "integer"}
                }
            },
            "warnings": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["status", "message", "dry_run"]
    }))
}

const FAST_APPLY: &str = "\
Edit a file by sending only the region that changes, with placeholder comments for the code \
that stays. The merge is exact and local (no model), so it is fast and never rewrites code \
you did not show.

Write the snippet like the final code, eliding unchanged stretches with a placeholder line in \
the file's comment style: `// ... existing code ...`, `# ... existing code ...`, \
`<!-- ... existing code ... -->`, `-- ... existing code ...`.
- Start and end the snippet with 1-3 unchanged lines copied verbatim from the file around \
the change (anchors); keep the file's indentation.
- To delete lines, show the lines before and after them with no placeholder in between, or \
write `// remove <name>` for a whole block.
- One contiguous region per call; for edits far apart, make separate calls.
- If `path` does not exist, the snippet (without placeholders) becomes the new file.

Errors: NEEDS_MORE_CONTEXT (the anchors fit several places or none: the message lists the \
candidate lines; resend with 1-3 unique lines before and after), APPLY_NOOP (the snippet \
changes nothing), MARKER_LEAKAGE, TRUNCATION_DETECTED, BLAST_RADIUS_EXCEEDED (the merge \
would remove much more than the snippet suggests: use smaller edits or `// remove`). \
`status: pending` means a person is reviewing: call await_review with the run_id.";

const PATCH_FILE: &str = "\
Change one file exactly. Give `target_file` and one of:
- `search_content` + `replace_content`: replace text that occurs exactly once (copy it \
verbatim, including indentation). `allow_multiple: true` replaces every occurrence; \
`start_line`/`end_line` limit where to look.
- `replacements`: a list of {search_content, replace_content}, applied in order.
- `insert_line` + `insert_content`: insert so the text becomes that line (-1: append).
- `patch_content`: a unified diff of this file.
Nothing is guessed: AMBIGUOUS_MATCH lists every place the text occurs (add surrounding lines \
or use start_line/end_line), NO_MATCH shows the closest lines of the file.

With `dry_run: true` nothing is written: the result carries the diff, a `run_id` and \
`expires_in` (seconds); call apply_last_dry_run with the run_id to write exactly that result \
without sending the edit again.";

const BATCH: &str = "\
Change several files together, all or nothing: every entry of `patches` is a patch_file edit \
(`target_file` plus search_content/replace_content, replacements, insert_line/insert_content \
or patch_content). If any entry fails, no file is written and the error names the entry. \
With `dry_run: true` the whole batch is previewed under one `run_id` for \
apply_last_dry_run.";

const APPLY_LAST: &str = "\
Write a dry-run computed earlier by patch_file or batch_patch_files (`dry_run: true`), by \
its `run_id`, without resending the edit. Fails with RUN_NOT_FOUND (unknown id), \
RUN_EXPIRED (older than expires_in), RUN_ALREADY_USED (committed or decided before) or \
FILE_CHANGED (a file changed since the dry-run: compute a new one). When the project's \
policy asks a person to review, the result may be `pending`: call await_review.";

const WRITE_OR_EDIT: &str = "\
Write a whole file or edit it with SEARCH/REPLACE blocks, chosen by `percentage_to_change` \
(the share of existing lines that change, 0-100):
- above 50, or a file that does not exist yet: `text_or_search_replace_blocks` is the \
complete new content of the file;
- 50 or less: it holds one or more blocks, top to bottom:
<<<<<<< SEARCH
lines copied from the file (enough to be unique, usually 1-3 around the change)
=======
the lines that replace them
>>>>>>> REPLACE
SEARCH must match the file's lines; differences only in trailing or leading whitespace, \
blank lines, typographic quotes or pasted line numbers are tolerated and re-indented to the \
file's style. A block that matches nowhere or in several places fails the whole edit \
(NO_MATCH with the closest lines, AMBIGUOUS_MATCH with every location). `thread_id` is \
accepted for compatibility and not needed.";

const AWAIT: &str = "\
Wait again for a person's decision on a `pending` edit, by its `run_id`. Returns the final \
result (`ok` with the diff that was written, or `rejected` with the reviewer's note) or \
`pending` again after `timeout_s` (default: the server's review timeout). Progress \
notifications are sent while waiting. Never resend a pending edit; wait for it instead.";

const AGENTIC_SEARCH: &str = "\
Find the code that answers a question about this project: returns the relevant files, most \
relevant first, each with the line ranges [start, end] (1-based, inclusive) worth reading. \
Ask in words or names (\"where are sessions saved\", \"SaveUploadedFile permissions\"). A \
local index of identifiers, definitions and paths answers in milliseconds (`turns_used` 0); \
when the user configured a model, it then explores from those hits (view, grep, glob) for a \
bounded number of turns. `partial: true` means the turns or the time ran out and the answer \
is what was found so far. Read-only: no review, nothing written; files a rule denies and \
ignored files are never shown.";

const FAST_SEARCH: &str = "\
Deprecated alias of agentic_search, kept for clients written against it: the same answer \
(the relevant files, most relevant first, with the line ranges worth reading, `turns_used` and \
`partial`) plus a `_deprecated` note. Call agentic_search instead; this name will go away.";

const AGENTIC_RETRIEVAL: &str = "\
Two-stage code retrieval: the index's best hits are the hints (`hints_used` says how many), \
then the names they define are followed to where they are used, and the names they call to \
where they are defined. Returns the hinted files first, then the files the links reach, each \
with the line ranges that hold the link. When the user configured a model, it then explores \
from these as agentic_search does. Use it to see a feature's call graph around the places \
that match the question. Read-only.";

/// The input schema of the search tools: one query.
fn search_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "What to find, in natural language or by names of functions, types or files."
            }
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

/// The search tools' answer.
fn search_output() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "explanation": {"type": "string"},
            "files": {
                "type": "object",
                "description": "Absolute path -> line ranges [[start, end], ...], most relevant file first.",
                "additionalProperties": {
                    "type": "array",
                    "items": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}
                }
            },
            "turns_used": {"type": "integer"},
            "partial": {"type": "boolean"},
            "hints_used": {"type": "integer"},
            "error": {"type": "string"},
            "_deprecated": {"type": "string"}
        },
        "required": ["query", "explanation", "files", "turns_used", "partial"]
    }))
}

/// A search tool: read-only, one query in, files and ranges out.
fn search_tool(name: ToolName, description: &'static str) -> Tool {
    let annotations = ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false);
    Tool::new(name.as_str(), description, schema(search_input()))
        .with_raw_output_schema(search_output())
        .with_annotations(annotations)
}

/// The definition of one tool.
pub fn tool(name: ToolName) -> Tool {
    let (description, input) = match name {
        ToolName::FastApply => (FAST_APPLY, fast_apply_input()),
        ToolName::PatchFile => {
            let mut props = patch_fields();
            props.insert("dry_run".into(), dry_run_field());
            props.insert("revision_of".into(), revision_of_field());
            let input = json!({
                "type": "object",
                "properties": props,
                "required": ["target_file"],
                "additionalProperties": false
            });
            (PATCH_FILE, input)
        }
        ToolName::BatchPatchFiles => (BATCH, batch_input()),
        ToolName::ApplyLastDryRun => (APPLY_LAST, apply_last_input()),
        ToolName::FileWriteOrEdit => (WRITE_OR_EDIT, write_or_edit_input()),
        ToolName::AwaitReview => (AWAIT, await_input()),
        ToolName::AgenticSearch => return search_tool(name, AGENTIC_SEARCH),
        ToolName::FastSearch => return search_tool(name, FAST_SEARCH),
        ToolName::AgenticRetrieval => return search_tool(name, AGENTIC_RETRIEVAL),
    };
    // Every tool but await_review writes files; none reaches past the project.
    let writes = name != ToolName::AwaitReview;
    let annotations = ToolAnnotations::new()
        .read_only(!writes)
        .destructive(writes)
        .idempotent(!writes)
        .open_world(false);
    Tool::new(name.as_str(), description, schema(input))
        .with_raw_output_schema(output_schema())
        .with_annotations(annotations)
}

/// The input schema of `fast_apply`: a lazy snippet for one file.
fn fast_apply_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "The file to edit or create: relative to the project root, or absolute inside it."
            },
            "edit_snippet": {
                "type": "string",
                "description": "The changed region, with unchanged stretches replaced by `// ... existing code ...` (in the file's comment syntax) and 1-3 verbatim anchor lines before and after the change."
            },
            "instruction": {
                "type": "string",
                "description": "Optional hint where the snippet goes when its anchors are not enough (\"in function parse\", \"after the imports\")."
            },
            "revision_of": revision_of_field()
        },
        "required": ["path", "edit_snippet"],
        "additionalProperties": false
    })
}

/// The input schema of `batch_patch_files`: patch_file edits of several files, all or none.
fn batch_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "patches": {
                "type": "array",
                "minItems": 1,
                "description": "One patch_file edit per file.",
                "items": {
                    "type": "object",
                    "properties": patch_fields(),
                    "required": ["target_file"],
                    "additionalProperties": false
                }
            },
            "dry_run": dry_run_field(),
            "revision_of": revision_of_field()
        },
        "required": ["patches"],
        "additionalProperties": false
    })
}

/// The input schema of `apply_last_dry_run`: a dry-run's run_id.
fn apply_last_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "run_id": {
                "type": "string",
                "description": "The run_id a dry-run returned."
            }
        },
        "required": ["run_id"],
        "additionalProperties": false
    })
}

/// The input schema of `FileWriteOrEdit`: wcgw's whole-file or SEARCH/REPLACE edit.
fn write_or_edit_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "The file: absolute inside the project (~ allowed) or relative to the project root."
            },
            "percentage_to_change": {
                "type": "integer",
                "minimum": 0,
                "maximum": 100,
                "description": "Your estimate of the share of existing lines that change: above 50 sends the whole file, 50 or less sends SEARCH/REPLACE blocks."
            },
            "text_or_search_replace_blocks": {
                "type": "string",
                "description": "The complete file content (percentage above 50, or a new file) or SEARCH/REPLACE blocks (50 or less)."
            },
            "thread_id": {
                "type": "string",
                "description": "Accepted for compatibility with wcgw; not needed."
            },
            "revision_of": revision_of_field()
        },
        "required": ["file_path", "percentage_to_change", "text_or_search_replace_blocks"],
        "additionalProperties": false
    })
}

/// The input schema of `await_review`: wait on a pending edit.
fn await_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "run_id": {
                "type": "string",
                "description": "The run_id of the pending edit."
            },
            "timeout_s": {
                "type": "integer",
                "minimum": 0,
                "description": "How long to wait, in seconds (default: the server's review timeout; at most 3600)."
            }
        },
        "required": ["run_id"],
        "additionalProperties": false
    })
}

/// Every tool.
pub fn all() -> Vec<Tool> {
    ToolName::ALL.into_iter().map(tool).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_name_the_reference_arguments() {
        let tools = all();
        let props = |name: &str| -> Vec<String> {
            let t = tools.iter().find(|t| t.name == name).unwrap();
            t.input_schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        for (tool, names) in [
            (
                "fast_apply",
                &["path", "edit_snippet", "instruction", "revision_of"][..],
            ),
            (
                "patch_file",
                &[
                    "target_file",
                    "search_content",
                    "replace_content",
                    "patch_content",
                    "replacements",
                    "insert_line",
                    "insert_content",
                    "start_line",
                    "end_line",
                    "allow_multiple",
                    "dry_run",
                    "revision_of",
                ][..],
            ),
            (
                "batch_patch_files",
                &["patches", "dry_run", "revision_of"][..],
            ),
            ("apply_last_dry_run", &["run_id"][..]),
            (
                "FileWriteOrEdit",
                &[
                    "file_path",
                    "percentage_to_change",
                    "text_or_search_replace_blocks",
                    "thread_id",
                    "revision_of",
                ][..],
            ),
            ("await_review", &["run_id", "timeout_s"][..]),
            ("agentic_search", &["query"][..]),
            ("fast_search", &["query"][..]),
            ("agentic_retrieval", &["query"][..]),
        ] {
            let have = props(tool);
            for n in names {
                assert!(have.contains(&n.to_string()), "{tool} lacks {n}");
            }
            assert_eq!(have.len(), names.len(), "{tool}: {have:?}");
        }
    }

    #[test]
    fn only_await_review_and_the_searches_are_read_only() {
        for t in all() {
            let a = t.annotations.clone().unwrap();
            let ro = a.read_only_hint == Some(true);
            let reads = t.name == "await_review"
                || t.name.contains("search")
                || t.name == "agentic_retrieval";
            assert_eq!(ro, reads, "{}", t.name);
            assert_eq!(a.destructive_hint == Some(true), !ro, "{}", t.name);
            assert_eq!(a.open_world_hint, Some(false));
        }
    }
}
