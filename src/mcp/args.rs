//! Tool arguments, parsed once at the edge into a validated [`ToolCall`] (docs/DESIGN.md §8): the
//! references' own argument names (Relace, patchitRIGHT, wcgw), strict about unknown names so
//! an agent that guessed a name hears which ones exist, lenient about what models really send
//! (numbers as strings, `null` for an absent optional).

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::edit::blocks;
use crate::edit::replace::{RawReplaceEdit, Replacement};
use crate::error::{Error, Result};
use crate::review::edit::{EditOp, ProposedEdit};

/// The tools patchgate serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolName {
    /// Relace's lazy-snippet merge.
    FastApply,
    /// patchitRIGHT's single-file patch.
    PatchFile,
    /// patchitRIGHT's all-or-nothing multi-file patch.
    BatchPatchFiles,
    /// patchitRIGHT's commit of a dry-run by run_id.
    ApplyLastDryRun,
    /// wcgw's full write or SEARCH/REPLACE edit.
    FileWriteOrEdit,
    /// Wait again for a pending review.
    AwaitReview,
    /// Relace's code search (the index, and the model's exploration when configured).
    AgenticSearch,
    /// The deprecated alias of `agentic_search`.
    FastSearch,
    /// Relace's two-stage retrieval: the index's hints, then their links followed.
    AgenticRetrieval,
}

impl ToolName {
    /// Every tool, in the order `tools/list` shows them.
    pub(crate) const ALL: [ToolName; 9] = [
        ToolName::FastApply,
        ToolName::PatchFile,
        ToolName::BatchPatchFiles,
        ToolName::ApplyLastDryRun,
        ToolName::FileWriteOrEdit,
        ToolName::AwaitReview,
        ToolName::AgenticSearch,
        ToolName::FastSearch,
        ToolName::AgenticRetrieval,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::FastApply => "fast_apply",
            ToolName::PatchFile => "patch_file",
            ToolName::BatchPatchFiles => "batch_patch_files",
            ToolName::ApplyLastDryRun => "apply_last_dry_run",
            ToolName::FileWriteOrEdit => "FileWriteOrEdit",
            ToolName::AwaitReview => "await_review",
            ToolName::AgenticSearch => "agentic_search",
            ToolName::FastSearch => "fast_search",
            ToolName::AgenticRetrieval => "agentic_retrieval",
        }
    }

    /// Whether the tool only reads (no review, no write).
    pub fn is_search(self) -> bool {
        matches!(
            self,
            ToolName::AgenticSearch | ToolName::FastSearch | ToolName::AgenticRetrieval
        )
    }

    /// The tool of a wire name.
    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// A validated tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCall {
    /// Propose edits (one file, or a batch: all or nothing).
    Edit {
        /// The tool, for the queue and the journal.
        tool: ToolName,
        /// The edits.
        edits: Vec<ProposedEdit>,
        /// Only compute; keep for `apply_last_dry_run`.
        dry_run: bool,
        /// The rejected review this edit declares it answers (docs/DESIGN.md §4).
        revision_of: Option<String>,
    },
    /// Commit a dry-run.
    Commit {
        /// Its id.
        run_id: String,
    },
    /// Wait for a pending review.
    Await {
        /// Its id.
        run_id: String,
        /// How long to wait (the review timeout when absent).
        timeout: Option<Duration>,
    },
    /// Search the code (read-only).
    Search {
        /// Which search tool.
        tool: ToolName,
        /// The query, trimmed.
        query: String,
    },
}

impl ToolCall {
    /// The paths the call names, as given (for error envelopes).
    pub fn paths(&self) -> Vec<String> {
        match self {
            ToolCall::Edit { edits, .. } => edits.iter().map(|e| e.path.clone()).collect(),
            _ => Vec::new(),
        }
    }

    /// Whether the call asked for a dry-run.
    pub fn dry_run(&self) -> bool {
        matches!(self, ToolCall::Edit { dry_run: true, .. })
    }
}

