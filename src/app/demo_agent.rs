//! `patchgate demo`: a temporary copy of the embedded project in `assets/demo/` and a scripted
//! agent that sends it realistic edits through the same tool path as an MCP client — every
//! tool kind, one that fails and one dry-run — while the TUI shows them for review.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use patchgate::mcp::args::ToolName;
use patchgate::mcp::envelope::{Envelope, Status};
use patchgate::mcp::service::{Dispatcher, NoProgress};
use patchgate::tui::update::Msg;

/// The demo project, embedded in the binary: (path, content).
pub(crate) const FILES: &[(&str, &str)] = &[
    ("README.md", include_str!("../../assets/demo/README.md")),
    (
        "config/settings.toml",
        include_str!("../../assets/demo/config/settings.toml"),
    ),
    (
        "src/inventory.rs",
        include_str!("../../assets/demo/src/inventory.rs"),
    ),
    ("src/main.rs", include_str!("../../assets/demo/src/main.rs")),
    (
        "app/server.py",
        include_str!("../../assets/demo/app/server.py"),
    ),
    ("web/cart.ts", include_str!("../../assets/demo/web/cart.ts")),
];

/// Write the demo project into `dir`.
pub(crate) fn materialize(dir: &Path) -> std::io::Result<()> {
    for (rel, content) in FILES {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(p, content)?;
    }
    Ok(())
}

/// The agent's calls, in order.
pub(crate) fn script() -> Vec<(ToolName, Value)> {
    let mut calls = first_calls();
    calls.extend(later_calls());
    calls
}

/// The first call's snippet: `total_value` simplified and a low-stock report added.
const LOW_STOCK: &str = "\
// ... existing code ...
    /// The value of everything in stock, in cents.
    pub fn total_value(&self) -> u64 {
        self.items
            .values()
            .map(|item| item.price_cents * u64::from(item.quantity))
            .sum()
    }

    /// Items with fewer than `threshold` units left, by SKU.
    pub fn low_stock(&self, threshold: u32) -> Vec<&Item> {
        let mut low: Vec<&Item> = self
            .items
            .values()
            .filter(|item| item.quantity < threshold)
            .collect();
        low.sort_by(|a, b| a.sku.cmp(&b.sku));
        low
    }
}
";

