//! Revisions over the real review API (docs/DESIGN.md §4): a person rejects a review with a
//! note, and the same client's next edit of the file is its next revision, with
//! `revision_of`, `revision`, `previous_note` and the `interdiff` from the rejected result to
//! the new one; another client's edit, another file and a rejection without a note are not
//! linked; chains go on from the latest revision.

use reqwest::Method;
use serde_json::{Value, json};

use crate::mcp::{Gate, Project};

const LIB: &str = "pub fn total(items: &[u32]) -> u32 {\n    let mut sum = 0;\n    for i in items {\n        sum += i;\n    }\n    sum\n}\n";

/// `client` starts a `patch_file` of `path` (the gate answers `pending` at once); the review
/// as `GET /api/reviews/{run_id}` gives it.
async fn propose(gate: &Gate, client: &str, path: &str, search: &str, replace: &str) -> Value {
    let started = gate
        .api(
            Method::POST,
            "/api/tools/patch_file",
            Some(json!({
                "arguments": {"target_file": path, "search_content": search, "replace_content": replace},
                "client": client
            })),
        )
        .await;
    assert_eq!(started["status"], "pending", "{started}");
    let run = started["run_id"].as_str().unwrap();
    gate.api(Method::GET, &format!("/api/reviews/{run}"), None)
        .await
}

async fn reject(gate: &Gate, review: &Value, note: Option<&str>) {
    let run = review["run_id"].as_str().unwrap();
    let body = match note {
        Some(n) => json!({"decision": "reject", "note": n}),
        None => json!({"decision": "reject"}),
    };
    let v = gate
        .api(
            Method::POST,
            &format!("/api/reviews/{run}/decision"),
            Some(body),
        )
        .await;
    assert_eq!(v["status"], "rejected", "{v}");
}

fn unlinked(review: &Value) {
    for field in ["revision_of", "revision", "previous_note", "interdiff"] {
        assert!(review.get(field).is_none(), "{field} in {review}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_review_with_a_note_is_answered_by_the_same_clients_next_revision() {
    let p = Project::new();
    p.write("src/lib.rs", LIB);
    p.write("src/other.rs", "pub const N: u32 = 1;\n");
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let v1 = propose(
        &gate,
        "agent-x",
        "src/lib.rs",
        "sum += i;",
        "sum = sum + i;",
    )
    .await;
    unlinked(&v1);
    reject(&gate, &v1, Some("use iter().sum()")).await;

    // Another client's edit of the file, and the same client's edit of another file: no
    // revisions of it.
    unlinked(&propose(&gate, "agent-y", "src/lib.rs", "sum += i;", "sum += *i;").await);
    unlinked(&propose(&gate, "agent-x", "src/other.rs", "1", "2").await);

    // The same client's next edit of the file answers it.
    let body = "    let mut sum = 0;\n    for i in items {\n        sum += i;\n    }\n    sum\n";
    let v2 = propose(
        &gate,
        "agent-x",
        "src/lib.rs",
        body,
        "    items.iter().sum()\n",
    )
    .await;
    assert_eq!(v2["revision_of"], v1["run_id"], "{v2}");
    assert_eq!(v2["revision"], 2, "{v2}");
    assert_eq!(v2["previous_note"], "use iter().sum()", "{v2}");
    // From what v1 proposed (not from the file on disk, which v2's diff starts from).
    assert_eq!(
        v2["interdiff"],
        "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,7 +1,3 @@\n pub fn total(items: &[u32]) -> u32 {\n\
         -    let mut sum = 0;\n-    for i in items {\n-        sum = sum + i;\n-    }\n-    sum\n\
         +    items.iter().sum()\n }\n",
        "{v2}"
    );
    assert!(
        v2["diff"]
            .as_str()
            .unwrap()
            .contains("-        sum += i;\n")
    );
    // The list says the same.
    let list = gate.api(Method::GET, "/api/reviews", None).await;
    let listed = list
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["run_id"] == v2["run_id"])
        .unwrap();
    assert_eq!(listed["revision_of"], v1["run_id"]);
    assert_eq!(listed["interdiff"], v2["interdiff"]);

    // A chain links to the latest: v3 answers v2.
    reject(&gate, &v2, Some("and name it sum")).await;
    let v3 = propose(
        &gate,
        "agent-x",
        "src/lib.rs",
        LIB,
        "pub fn sum(items: &[u32]) -> u32 {\n    items.iter().sum()\n}\n",
    )
    .await;
    assert_eq!(v3["revision_of"], v2["run_id"], "{v3}");
    assert_eq!(v3["revision"], 3, "{v3}");
    assert_eq!(v3["previous_note"], "and name it sum", "{v3}");
    assert_eq!(
        v3["interdiff"],
        "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n-pub fn total(items: &[u32]) -> u32 {\n\
         +pub fn sum(items: &[u32]) -> u32 {\n     items.iter().sum()\n }\n",
        "{v3}"
    );

    // A rejection without a note asks for nothing: the next edit is no revision.
    reject(&gate, &v3, None).await;
    let v4 = propose(&gate, "agent-x", "src/lib.rs", "sum += i;", "sum += 1;").await;
    unlinked(&v4);
    assert_eq!(p.read("src/lib.rs"), LIB, "nothing was written");
}