/// The argument names each tool accepts (for the unknown-argument message).
fn accepted(tool: ToolName) -> &'static [&'static str] {
    match tool {
        ToolName::FastApply => &["path", "edit_snippet", "instruction", "revision_of"],
        ToolName::PatchFile => &[
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
        ],
        ToolName::BatchPatchFiles => &["patches", "dry_run", "revision_of"],
        ToolName::ApplyLastDryRun => &["run_id"],
        ToolName::FileWriteOrEdit => &[
            "file_path",
            "percentage_to_change",
            "text_or_search_replace_blocks",
            "thread_id",
            "revision_of",
        ],
        ToolName::AwaitReview => &["run_id", "timeout_s"],
        ToolName::AgenticSearch | ToolName::FastSearch | ToolName::AgenticRetrieval => &["query"],
    }
}

/// The arguments of one tool, checked for unknown names; `null` counts as absent.
struct Args<'a> {
    what: String,
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    fn new(what: String, map: &'a Map<String, Value>, names: &[&str]) -> Result<Args<'a>> {
        let mut unknown: Vec<&str> = map
            .keys()
            .map(String::as_str)
            .filter(|k| !names.contains(k))
            .collect();
        if !unknown.is_empty() {
            unknown.sort_unstable();
            return Err(Error::invalid_input(format!(
                "{what}: unknown argument{} {}; the arguments are {}",
                if unknown.len() == 1 { "" } else { "s" },
                quote_list(&unknown),
                quote_list(names),
            )));
        }
        Ok(Args { what, map })
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    fn bad(&self, name: &str, expected: &str) -> Error {
        Error::invalid_input(format!("{}: `{name}` must be {expected}", self.what))
    }

    fn string(&self, name: &str) -> Result<Option<String>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.bad(name, "a string")),
        }
    }

    fn required(&self, name: &str) -> Result<String> {
        self.string(name)?
            .ok_or_else(|| Error::invalid_input(format!("{}: `{name}` is required", self.what)))
    }

    fn path(&self, name: &str) -> Result<String> {
        let p = self.required(name)?;
        if p.trim().is_empty() {
            return Err(Error::invalid_input(format!(
                "{}: `{name}` is empty",
                self.what
            )));
        }
        Ok(p)
    }

    fn bool(&self, name: &str) -> Result<bool> {
        match self.get(name) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
            Some(_) => Err(self.bad(name, "true or false")),
        }
    }

    fn integer(&self, name: &str) -> Result<Option<i64>> {
        let v = match self.get(name) {
            None => return Ok(None),
            Some(v) => v,
        };
        let n = match v {
            Value::Number(n) => n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
            Value::String(s) => s.trim().parse::<i64>().ok(),
            _ => None,
        };
        n.map(Some).ok_or_else(|| self.bad(name, "an integer"))
    }

    fn line(&self, name: &str) -> Result<Option<usize>> {
        match self.integer(name)? {
            None => Ok(None),
            Some(n) if n >= 1 => Ok(Some(n as usize)),
            Some(_) => Err(self.bad(name, "a line number, 1 or more")),
        }
    }
}

/// The optional `revision_of`: a rejected review's run id (blank: none).
fn revision_of(a: &Args) -> Result<Option<String>> {
    Ok(a.string("revision_of")?
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty()))
}

