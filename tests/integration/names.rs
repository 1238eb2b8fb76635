//! Client names are bounded at the edge (docs/DESIGN.md §7, issue 35 item 1): a flood of tool
//! calls whose self-declared client name is 8 MB keeps the gate's memory and its reviews list
//! small, and every row shows the name cut at 128 bytes with its control characters written
//! out.

use reqwest::Method;
use serde_json::json;

use crate::mcp::{Gate, Project};

/// Calls in the flood, each with an 8 MB name (the issue's: 50 calls took the gate to 2.4 GB).
const CALLS: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_huge_client_names_keeps_the_gate_and_its_list_small() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "dry-run"]);
    let name = format!("\u{1b}[2J{}", "n".repeat(8 << 20));
    for k in 0..CALLS {
        let body = json!({
            "arguments": {"target_file": "a.txt", "search_content": "one", "replace_content": format!("v{k}")},
            "client": name,
        });
        let v = gate
            .api(Method::POST, "/api/tools/patch_file", Some(body))
            .await;
        assert_eq!(v["dry_run"], true, "{v}");
    }
    let list = gate.api(Method::GET, "/api/reviews", None).await;
    let text = list.to_string();
    assert!(
        text.len() < 1 << 20,
        "the reviews list is {} bytes",
        text.len()
    );
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), CALLS);
    for row in rows {
        let client = row["client"].as_str().unwrap();
        assert!(
            client.len() <= 128 + '…'.len_utf8(),
            "{} bytes",
            client.len()
        );
        assert!(
            client.starts_with("\\u{1b}[2Jnnn") && client.ends_with('…'),
            "{client:.40}"
        );
    }
    let peak = gate.peak_rss();
    assert!(peak < 1 << 30, "the gate peaked at {} MiB", peak >> 20);
}
