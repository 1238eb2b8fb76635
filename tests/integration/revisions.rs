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

/// Two functions far apart: an edit of one does not touch the other's lines.
const TWO_FNS: &str = "fn flush(buf: &mut Vec<u8>) {\n    buf.clear();\n}\n\n// one\n// two\n// three\n// four\n// five\n// six\n\nfn total(items: &[u32]) -> u32 {\n    items.iter().sum()\n}\n";

/// `client`'s `patch_file` of `path` with `extra` arguments (e.g. `revision_of`): the
/// envelope as the gate answers at once.
async fn start(gate: &Gate, client: &str, args: Value) -> Value {
    gate.api(
        Method::POST,
        "/api/tools/patch_file",
        Some(json!({"arguments": args, "client": client})),
    )
    .await
}

/// The review of a started call.
async fn review_of(gate: &Gate, started: &Value) -> Value {
    assert_eq!(started["status"], "pending", "{started}");
    let run = started["run_id"].as_str().unwrap();
    gate.api(Method::GET, &format!("/api/reviews/{run}"), None)
        .await
}

/// A revision answers the rejected edit: it touches the rejected edit's lines, or declares
/// it (`revision_of`); an unrelated edit of the same file by the same client is no revision
/// (and does not hide the rejection from the revision after it); a `revision_of` that is not
/// the same client's rejected review of the file is INVALID_INPUT.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revision_links_only_to_the_rejection_whose_lines_it_touches_or_that_it_names() {
    let p = Project::new();
    p.write("src/buf.rs", TWO_FNS);
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let edit = |search: &str, replace: &str| json!({"target_file": "src/buf.rs", "search_content": search, "replace_content": replace});
    let v1 = review_of(
        &gate,
        &start(
            &gate,
            "x",
            edit("    buf.clear();\n}\n", "    buf.clear();\n"),
        )
        .await,
    )
    .await;
    reject(
        &gate,
        &v1,
        Some("You dropped the closing brace of fn flush."),
    )
    .await;

    // The same client edits fn total, far from v1's lines: no revision.
    let unrelated = review_of(
        &gate,
        &start(
            &gate,
            "x",
            edit("items.iter().sum()", "items.iter().copied().sum()"),
        )
        .await,
    )
    .await;
    unlinked(&unrelated);

    // The edit of fn flush's lines answers v1 (the unrelated one between is passed over).
    let v2 = review_of(
        &gate,
        &start(&gate, "x", edit("    buf.clear();", "    buf.truncate(0);")).await,
    )
    .await;
    assert_eq!(v2["revision_of"], v1["run_id"], "{v2}");
    assert_eq!(v2["revision"], 2, "{v2}");
    assert_eq!(
        v2["previous_note"],
        "You dropped the closing brace of fn flush."
    );
    reject(&gate, &v2, Some("and say why in a comment")).await;

    // Declared: an edit elsewhere in the file that names v2 answers it.
    let mut named = edit("// one\n", "// one: flush keeps the buffer's capacity\n");
    named["revision_of"] = v2["run_id"].clone();
    let v3 = review_of(&gate, &start(&gate, "x", named.clone()).await).await;
    assert_eq!(v3["revision_of"], v2["run_id"], "{v3}");
    assert_eq!(v3["revision"], 3, "{v3}");

    // Not a rejection of this client's on this file: refused, nothing proposed.
    for (client, of) in [
        ("x", json!("nosuchrun")),
        ("x", unrelated["run_id"].clone()),
        ("y", v1["run_id"].clone()),
    ] {
        let mut bad = named.clone();
        bad["revision_of"] = of.clone();
        let v = start(&gate, client, bad).await;
        assert_eq!(v["code"], "INVALID_INPUT", "{client} {of}: {v}");
        assert!(
            v["message"].as_str().unwrap().contains("revision_of"),
            "{v}"
        );
    }
    assert_eq!(gate.pending().await.len(), 2, "the unrelated edit and v3");
    assert_eq!(p.read("src/buf.rs"), TWO_FNS, "nothing was written");
}

/// A revision answers the same caller's rejection, as the gate knows the caller (its MCP
/// session), not the name it claims (issue 35 item 6): a script that sends the rejected
/// agent's client name over the tool route is no revision of it, and may not declare one;
/// the agent's own next edit over its session is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spoofed_client_name_does_not_become_a_revision() {
    let p = Project::new();
    p.write("src/lib.rs", LIB);
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let agent = crate::mcp::http(&gate, crate::mcp::Recorder::default()).await;
    let edit = |replace: &str| json!({"target_file": "src/lib.rs", "search_content": "sum += i;", "replace_content": replace});
    // The agent's edit, rejected with a note while its call waits.
    let first = {
        let call = crate::mcp::call(&agent, "patch_file", edit("sum += *i;"));
        let reviewer = async {
            let run = gate.wait_pending(1).await.remove(0);
            let review = gate
                .api(Method::GET, &format!("/api/reviews/{run}"), None)
                .await;
            reject(&gate, &review, Some("use a fold")).await;
            review
        };
        let (v, review) = tokio::join!(call, reviewer);
        assert_eq!(v["status"], "rejected", "{v}");
        review
    };
    let name = first["client"].as_str().unwrap().to_string();
    let rejected = first["run_id"].as_str().unwrap().to_string();
    // Another caller claiming that name, touching the same lines: no revision.
    let spoof = propose(&gate, &name, "src/lib.rs", "sum += i;", "sum += 2 * i;").await;
    unlinked(&spoof);
    reject(&gate, &spoof, None).await;
    // Nor can it declare one.
    let mut declared = edit("sum += 3 * i;");
    declared["revision_of"] = json!(rejected);
    let v = gate
        .api(
            Method::POST,
            "/api/tools/patch_file",
            Some(json!({"arguments": declared, "client": name})),
        )
        .await;
    assert_eq!(v["code"], "INVALID_INPUT", "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("another client"),
        "{v}"
    );
    // The agent's own next edit of those lines answers its rejection.
    let call = crate::mcp::call(&agent, "patch_file", edit("sum = sum.wrapping_add(*i);"));
    let reviewer = async {
        let run = gate.wait_pending(1).await.remove(0);
        let review = gate
            .api(Method::GET, &format!("/api/reviews/{run}"), None)
            .await;
        reject(&gate, &review, None).await;
        review
    };
    let (_, review) = tokio::join!(call, reviewer);
    assert_eq!(review["revision_of"], rejected.as_str(), "{review}");
    assert_eq!(review["previous_note"], "use a fold", "{review}");
}