fn quote_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parse the arguments of `tool`.
pub fn parse(tool: ToolName, arguments: Option<&Map<String, Value>>) -> Result<ToolCall> {
    let empty = Map::new();
    let map = arguments.unwrap_or(&empty);
    let a = Args::new(tool.as_str().to_string(), map, accepted(tool))?;
    match tool {
        ToolName::FastApply => fast_apply(&a),
        ToolName::PatchFile => Ok(ToolCall::Edit {
            tool,
            edits: vec![patch_edit(&a)?],
            dry_run: a.bool("dry_run")?,
            revision_of: revision_of(&a)?,
        }),
        ToolName::BatchPatchFiles => Ok(ToolCall::Edit {
            tool,
            edits: batch_edits(&a)?,
            dry_run: a.bool("dry_run")?,
            revision_of: revision_of(&a)?,
        }),
        ToolName::ApplyLastDryRun => Ok(ToolCall::Commit {
            run_id: run_id(&a)?,
        }),
        ToolName::AwaitReview => {
            let timeout = match a.integer("timeout_s")? {
                None => None,
                Some(n) if n >= 0 => Some(Duration::from_secs(n as u64)),
                Some(_) => return Err(a.bad("timeout_s", "0 or more seconds")),
            };
            Ok(ToolCall::Await {
                run_id: run_id(&a)?,
                timeout,
            })
        }
        ToolName::AgenticSearch | ToolName::FastSearch | ToolName::AgenticRetrieval => {
            let query = a.required("query")?;
            Ok(ToolCall::Search {
                tool,
                query: crate::search::check_query(&query)?.to_string(),
            })
        }
        ToolName::FileWriteOrEdit => {
            let path = a.path("file_path")?;
            let pct = percentage(&a)?;
            let text = a.required("text_or_search_replace_blocks")?;
            // `thread_id` is wcgw's shell-session id; accepted and ignored here.
            let _ = a.string("thread_id")?;
            Ok(ToolCall::Edit {
                tool,
                edits: vec![ProposedEdit {
                    op: write_or_edit(&path, pct, text)?,
                    path,
                }],
                dry_run: false,
                revision_of: revision_of(&a)?,
            })
        }
    }
}

/// `fast_apply`: a lazy snippet for one file.
fn fast_apply(a: &Args) -> Result<ToolCall> {
    let path = a.path("path")?;
    let snippet = a.required("edit_snippet")?;
    if snippet.trim().is_empty() {
        return Err(Error::invalid_input(
            "fast_apply: `edit_snippet` is empty; send the changed region with `// ... existing code ...` for the unchanged parts",
        ));
    }
    let instruction = a.string("instruction")?.filter(|s| !s.trim().is_empty());
    Ok(ToolCall::Edit {
        tool: ToolName::FastApply,
        edits: vec![ProposedEdit {
            path,
            op: EditOp::Lazy {
                snippet,
                instruction,
            },
        }],
        dry_run: false,
        revision_of: revision_of(a)?,
    })
}

/// `batch_patch_files`: one patch_file edit per entry of `patches` (none of them with a
/// `dry_run` of its own).
fn batch_edits(a: &Args) -> Result<Vec<ProposedEdit>> {
    let patches = match a.get("patches") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(Value::Array(_)) => {
            return Err(Error::invalid_input(
                "batch_patch_files: `patches` is empty; give one entry per file",
            ));
        }
        Some(_) => return Err(a.bad("patches", "an array of patch_file entries")),
        None => {
            return Err(Error::invalid_input(
                "batch_patch_files: `patches` is required",
            ));
        }
    };
    let names: Vec<&str> = accepted(ToolName::PatchFile)
        .iter()
        .copied()
        .filter(|n| *n != "dry_run" && *n != "revision_of")
        .collect();
    let mut edits = Vec::with_capacity(patches.len());
    for (i, item) in patches.iter().enumerate() {
        let Value::Object(entry) = item else {
            return Err(Error::invalid_input(format!(
                "batch_patch_files: patches[{i}] must be an object with `target_file` and the patch_file edit fields"
            )));
        };
        if entry.contains_key("dry_run") {
            return Err(Error::invalid_input(format!(
                "batch_patch_files: patches[{i}] has `dry_run`; it applies to the whole batch, so set it beside `patches`"
            )));
        }
        let ea = Args::new(format!("batch_patch_files: patches[{i}]"), entry, &names)?;
        edits.push(patch_edit(&ea)?);
    }
    Ok(edits)
}

fn run_id(a: &Args) -> Result<String> {
    let id = a.required("run_id")?;
    let id = id.trim();
    if id.is_empty() || id.len() > 64 || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(Error::invalid_input(format!(
            "{}: `run_id` must be the id a dry-run or a pending review returned (letters and digits)",
            a.what
        )));
    }
    Ok(id.to_string())
}

