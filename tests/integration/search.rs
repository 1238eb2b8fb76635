//! The code search: the three MCP tools over stdio with the official Python SDK (answers,
//! the alias's `_deprecated`, progress, `.gitignore` and deny rules respected, a bad query
//! refused), the model's exploration loop against a local stand-in endpoint (a path outside
//! the root refused, the turn limit giving `partial`, the tool calls and result bytes it runs
//! and sends bounded, its deadline held), `patchgate search` on the command line,
//! and the bars on the search corpus.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp::Project;
use crate::mcp_python::{python, script};
use crate::support::{bin, fake_chat};

const SESSION: &str = "\"\"\"Sessions kept in signed cookies.\"\"\"\n\n\nclass CookieJar:\n    def __init__(self):\n        self.items = {}\n\n\ndef save_session(jar, session):\n    \"\"\"Sign the session and store it in the cookie jar.\"\"\"\n    jar.items[\"session\"] = sign_cookie(session)\n\n\ndef sign_cookie(value):\n    return \"signed:\" + str(value)\n";

const VIEWS: &str = "from .session import save_session\n\n\ndef logout_view(request):\n    save_session(request.jar, {})\n    return \"bye\"\n";

/// A project: the session code, its user, an ignored copy, a denied copy, 30 fillers.
fn project() -> Project {
    let p = Project::new();
    p.write(".gitignore", "build/\n");
    p.write(
        ".patchgate.toml",
        "[[rules]]\nglob = \"secrets/**\"\naction = \"deny\"\n",
    );
    p.write("app/session.py", SESSION);
    p.write("app/views.py", VIEWS);
    p.write("build/session_copy.py", SESSION);
    p.write("secrets/session_keys.py", SESSION);
    for i in 0..30 {
        p.write(
            &format!("app/filler_{i}.py"),
            &format!("def helper_{i}(x):\n    return x + {i}\n"),
        );
    }
    p
}

/// The `RESULT` lines of the search script: (tool, is_error, answer).
fn results(stdout: &str) -> Vec<(String, bool, Value)> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT "))
        .map(|l| {
            let mut parts = l.splitn(3, ' ');
            let tool = parts.next().unwrap().to_string();
            let error = parts.next().unwrap() == "True";
            (
                tool,
                error,
                serde_json::from_str(parts.next().unwrap()).unwrap(),
            )
        })
        .collect()
}