/// The first four calls: a lazy snippet, a patch, a whole-file write, a batch.
fn first_calls() -> Vec<(ToolName, Value)> {
    vec![
        (
            ToolName::FastApply,
            json!({
                "path": "src/inventory.rs",
                "instruction": "simplify total_value and add a low-stock report",
                "edit_snippet": LOW_STOCK,
            }),
        ),
        (
            ToolName::PatchFile,
            json!({
                "target_file": "app/server.py",
                "search_content": "        sku = self.path.strip(\"/\")\n        item = STOCK.get(sku)\n",
                "replace_content": "        sku = self.path.strip(\"/\").upper()\n        if not sku.isascii() or len(sku) > 32:\n            self.send_response(400)\n            self.end_headers()\n            return\n        item = STOCK.get(sku)\n"
            }),
        ),
        (
            ToolName::FileWriteOrEdit,
            json!({
                "file_path": "web/cart.ts",
                "percentage_to_change": 15,
                "thread_id": "demo",
                "text_or_search_replace_blocks": "\
<<<<<<< SEARCH
  add(line: Line): void {
    const existing = this.lines.find((l) => l.sku === line.sku);
=======
  add(line: Line): void {
    if (line.quantity <= 0) {
      throw new Error(`quantity must be positive, got ${line.quantity}`);
    }
    const existing = this.lines.find((l) => l.sku === line.sku);
>>>>>>> REPLACE
<<<<<<< SEARCH
    let total = 0;
    for (const l of this.lines) {
      total += l.quantity * l.priceCents;
    }
    return total;
=======
    return this.lines.reduce((sum, l) => sum + l.quantity * l.priceCents, 0);
>>>>>>> REPLACE
<<<<<<< SEARCH
    return \"$\" + (this.totalCents() / 100).toFixed(2);
=======
    return new Intl.NumberFormat(\"en-US\", { style: \"currency\", currency: \"USD\" })
      .format(this.totalCents() / 100);
>>>>>>> REPLACE
"
            }),
        ),
        (
            ToolName::BatchPatchFiles,
            json!({
                "patches": [
                    {
                        "target_file": "config/settings.toml",
                        "search_content": "currency = \"USD\"\n",
                        "replace_content": "currency = \"USD\"\nlow_stock_threshold = 5\n"
                    },
                    {
                        "target_file": "README.md",
                        "insert_line": -1,
                        "insert_content": "\n## Configuration\n\n`config/settings.toml` holds the shop's name, currency, API port and the\nstock level below which an item is reported as low.\n"
                    }
                ]
            }),
        ),
    ]
}

/// The last four calls: patches and a lazy snippet, among them the dry-run and the edit
/// that does not apply.
fn later_calls() -> Vec<(ToolName, Value)> {
    vec![
        (
            ToolName::PatchFile,
            json!({
                "target_file": "app/server.py",
                "search_content": "def main(port=8000):",
                "replace_content": "def main(port=8080):",
                "dry_run": true
            }),
        ),
        (
            ToolName::FastApply,
            json!({
                "path": "app/test_server.py",
                "edit_snippet": "\
import unittest

from server import STOCK


class StockTest(unittest.TestCase):
    def test_every_item_has_a_price(self):
        for sku, item in STOCK.items():
            self.assertGreater(item[\"price_cents\"], 0, sku)


if __name__ == \"__main__\":
    unittest.main()
"
            }),
        ),
        (
            ToolName::PatchFile,
            json!({
                "target_file": "src/main.rs",
                "patch_content": "\
--- a/src/main.rs
+++ b/src/main.rs
@@ -18,4 +18,7 @@ fn main() {
     });
     stock.remove(\"TEA-001\", 3).expect(\"in stock\");
     println!(\"stock value: {} cents\", stock.total_value());
+    for item in stock.low_stock(15) {
+        println!(\"low stock: {} ({} left)\", item.name, item.quantity);
+    }
 }
"
            }),
        ),
        (
            ToolName::PatchFile,
            json!({
                "target_file": "web/cart.ts",
                "search_content": "  applyDiscount(code: string): void {",
                "replace_content": "  applyDiscount(code: string, now = new Date()): void {"
            }),
        ),
    ]
}

/// The agent's answer when the person rejects its call `k` with a note: the next revision
/// of that edit (the first call's low-stock report, sorted as a reviewer would ask).
fn revision(k: usize) -> Option<(ToolName, Value)> {
    (k == 0).then(|| {
        (
            ToolName::FastApply,
            json!({
                "path": "src/inventory.rs",
                "instruction": "simplify total_value and add a low-stock report, fewest units first",
                "edit_snippet": LOW_STOCK
                    .replace("left, by SKU.", "left, fewest first (then by SKU).")
                    .replace(
                        "a.sku.cmp(&b.sku)",
                        "a.quantity.cmp(&b.quantity).then_with(|| a.sku.cmp(&b.sku))",
                    ),
            }),
        )
    })
}

/// Whether the person rejected the call with a note (to be answered by a revision).
fn rejected_with_note(env: &Envelope) -> bool {
    env.status == Status::Rejected
        && env
            .review
            .as_ref()
            .is_some_and(|r| !r.note.trim().is_empty())
}

fn what(tool: ToolName, args: &Value) -> String {
    let path = ["path", "target_file", "file_path"]
        .iter()
        .find_map(|k| args[*k].as_str())
        .map(str::to_string)
        .or_else(|| {
            args["patches"].as_array().map(|p| {
                p.iter()
                    .filter_map(|e| e["target_file"].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
        })
        .unwrap_or_default();
    format!("{} {path}", tool.as_str())
}

fn heard(env: &Envelope) -> Result<String, String> {
    let first_line = env.message.lines().next().unwrap_or("").to_string();
    match env.status {
        Status::Error => Err(format!(
            "{}: {}",
            env.code.map_or("error", |c| c.as_str()),
            first_line
        )),
        Status::Rejected => Ok(format!(
            "rejected — {}",
            env.review
                .as_ref()
                .map(|r| r.note.as_str())
                .filter(|n| !n.is_empty())
                .unwrap_or("no reason given")
        )),
        Status::Pending => Ok("still pending".into()),
        Status::Ok if env.dry_run => Ok(format!(
            "dry-run {} (press c to commit it)",
            env.run_id.as_deref().unwrap_or("")
        )),
        Status::Ok => Ok(match &env.review {
            Some(r) if r.hunks_accepted != r.hunks_total => {
                format!("applied {}/{} hunks", r.hunks_accepted, r.hunks_total)
            }
            Some(r) if r.edited_by_reviewer => "applied as edited".into(),
            _ => "applied".into(),
        }),
    }
}

/// Start the scripted agent: its calls go out `every` apart; what it hears back is sent to
/// the TUI's status line.
pub(crate) fn start_agent(dispatcher: Dispatcher, tx: mpsc::UnboundedSender<Msg>, every: Duration) {
    tokio::spawn(async move {
        tokio::time::sleep(every / 2).await;
        for (k, (tool, args)) in script().into_iter().enumerate() {
            let d = dispatcher.clone();
            let tx = tx.clone();
            tokio::spawn(async move {
                let env = call(&d, &tx, tool, args).await;
                if rejected_with_note(&env)
                    && let Some((tool, args)) = revision(k)
                {
                    call(&d, &tx, tool, args).await;
                }
            });
            tokio::time::sleep(every).await;
        }
    });
}

/// One call of the agent; what it hears back goes to the TUI's status line.
async fn call(
    d: &Dispatcher,
    tx: &mpsc::UnboundedSender<Msg>,
    tool: ToolName,
    args: Value,
) -> Envelope {
    let label = what(tool, &args);
    let map = match args {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    let env = d
        .run(
            tool,
            map,
            Some("demo-agent".into()),
            CancellationToken::new(),
            &NoProgress,
        )
        .await;
    let msg = match heard(&env) {
        Ok(t) => Ok(format!("agent ← {label}: {t}")),
        Err(t) => Err(format!("agent ← {label}: {t}")),
    };
    let _ = tx.send(Msg::Done(msg));
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use patchgate::mcp::service::Reviewers;
    use patchgate::review::journal::Journal;
    use patchgate::review::policy::Policy;
    use patchgate::review::queue::Gate;
    use patchgate::workspace::Workspace;
    use patchgate::workspace::config::{Config, PolicyName};

    /// The demo project in `dir`, and a dispatcher over it that applies every edit (`auto`).
    fn demo_under_auto(dir: &std::path::Path) -> (std::path::PathBuf, Dispatcher) {
        let root = dir.join("demo");
        std::fs::create_dir_all(&root).unwrap();
        materialize(&root).unwrap();
        let ws = Workspace::new(&root, Config::default()).unwrap();
        let journal = Journal::at(dir.join("journal.jsonl"), &ws.root);
        let gate = Gate::new(ws, Policy::simple(PolicyName::Auto), journal, None);
        let d = Dispatcher::new(gate, Duration::from_secs(600), Reviewers::Attachable, None);
        (root, d)
    }

    /// Every scripted edit does what the demo says: all apply under `auto` except the one
    /// meant to fail (NO_MATCH) and the dry-run; the cart edit has three hunks.
    #[tokio::test]
    async fn the_script_applies_to_the_demo_project() {
        let dir = tempfile::tempdir().unwrap();
        let (root, d) = demo_under_auto(dir.path());
        let mut outcomes = Vec::new();
        for (tool, args) in script() {
            let Value::Object(map) = args else { panic!() };
            let env = d
                .run(tool, map, None, CancellationToken::new(), &NoProgress)
                .await;
            outcomes.push((tool, env));
        }
        assert_eq!(outcomes.len(), 8);
        for (i, (tool, env)) in outcomes.iter().enumerate() {
            match i {
                4 => assert!(env.dry_run && env.status == Status::Ok, "{env:?}"),
                7 => assert_eq!(
                    env.code,
                    Some(patchgate::error::ErrorCode::NoMatch),
                    "{env:?}"
                ),
                _ => assert_eq!(env.status, Status::Ok, "{tool:?}: {env:?}"),
            }
        }
        let cart = &outcomes[2].1;
        assert_eq!(
            cart.diff.as_deref().unwrap().matches("\n@@ ").count() + 1,
            3,
            "three hunks: {}",
            cart.diff.as_deref().unwrap()
        );
        let inv = std::fs::read_to_string(root.join("src/inventory.rs")).unwrap();
        assert!(inv.contains("pub fn low_stock"), "{inv}");
        assert!(!inv.contains("let mut total = 0;"), "{inv}");
        assert!(inv.contains("pub fn remove"), "{inv}");
        let main = std::fs::read_to_string(root.join("src/main.rs")).unwrap();
        assert!(main.contains("low stock:"));
        assert!(root.join("app/test_server.py").exists());
    }

    /// Rejected with a note, the first call is answered by its revision, which applies to
    /// the file as it was (the rejected edit never landed) and does what the note asked.
    #[tokio::test]
    async fn a_rejected_first_edit_is_answered_by_a_revision_that_applies() {
        assert!(revision(1).is_none());
        let dir = tempfile::tempdir().unwrap();
        let (root, d) = demo_under_auto(dir.path());
        let (tool, args) = revision(0).unwrap();
        let Value::Object(map) = args else { panic!() };
        let env = d
            .run(tool, map, None, CancellationToken::new(), &NoProgress)
            .await;
        assert_eq!(env.status, Status::Ok, "{env:?}");
        let inv = std::fs::read_to_string(root.join("src/inventory.rs")).unwrap();
        assert!(inv.contains("a.quantity.cmp(&b.quantity)"), "{inv}");
        assert!(inv.contains("pub fn remove"), "{inv}");
    }
}