fn percentage(a: &Args) -> Result<f64> {
    let v = a.get("percentage_to_change").ok_or_else(|| {
        Error::invalid_input(
            "FileWriteOrEdit: `percentage_to_change` is required (0-100: the share of existing lines that change)",
        )
    })?;
    let n = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().trim_end_matches('%').trim().parse::<f64>().ok(),
        _ => None,
    };
    match n {
        Some(n) if (0.0..=100.0).contains(&n) => Ok(n),
        _ => Err(a.bad("percentage_to_change", "a number from 0 to 100")),
    }
}

/// wcgw's rule: above 50 % the text is the whole new file, otherwise SEARCH/REPLACE blocks.
/// Text that is plainly blocks (it opens with a SEARCH marker) is taken as blocks whatever the
/// percentage says; low-percentage text without blocks is refused rather than written over
/// the file (a missing file is created from it).
fn write_or_edit(path: &str, pct: f64, text: String) -> Result<EditOp> {
    let opens_with_blocks = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(blocks::is_search_marker);
    let has_blocks = text.lines().any(blocks::is_search_marker);
    if opens_with_blocks || (pct <= 50.0 && has_blocks) {
        return Ok(EditOp::Blocks(text));
    }
    if pct > 50.0 {
        return Ok(EditOp::Write(text));
    }
    Ok(EditOp::WriteIfMissing {
        content: text,
        refusal: format!(
            "FileWriteOrEdit: percentage_to_change is {pct} (50 or less), so `text_or_search_replace_blocks` must hold SEARCH/REPLACE blocks for `{path}`; to replace the whole file, set percentage_to_change above 50"
        ),
    })
}

/// One patch_file edit: a unified diff, or the exact-replace fields.
fn patch_edit(a: &Args) -> Result<ProposedEdit> {
    let path = a.path("target_file")?;
    if let Some(diff) = a.string("patch_content")? {
        let others: Vec<&str> = [
            "search_content",
            "replace_content",
            "replacements",
            "insert_line",
            "insert_content",
            "start_line",
            "end_line",
        ]
        .into_iter()
        .filter(|n| a.get(n).is_some())
        .collect();
        if !others.is_empty() {
            return Err(Error::invalid_input(format!(
                "{}: `patch_content` is a whole edit; do not combine it with {}",
                a.what,
                quote_list(&others)
            )));
        }
        if diff.trim().is_empty() {
            return Err(Error::invalid_input(format!(
                "{}: `patch_content` is empty",
                a.what
            )));
        }
        return Ok(ProposedEdit {
            path,
            op: EditOp::Udiff(diff),
        });
    }
    let replacements = match a.get("replacements") {
        None => None,
        Some(v) => Some(Vec::<Replacement>::deserialize(v).map_err(|e| {
            Error::invalid_input(format!(
                "{}: `replacements` must be a list of {{search_content, replace_content}}: {e}",
                a.what
            ))
        })?),
    };
    let raw = RawReplaceEdit {
        search_content: a.string("search_content")?,
        replace_content: a.string("replace_content")?,
        replacements,
        insert_line: a.integer("insert_line")?,
        insert_content: a.string("insert_content")?,
        start_line: a.line("start_line")?,
        end_line: a.line("end_line")?,
        allow_multiple: a.bool("allow_multiple")?,
    };
    let edit = raw
        .validate()
        .map_err(|e| Error::new(e.code, format!("{}: {}", a.what, e.message)))?;
    Ok(ProposedEdit {
        path,
        op: EditOp::Replace(edit),
    })
}