fn paths(answer: &Value) -> Vec<String> {
    answer["files"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

/// Run the Python SDK's search script against `p` with the user config `config`; its stdout.
fn python_searches(p: &Project, config: &Path) -> String {
    let out = Command::new(python())
        .arg(script())
        .args(["search", env!("CARGO_BIN_EXE_patchgate")])
        .arg(&p.root)
        .env("PATCHGATE_STATE_DIR", &p.state)
        .env("PATCHGATE_LOG", p.state.join("patchgate.log"))
        .env("PATCHGATE_CONFIG", config)
        .env(
            "PATCHGATE_TEST_QUERY",
            "where is the session signed and saved in a cookie",
        )
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout
}

#[test]
fn the_three_search_tools_over_stdio_with_the_python_sdk() {
    let p = project();
    let stdout = python_searches(&p, &p.state.join("no-user-config.toml"));
    let r = results(&stdout);
    assert_eq!(r.len(), 4, "{stdout}");
    let session = p.root.join("app/session.py").to_string_lossy().into_owned();
    let views = p.root.join("app/views.py").to_string_lossy().into_owned();

    let (tool, error, search) = &r[0];
    assert_eq!((tool.as_str(), *error), ("agentic_search", false));
    assert_eq!(paths(search)[0], session, "{search}");
    // The ranges are the best definitions, in line order: save_session is lines 9-11.
    let ranges = search["files"][&session].as_array().unwrap();
    assert!(ranges.contains(&json!([9, 11])), "{search}");
    assert_eq!(
        (search["turns_used"].clone(), search["partial"].clone()),
        (json!(0), json!(false))
    );
    assert!(search.get("_deprecated").is_none());
    for answer in [&r[0].2, &r[1].2, &r[2].2] {
        for path in paths(answer) {
            assert!(!path.contains("build/"), ".gitignore'd file shown: {path}");
            assert!(!path.contains("secrets/"), "denied file shown: {path}");
            assert!(path.starts_with(&*p.root.to_string_lossy()), "{path}");
        }
    }

    let (tool, error, alias) = &r[1];
    assert_eq!((tool.as_str(), *error), ("fast_search", false));
    assert_eq!(alias["files"], search["files"]);
    assert!(
        alias["_deprecated"]
            .as_str()
            .unwrap()
            .contains("agentic_search")
    );

    let (tool, error, retrieval) = &r[2];
    assert_eq!((tool.as_str(), *error), ("agentic_retrieval", false));
    assert!(
        retrieval["hints_used"].as_u64().unwrap() >= 1,
        "{retrieval}"
    );
    assert!(
        paths(retrieval).contains(&views),
        "the caller is followed: {retrieval}"
    );

    let (tool, error, empty) = &r[3];
    assert_eq!((tool.as_str(), *error), ("agentic_search", true));
    assert_eq!(empty["code"], "INVALID_INPUT", "{empty}");

    // The first search built the index (33 files) and said so.
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("PROGRESS agentic_search") && l.contains("indexing")),
        "{stdout}"
    );
    let kept = std::fs::read_dir(p.state.join("search")).unwrap().count();
    assert_eq!(kept, 1, "the index is kept in the state directory");
}

/// A user config naming the stand-in endpoint.
fn model_config(p: &Project, url: &str, turns: u32) -> std::path::PathBuf {
    model_config_timed(p, url, turns, 30)
}

/// A user config naming the stand-in endpoint, with the search's deadline.
fn model_config_timed(p: &Project, url: &str, turns: u32, timeout_s: u64) -> std::path::PathBuf {
    let file = p.state.join("user.toml");
    std::fs::write(
        &file,
        format!(
            "[fallback]\nendpoint = \"{url}\"\nmodel = \"stand-in\"\n[search]\nmax_turns = {turns}\ntimeout_s = {timeout_s}\n"
        ),
    )
    .unwrap();
    file
}

/// The tool results a request to the model carries.
fn tool_replies(body: &Value) -> Vec<&str> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect()
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}})
}

