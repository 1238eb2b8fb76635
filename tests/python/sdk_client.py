"""Drive patchgate with the official MCP Python SDK (`mcp` from PyPI).

Usage:
    sdk_client.py stdio PATCHGATE_BINARY ROOT
    sdk_client.py http MCP_URL TOKEN ROOT
    sdk_client.py review MCP_URL TOKEN ROOT
    sdk_client.py search PATCHGATE_BINARY ROOT

In `stdio` and `http` modes the gate runs with `--policy auto`: the script writes `greet.py` into ROOT (an empty temporary directory), lists the tools,
checks their schemas carry the reference argument names, and runs fast_apply, patch_file with
dry_run then apply_last_dry_run, and FileWriteOrEdit; it checks every result and the files on
disk, and exits non-zero with a message on the first mismatch. It prints `OK <transport>`.

In `review` mode a person (the tmux test) decides in the TUI: the script sends a three-hunk
FileWriteOrEdit to `story.md` (which the test wrote), then a patch_file to `story.md`, then a
second patch_file that adds a line under the last one (naming the rejected one in
`revision_of`), and prints each tool result's envelope as
one line `RESULT <json>` as soon as it arrives.

In `search` mode (stdio, ROOT prepared by the test) the script calls agentic_search,
fast_search and agentic_retrieval with the query in $PATCHGATE_TEST_QUERY, then agentic_search
with an empty query, and prints each result as `RESULT <tool> <is_error> <json>` and each
progress notification as `PROGRESS <tool> <done> <total> <message>`; the test checks them.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

EXPECTED_ARGS = {
    "fast_apply": {"path", "edit_snippet", "instruction", "revision_of"},
    "patch_file": {
        "target_file", "search_content", "replace_content", "patch_content", "replacements",
        "insert_line", "insert_content", "start_line", "end_line", "allow_multiple", "dry_run",
        "revision_of",
    },
    "batch_patch_files": {"patches", "dry_run", "revision_of"},
    "apply_last_dry_run": {"run_id"},
    "FileWriteOrEdit": {"file_path", "percentage_to_change", "text_or_search_replace_blocks", "thread_id",
                        "revision_of"},
    "await_review": {"run_id", "timeout_s"},
    "agentic_search": {"query"},
    "fast_search": {"query"},
    "agentic_retrieval": {"query"},
}
READ_ONLY = {"await_review", "agentic_search", "fast_search", "agentic_retrieval"}


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def envelope(result):
    """The structured envelope of a tool result, checked against its text twin."""
    data = result.structured_content
    if data is None:
        fail(f"no structured content in {result}")
    text = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    if not text or json.loads(text[0]) != data:
        fail(f"the text content is not the envelope's JSON: {result.content}")
    if bool(result.is_error) != (data["status"] == "error"):
        fail(f"isError={result.is_error} but status={data['status']}")
    return data


def read(root, name):
    with open(os.path.join(root, name), encoding="utf-8") as f:
        return f.read()


GREET = (
    "def greet(name):\n"
    "    greeting = f\"Hello, {name}!\"\n"
    "    print(greeting)\n"
    "\n"
    "\n"
    "def main():\n"
    "    greet(\"world\")\n"
    "\n"
    "\n"
    "if __name__ == \"__main__\":\n"
    "    main()\n"
)


async def exercise(session, root):
    with open(os.path.join(root, "greet.py"), "w", encoding="utf-8") as f:
        f.write(GREET)
    await session.initialize()
    tools = (await session.list_tools()).tools
    by_name = {t.name: t for t in tools}
    if set(by_name) != set(EXPECTED_ARGS):
        fail(f"tools {sorted(by_name)}")
    for name, args in EXPECTED_ARGS.items():
        props = set(by_name[name].input_schema.get("properties", {}))
        if props != args:
            fail(f"{name} schema arguments {sorted(props)}, expected {sorted(args)}")
        ann = by_name[name].annotations
        if name in READ_ONLY:
            if not ann.read_only_hint or ann.destructive_hint:
                fail(f"{name} should be read-only")
        elif ann.read_only_hint or not ann.destructive_hint:
            fail(f"{name} should be destructive, not read-only")

    # fast_apply: a lazy snippet with a placeholder.
    snippet = (
        "def greet(name):\n"
        "    greeting = f\"Hello, {name}!\"\n"
        "    print(greeting)\n"
        "    return greeting\n"
        "# ... existing code ...\n"
    )
    r = envelope(await session.call_tool("fast_apply", {"path": "greet.py", "edit_snippet": snippet}))
    if r["status"] != "ok" or r["path"] != "greet.py" or "+    return greeting" not in r.get("diff", ""):
        fail(f"fast_apply: {r}")
    if "    return greeting\n" not in read(root, "greet.py") or "def main():" not in read(root, "greet.py"):
        fail("fast_apply did not write the merge")

    # patch_file dry-run, then apply_last_dry_run.
    before = read(root, "greet.py")
    r = envelope(await session.call_tool("patch_file", {
        "target_file": "greet.py",
        "search_content": "Hello",
        "replace_content": "Hi",
        "dry_run": True,
    }))
    if r["status"] != "ok" or not r["dry_run"] or not r.get("run_id") or not r.get("expires_in"):
        fail(f"patch_file dry_run: {r}")
    if read(root, "greet.py") != before:
        fail("a dry run wrote the file")
    run_id = r["run_id"]
    r = envelope(await session.call_tool("apply_last_dry_run", {"run_id": run_id}))
    if r["status"] != "ok" or r["dry_run"] or r["run_id"] != run_id:
        fail(f"apply_last_dry_run: {r}")
    if "Hi, {name}!" not in read(root, "greet.py"):
        fail("apply_last_dry_run did not write")
    r = envelope(await session.call_tool("apply_last_dry_run", {"run_id": run_id}))
    if r["status"] != "error" or r["code"] != "RUN_ALREADY_USED":
        fail(f"second commit: {r}")

    # FileWriteOrEdit: blocks, then a whole new file.
    blocks = "<<<<<<< SEARCH\n    main()\n=======\n    main()  # entry point\n>>>>>>> REPLACE\n"
    r = envelope(await session.call_tool("FileWriteOrEdit", {
        "file_path": os.path.join(root, "greet.py"),
        "percentage_to_change": 10,
        "text_or_search_replace_blocks": blocks,
        "thread_id": "t1",
    }))
    if r["status"] != "ok" or "main()  # entry point" not in read(root, "greet.py"):
        fail(f"FileWriteOrEdit blocks: {r}")
    r = envelope(await session.call_tool("FileWriteOrEdit", {
        "file_path": "notes/new.md",
        "percentage_to_change": 100,
        "text_or_search_replace_blocks": "# Notes\n\nwritten by the SDK client\n",
    }))
    if r["status"] != "ok" or read(root, "notes/new.md") != "# Notes\n\nwritten by the SDK client\n":
        fail(f"FileWriteOrEdit write: {r}")

    # An error is a tool result the model can read.
    r = envelope(await session.call_tool("patch_file", {
        "target_file": "greet.py", "search_content": "no such text", "replace_content": "x",
    }))
    if r["code"] != "NO_MATCH":
        fail(f"NO_MATCH expected: {r}")


async def under_review(session, root):
    await session.initialize()
    blocks = "\n".join(
        f"<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE"
        for old, new in [
            ("The first line.", "The first line, edited."),
            ("The middle line.", "The middle line, edited."),
            ("The last line.", "The last line, edited."),
        ]
    )
    r = envelope(await session.call_tool("FileWriteOrEdit", {
        "file_path": os.path.join(root, "story.md"),
        "percentage_to_change": 10,
        "text_or_search_replace_blocks": blocks,
        "thread_id": "tmux",
    }))
    print("RESULT " + json.dumps(r), flush=True)
    r = envelope(await session.call_tool("patch_file", {
        "target_file": os.path.join(root, "story.md"),
        "search_content": "The title.",
        "replace_content": "A new title.",
    }))
    print("RESULT " + json.dumps(r), flush=True)
    # Other lines than the rejected edit's: a revision only because it names the rejection.
    r = envelope(await session.call_tool("patch_file", {
        "target_file": os.path.join(root, "story.md"),
        "search_content": "The last line.",
        "replace_content": "The last line.\nA line added later.",
        "revision_of": r["run_id"],
    }))
    print("RESULT " + json.dumps(r), flush=True)


async def searches(session):
    await session.initialize()
    query = os.environ["PATCHGATE_TEST_QUERY"]
    for tool, q in [
        ("agentic_search", query),
        ("fast_search", query),
        ("agentic_retrieval", query),
        ("agentic_search", "   "),
    ]:
        async def progress(done, total, message, tool=tool):
            print(f"PROGRESS {tool} {done} {total} {message}", flush=True)

        r = await session.call_tool(tool, {"query": q}, progress_callback=progress)
        data = r.structured_content
        text = [c.text for c in r.content if getattr(c, "type", None) == "text"]
        if data is None or not text or json.loads(text[0]) != data:
            fail(f"{tool}: structured content and text differ: {r}")
        print(f"RESULT {tool} {bool(r.is_error)} {json.dumps(data)}", flush=True)


async def main():
    mode = sys.argv[1]
    if mode == "stdio":
        exe, root = sys.argv[2], sys.argv[3]
        params = StdioServerParameters(
            command=exe,
            args=["serve", "--stdio", "--root", root, "--policy", "auto"],
            env={k: v for k, v in os.environ.items() if k.startswith("PATCHGATE_")},
            cwd=root,
        )
        async with stdio_client(params) as (read_stream, write_stream):
            async with ClientSession(read_stream, write_stream) as session:
                await exercise(session, root)
    elif mode == "http":
        url, token, root = sys.argv[2], sys.argv[3], sys.argv[4]
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
            async with streamable_http_client(url, http_client=http) as (read_stream, write_stream, *_):
                async with ClientSession(read_stream, write_stream) as session:
                    await exercise(session, root)
    elif mode == "review":
        url, token, root = sys.argv[2], sys.argv[3], sys.argv[4]
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
            async with streamable_http_client(url, http_client=http) as (read_stream, write_stream, *_):
                async with ClientSession(read_stream, write_stream) as session:
                    await under_review(session, root)
    elif mode == "search":
        exe, root = sys.argv[2], sys.argv[3]
        params = StdioServerParameters(
            command=exe,
            args=["serve", "--stdio", "--root", root],
            env={k: v for k, v in os.environ.items() if k.startswith("PATCHGATE_")},
            cwd=root,
        )
        async with stdio_client(params) as (read_stream, write_stream):
            async with ClientSession(read_stream, write_stream) as session:
                await searches(session)
    else:
        fail(f"unknown mode {mode}")
    print(f"OK {mode}")


if __name__ == "__main__":
    asyncio.run(main())