/// Resolve every path argument of a call under `root` (the stdio server's own root, when it
/// forwards to a gate over a wider one) and send the resolved absolute path: a path that
/// leaves `root` is refused here, though the gate would take it.
pub(crate) fn confine_paths(
    tool: ToolName,
    arguments: &mut Map<String, Value>,
    root: &crate::workspace::paths::Root,
) -> Result<()> {
    let mut first_err = None;
    let mut fix = |v: &mut Value| {
        if let Value::String(s) = v
            && first_err.is_none()
        {
            match root.resolve(s) {
                Ok(p) => *s = p.abs.to_string_lossy().into_owned(),
                Err(e) => first_err = Some(e),
            }
        }
    };
    for_each_path(tool, arguments, &mut fix);
    first_err.map_or(Ok(()), Err)
}

/// Call `fix` on each path argument of a call to `tool`.
fn for_each_path(
    tool: ToolName,
    arguments: &mut Map<String, Value>,
    fix: &mut dyn FnMut(&mut Value),
) {
    match tool {
        ToolName::FastApply => arguments.get_mut("path").into_iter().for_each(&mut *fix),
        ToolName::PatchFile => arguments
            .get_mut("target_file")
            .into_iter()
            .for_each(&mut *fix),
        ToolName::FileWriteOrEdit => arguments
            .get_mut("file_path")
            .into_iter()
            .for_each(&mut *fix),
        ToolName::BatchPatchFiles => {
            if let Some(Value::Array(items)) = arguments.get_mut("patches") {
                for item in items {
                    if let Value::Object(o) = item {
                        o.get_mut("target_file").into_iter().for_each(&mut *fix);
                    }
                }
            }
        }
        ToolName::ApplyLastDryRun
        | ToolName::AwaitReview
        | ToolName::AgenticSearch
        | ToolName::FastSearch
        | ToolName::AgenticRetrieval => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use serde_json::json;

    fn call(tool: &str, v: Value) -> Result<ToolCall> {
        let Value::Object(m) = v else { panic!() };
        parse(ToolName::parse(tool).unwrap(), Some(&m))
    }

    #[test]
    fn every_tool_name_round_trips() {
        for t in ToolName::ALL {
            assert_eq!(ToolName::parse(t.as_str()), Some(t));
        }
        assert_eq!(ToolName::parse("edit_file"), None);
    }

    #[test]
    fn unknown_argument_names_the_accepted_ones() {
        let e = call("fast_apply", json!({"file": "a.rs", "edit_snippet": "x"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(e.message.contains("`file`"), "{}", e.message);
        assert!(e.message.contains("`path`"), "{}", e.message);
    }

    #[test]
    fn fast_apply_needs_a_snippet() {
        let e = call(
            "fast_apply",
            json!({"path": "a.rs", "edit_snippet": "  \n"}),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        let c = call(
            "fast_apply",
            json!({"path": "a.rs", "edit_snippet": "x", "instruction": null}),
        )
        .unwrap();
        assert_eq!(c.paths(), vec!["a.rs"]);
    }

    #[test]
    fn patch_file_forms() {
        let c = call(
            "patch_file",
            json!({"target_file": "a", "search_content": "x", "replace_content": "y", "dry_run": true}),
        )
        .unwrap();
        assert!(c.dry_run());
        let c = call(
            "patch_file",
            json!({"target_file": "a", "patch_content": "@@ -1 +1 @@\n-x\n+y\n"}),
        )
        .unwrap();
        let ToolCall::Edit { edits, .. } = c else {
            panic!()
        };
        assert!(matches!(edits[0].op, EditOp::Udiff(_)));
        let c = call(
            "patch_file",
            json!({"target_file": "a", "insert_line": "-1", "insert_content": "z"}),
        )
        .unwrap();
        let ToolCall::Edit { edits, .. } = c else {
            panic!()
        };
        assert!(matches!(edits[0].op, EditOp::Replace(_)));
        // Mixing forms, or none, is refused with the reason.
        let e = call(
            "patch_file",
            json!({"target_file": "a", "patch_content": "x", "search_content": "y"}),
        )
        .unwrap_err();
        assert!(e.message.contains("search_content"), "{}", e.message);
        let e = call("patch_file", json!({"target_file": "a"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        let e = call(
            "patch_file",
            json!({"target_file": "a", "search_content": "x", "replace_content": "y", "start_line": 0}),
        )
        .unwrap_err();
        assert!(e.message.contains("start_line"), "{}", e.message);
    }

    #[test]
    fn batch_entries_are_checked_one_by_one() {
        let c = call(
            "batch_patch_files",
            json!({"patches": [
                {"target_file": "a", "search_content": "x", "replace_content": "y"},
                {"target_file": "b", "patch_content": "@@ -1 +1 @@\n-x\n+y\n"}
            ], "dry_run": true}),
        )
        .unwrap();
        assert_eq!(c.paths(), vec!["a", "b"]);
        assert!(c.dry_run());
        let e = call(
            "batch_patch_files",
            json!({"patches": [{"target_file": "a", "search": "x"}]}),
        )
        .unwrap_err();
        assert!(e.message.contains("patches[0]"), "{}", e.message);
        let e = call(
            "batch_patch_files",
            json!({"patches": [{"target_file": "a", "search_content": "x", "replace_content": "y", "dry_run": true}]}),
        )
        .unwrap_err();
        assert!(e.message.contains("whole batch"), "{}", e.message);
        assert!(call("batch_patch_files", json!({"patches": []})).is_err());
    }

    #[test]
    fn file_write_or_edit_follows_the_percentage() {
        let blocks = "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n";
        let op = |pct: Value, text: &str| {
            let c = call(
                "FileWriteOrEdit",
                json!({"file_path": "/x/a.py", "percentage_to_change": pct, "text_or_search_replace_blocks": text, "thread_id": "t"}),
            )
            .unwrap();
            let ToolCall::Edit { edits, .. } = c else {
                panic!()
            };
            edits[0].op.clone()
        };
        assert!(matches!(op(json!(10), blocks), EditOp::Blocks(_)));
        // Blocks sent with a wrong percentage are still blocks.
        assert!(matches!(op(json!(90), blocks), EditOp::Blocks(_)));
        assert!(matches!(op(json!("80%"), "print(1)\n"), EditOp::Write(_)));
        // A document that merely mentions the markers is written as text.
        let doc = "# Format\n\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n";
        assert!(matches!(op(json!(100), doc), EditOp::Write(_)));
        assert!(matches!(
            op(json!(5), "print(1)\n"),
            EditOp::WriteIfMissing { .. }
        ));
        let e = call(
            "FileWriteOrEdit",
            json!({"file_path": "a", "percentage_to_change": 140, "text_or_search_replace_blocks": "x"}),
        )
        .unwrap_err();
        assert!(e.message.contains("percentage_to_change"), "{}", e.message);
    }

    #[test]
    fn run_ids_are_checked() {
        assert!(call("apply_last_dry_run", json!({"run_id": "abc123"})).is_ok());
        assert!(call("apply_last_dry_run", json!({"run_id": "../x"})).is_err());
        let c = call("await_review", json!({"run_id": "abc", "timeout_s": 5})).unwrap();
        assert_eq!(
            c,
            ToolCall::Await {
                run_id: "abc".into(),
                timeout: Some(Duration::from_secs(5))
            }
        );
    }

    #[test]
    fn forwarded_paths_resolve_under_the_forwarders_root() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir_all(sub.join("src")).unwrap();
        let root = crate::workspace::paths::Root::new(&sub).unwrap();
        let mut m = json!({"patches": [{"target_file": "src/a.rs"}]})
            .as_object()
            .unwrap()
            .clone();
        confine_paths(ToolName::BatchPatchFiles, &mut m, &root).unwrap();
        assert_eq!(
            m["patches"][0]["target_file"],
            root.path().join("src/a.rs").to_string_lossy().as_ref()
        );
        // A path that leaves the forwarder's root is refused, though the gate's is wider.
        let outside = dir.path().join("other.rs").to_string_lossy().into_owned();
        for p in ["../other.rs", outside.as_str()] {
            let mut m = json!({"path": p}).as_object().unwrap().clone();
            let e = confine_paths(ToolName::FastApply, &mut m, &root).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidPath, "{p}");
        }
    }
}