fn search_json(p: &Project, config: &Path, query: &str) -> Value {
    let out = bin()
        .args(["search", "--agentic", "--json", "--root"])
        .arg(&p.root)
        .arg(query)
        .env("PATCHGATE_STATE_DIR", &p.state)
        .env("PATCHGATE_CONFIG", config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_model_explores_with_read_only_tools_and_reports_back() {
    let p = project();
    let (url, seen) = fake_chat(|n, _| match n {
        0 => json!({"role": "assistant", "content": null, "tool_calls": [
            call("a", "view_file", json!({"path": "../outside.txt"})),
            call("b", "grep", json!({"pattern": "save_session\\("})),
            call("c", "view_file", json!({"path": "secrets/session_keys.py"})),
            call("e", "view_file", json!({"path": "build/session_copy.py"})),
        ]}),
        _ => json!({"role": "assistant", "content": null, "tool_calls": [
            call("d", "report_back", json!({
                "explanation": "save_session signs and stores it",
                "files": {"app/session.py": [[9, 11]], "/etc/passwd": [[1, 1]], "app/views.py": [[4, 6]]}
            })),
        ]}),
    });
    std::fs::write(p.root.parent().unwrap().join("outside.txt"), "secret\n").unwrap();
    let config = model_config(&p, &url, 5);
    let answer = search_json(&p, &config, "where is the session saved");
    assert_eq!(answer["turns_used"], 2, "{answer}");
    assert_eq!(answer["partial"], false);
    assert_eq!(answer["explanation"], "save_session signs and stores it");
    let root = p.root.to_string_lossy();
    assert_eq!(
        paths(&answer),
        [
            format!("{root}/app/session.py"),
            format!("{root}/app/views.py")
        ]
    );
    assert!(answer["error"].as_str().unwrap().contains("/etc/passwd"));

    let bodies = seen.lock().unwrap();
    let tools: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        ["view_file", "grep", "glob", "list_dir", "report_back"]
    );
    let seed = bodies[0]["messages"][1]["content"].as_str().unwrap();
    assert!(
        seed.contains("app/session.py"),
        "the index's hits seed the loop: {seed}"
    );
    let replies = tool_replies(&bodies[1]);
    assert_eq!(replies.len(), 4);
    assert!(
        replies[0].starts_with("error:") && replies[0].contains("outside"),
        "{}",
        replies[0]
    );
    assert!(!replies.iter().any(|r| r.contains("secret\n")));
    assert!(replies[1].contains("app/views.py:5:"), "{}", replies[1]);
    assert!(
        !replies[1].contains("secrets/") && !replies[1].contains("build/"),
        "{}",
        replies[1]
    );
    assert!(
        replies[2].starts_with("error:") && replies[2].contains("denies"),
        "{}",
        replies[2]
    );
}

#[test]
fn over_mcp_the_model_answers_agentic_search_and_its_turns_are_progress() {
    let p = project();
    let (url, seen) = fake_chat(|n, _| {
        json!({"role": "assistant", "content": null, "tool_calls": [
            call(&format!("r{n}"), "report_back", json!({
                "explanation": "the caller", "files": {"app/views.py": [[4, 6]]}
            })),
        ]})
    });
    let config = model_config(&p, &url, 4);
    let stdout = python_searches(&p, &config);
    let r = results(&stdout);
    let views = p.root.join("app/views.py").to_string_lossy().into_owned();
    for (tool, answer) in [("agentic_search", &r[0].2), ("fast_search", &r[1].2)] {
        assert_eq!(
            paths(answer),
            std::slice::from_ref(&views),
            "{tool}: {answer}"
        );
        assert_eq!(answer["turns_used"], 1, "{answer}");
        assert_eq!(answer["explanation"], "the caller");
    }
    // Retrieval seeds the model with the hints and their links, and keeps `hints_used`.
    assert_eq!(r[2].2["turns_used"], 1, "{}", r[2].2);
    assert!(r[2].2["hints_used"].as_u64().unwrap() >= 1);
    let bodies = seen.lock().unwrap();
    assert_eq!(bodies.len(), 3, "one model turn per search");
    let seed = bodies[2]["messages"][1]["content"].as_str().unwrap();
    assert!(
        seed.contains("app/views.py"),
        "the followed caller seeds the model: {seed}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("PROGRESS agentic_search 1.0 4.0 exploring: model turn 1")),
        "{stdout}"
    );
}

#[test]
fn the_turn_limit_answers_partial_with_the_index_hits() {
    let p = project();
    let (url, seen) = fake_chat(|n, _| {
        json!({"role": "assistant", "content": null, "tool_calls": [
            call(&format!("g{n}"), "glob", json!({"pattern": "*.py"})),
        ]})
    });
    let config = model_config(&p, &url, 2);
    let answer = search_json(&p, &config, "where is the session saved");
    assert_eq!(seen.lock().unwrap().len(), 2);
    assert_eq!(answer["partial"], true, "{answer}");
    assert_eq!(answer["turns_used"], 2);
    assert!(answer["error"].as_str().unwrap().contains("2 turns"));
    let root = p.root.to_string_lossy();
    assert_eq!(paths(&answer)[0], format!("{root}/app/session.py"));
}

#[test]
fn search_on_the_command_line() {
    let p = project();
    let run = |args: &[&str]| {
        bin()
            .arg("search")
            .args(args)
            .arg("--root")
            .arg(&p.root)
            .env("PATCHGATE_STATE_DIR", &p.state)
            .output()
            .unwrap()
    };
    let out = run(&["save", "session", "--limit", "2"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(stdout.starts_with("  1. app/session.py  "), "{stdout}");
    let none = run(&["zzzqqq"]);
    assert_eq!(none.status.code(), Some(1), "nothing found exits 1");
    let agentic = run(&["--agentic", "cookie"]);
    assert_eq!(agentic.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&agentic.stderr).contains("[fallback]"));
    let outside = bin()
        .args(["search", "x", "--root", "/nonexistent/dir"])
        .output()
        .unwrap();
    assert_eq!(outside.status.code(), Some(2));
}

/// A stamp this close to a walk is not trusted (`search::listing`'s fine margin, with room):
/// the walk's record settles once it is past.
const SETTLE: Duration = Duration::from_millis(120);

/// A query on a fresh saved index is answered from it read on demand (docs/DESIGN.md §4),
/// its freshness told by stats alone: the same answer as the one that built it, the ignore
/// files and deny rules still holding; a file added (in a new directory too), changed or
/// removed, an ignore file or deny rule changed, or a damaged index is noticed and answered
/// right.
#[test]
fn the_command_line_answers_from_the_saved_index_and_notices_changes() {
    let p = project();
    let run = |query: &str| {
        let out = bin()
            .args(["search", "--root"])
            .arg(&p.root)
            .arg("--")
            .arg(query)
            .env("PATCHGATE_STATE_DIR", &p.state)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let built = run("save session cookie");
    assert!(built.starts_with("  1. app/session.py  "), "{built}");
    let index = std::fs::read_dir(p.state.join("search"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|f| f.extension().is_some_and(|e| e == "index"))
        .expect("the index is kept");
    // The files were written a moment before the build: its record settles at a later
    // search (written once more), after which a fresh index is not written.
    std::thread::sleep(SETTLE);
    assert_eq!(run("save session cookie"), built, "from the saved index");
    let saved = std::fs::read(&index).unwrap();
    assert_eq!(run("save session cookie"), built, "from the saved index");
    assert!(
        !built.contains("build/") && !built.contains("secrets/"),
        "{built}"
    );
    assert_eq!(
        std::fs::read(&index).unwrap(),
        saved,
        "a fresh index is not written"
    );
    // Each change below comes after a settled record (a search past the margin), so the
    // stats alone must tell it: changed (same size), added in a new directory, added
    // beside, removed, an ignore file changed in place.
    let settle = || {
        std::thread::sleep(SETTLE);
        run("settle");
    };
    p.write("app/views.py", &VIEWS.replace("logout_view", "zebra_cross"));
    assert!(run("zebra cross").starts_with("  1. app/views.py  "));
    settle();
    p.write("app/deep/er/quokka.py", "def quokka_hop():\n    pass\n");
    assert!(run("quokka hop").starts_with("  1. app/deep/er/quokka.py  "));
    settle();
    p.write("app/wombat.py", "def wombat_dig():\n    pass\n");
    assert!(run("wombat dig").starts_with("  1. app/wombat.py  "));
    settle();
    std::fs::remove_file(p.root.join("app/wombat.py")).unwrap();
    assert!(!run("wombat dig").contains("app/wombat.py"), "removed");
    settle();
    p.write(".gitignore", "build/\napp/deep/\n");
    assert!(!run("quokka hop").contains("quokka.py"), "ignored now");
    p.write(
        ".patchgate.toml",
        "[[rules]]\nglob = \"app/session.py\"\naction = \"deny\"\n",
    );
    let denied = run("save session cookie");
    assert!(!denied.contains("app/session.py"), "{denied}");
    p.write(".patchgate.toml", "");
    let saved = std::fs::read(&index).unwrap();
    for at in [saved.len() / 3, saved.len() / 2, saved.len() - 1] {
        let mut damaged = saved.clone();
        damaged[at] ^= 0x20;
        std::fs::write(&index, &damaged).unwrap();
        let again = run("save session cookie");
        assert!(
            again.starts_with("  1. app/session.py  "),
            "byte {at}: {again}"
        );
    }
}

/// The model loop's bounds (docs/DESIGN.md §7), as `agent.rs` names them.
const CALLS_PER_REPLY: usize = 16;
const RESULT_BUDGET: usize = 1 << 20;
const ONE_RESULT: usize = 64 << 10;
/// What a cut result ends with.
const CUT_NOTE: &str = "\n… (cut: narrow the range or the pattern)";

/// A view of 400 lines of `app/big.txt` (400 lines of 900 characters: 360 KB, cut to 64 KiB).
fn big_view(id: String) -> Value {
    call(
        &id,
        "view_file",
        json!({"path": "app/big.txt", "start_line": 1, "end_line": 400}),
    )
}

/// A reply asking for hundreds of tool calls runs at most 16 of them, each result is cut at
/// 64 KiB, and once the results sent back reach 1 MiB (16 of those) the calls of the next
/// reply are not run; the search still answers.
#[test]
fn a_flood_of_tool_calls_is_bounded() {
    let p = project();
    let line = format!("{}\n", "q".repeat(900));
    p.write("app/big.txt", &line.repeat(400));
    let (url, seen) = fake_chat(|n, _| match n {
        0 => {
            let calls: Vec<Value> = (0..300).map(|k| big_view(format!("v{k}"))).collect();
            json!({"role": "assistant", "content": null, "tool_calls": calls})
        }
        1 => {
            let calls: Vec<Value> = (0..10).map(|k| big_view(format!("w{k}"))).collect();
            json!({"role": "assistant", "content": null, "tool_calls": calls})
        }
        _ => json!({"role": "assistant", "content": null, "tool_calls": [
            call("r", "report_back", json!({
                "explanation": "found",
                "files": {"app/session.py": [[1, 2]]}
            })),
        ]}),
    });
    let config = model_config(&p, &url, 5);
    let answer = search_json(&p, &config, "where is the session saved");
    assert_eq!(answer["partial"], false, "{answer}");
    assert_eq!(answer["turns_used"], 3, "{answer}");
    let bodies = seen.lock().unwrap();
    assert_eq!(bodies.len(), 3);
    let first = tool_replies(&bodies[1]);
    assert_eq!(first.len(), 300, "every call is answered");
    let run: Vec<&str> = first
        .iter()
        .copied()
        .filter(|r| !r.starts_with("error: not run"))
        .collect();
    assert_eq!(
        run.len(),
        CALLS_PER_REPLY,
        "only the first 16 calls are run"
    );
    for r in &run {
        assert!(r.starts_with("app/big.txt (lines 1-400 of 400)"), "{r:.80}");
        assert!(r.ends_with(CUT_NOTE), "a result is cut: {}", r.len());
        assert!(r.len() <= ONE_RESULT + CUT_NOTE.len(), "{}", r.len());
    }
    // The 16 results cross the budget: the next reply's calls are all refused for it.
    let sent: usize = run.iter().map(|r| r.len()).sum();
    assert!(
        sent >= RESULT_BUDGET,
        "{sent} bytes sent: the budget is not reached"
    );
    let second = tool_replies(&bodies[2]);
    assert_eq!(second.len(), 310);
    for r in &second[300..] {
        assert!(
            r.starts_with(
                "error: not run: the tool results so far are as much as this search may read"
            ),
            "{r:.200}"
        );
    }
    let all: usize = second.iter().map(|r| r.len()).sum();
    assert!(
        all <= RESULT_BUDGET + ONE_RESULT + 310 * 200,
        "{all} bytes of tool results sent back"
    );
}

/// The search's deadline (`timeout_s`) holds whatever the model does: a reply that never
/// comes in time, and a model that keeps answering in time but never reports back, each end
/// at the deadline with the index's hits, marked partial.
#[test]
fn the_model_loop_stops_at_its_deadline() {
    let p = project();
    let (url, seen) = fake_chat(|_, _| {
        std::thread::sleep(Duration::from_secs(30));
        json!({"role": "assistant", "content": "too late"})
    });
    let answer = within_deadline(&p, &url, 5, "a slow reply");
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert_eq!(answer["turns_used"], 0, "{answer}");
    let why = answer["error"].as_str().unwrap();
    assert!(why.contains(&format!("within {DEADLINE_S} s")), "{why}");
    let root = p.root.to_string_lossy();
    assert_eq!(paths(&answer)[0], format!("{root}/app/session.py"));

    // A model that answers each turn in 0.5 s without reporting back, 50 turns allowed: about
    // 25 s of turns, each in time on its own; the search's deadline stops them.
    let (url, seen) = fake_chat(|_, _| {
        std::thread::sleep(Duration::from_millis(500));
        json!({"role": "assistant", "content": "still looking"})
    });
    let answer = within_deadline(&p, &url, 50, "the turns");
    let turns = seen.lock().unwrap().len();
    assert!((2..=5).contains(&turns), "{turns} model calls");
    let why = answer["error"].as_str().unwrap();
    assert!(why.contains(&format!("within {DEADLINE_S} s")), "{why}");

    // A tool call in progress at the deadline: a grep whose regular expression no lazy DFA
    // can hold, over 8 MiB of `a` and `b` (about 3 s a MiB in a debug build), is not waited
    // for, neither by the loop nor by the command's exit.
    for k in 0..8 {
        p.write(&format!("slow/ab{k}.txt"), &a_and_b(k, (1 << 20) - 64));
    }
    let (url, _) = fake_chat(|n, _| match n {
        0 => json!({"role": "assistant", "content": null, "tool_calls": [
            call("g", "grep", json!({"pattern": "a[ab]{20}[^ab]", "path": "slow"})),
        ]}),
        _ => json!({"role": "assistant", "content": "too late"}),
    });
    let answer = within_deadline(&p, &url, 5, "a tool call");
    assert_eq!(answer["turns_used"], 1, "{answer}");
}

/// A search of `p` with a model allowed `turns` turns and `DEADLINE_S` in all, at `url`: its
/// answer, after asserting it ended within the deadline and the slack (`what` held it else).
/// The index is brought up to date first, by a search without the model: the time to read
/// new files (8 MiB of them for the tool call) is no part of the model loop nor bounded by
/// its deadline, and on a loaded machine it took the timed search past the slack.
fn within_deadline(p: &Project, url: &str, turns: u32, what: &str) -> Value {
    let config = model_config_timed(p, url, turns, DEADLINE_S);
    let indexing = Instant::now();
    let out = bin()
        .args(["search", "--json", "--root"])
        .arg(&p.root)
        .arg("where is the session saved")
        .env("PATCHGATE_STATE_DIR", &p.state)
        .env("PATCHGATE_CONFIG", &config)
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "{what}: the index brought up to date in {:?}",
        indexing.elapsed()
    );
    let started = Instant::now();
    let answer = search_json(p, &config, "where is the session saved");
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(DEADLINE_S) + SLACK,
        "{what} held the search {took:?}"
    );
    assert_eq!(answer["partial"], true, "{answer}");
    answer
}

/// The model loop's deadline in [`the_model_loop_stops_at_its_deadline`].
const DEADLINE_S: u64 = 2;
/// The time a search takes beside the model, its index up to date: starting, finding the
/// index fresh, answering.
const SLACK: Duration = Duration::from_secs(8);

/// `len` letters `a` and `b` in a pseudo-random order drawn from `seed`, on one line.
fn a_and_b(seed: u32, len: usize) -> String {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(12_345);
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            if (x >> 16) & 1 == 0 { 'a' } else { 'b' }
        })
        .collect()
}
