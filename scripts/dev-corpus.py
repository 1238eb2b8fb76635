#!/usr/bin/env python3
"""Build a development corpus for the lazy merge from the cargo registry on this machine.

Every crate the registry holds in two versions (this project's own dependencies, so the set
follows Cargo.lock) gives real before/after pairs of its Rust and C files. Each pair with 1 to
4 changed regions (at most 40 changed lines) becomes a case in the corpora's layout
(`before.EXT`, `after.EXT`, `lazy.txt`, `meta.json`), its snippet written the way the
generator of ../shared/corpus writes them (1 to 3 lines of context or the enclosing block,
placeholders in several wordings), and then with one habit of models (`style`): no
placeholder at the open edges, placeholders at column 0, or no blank lines beside them.

It is material to find causes on, next to the shared corpora; git-history-systems stays the
held-out set. The cases are third-party code: write them outside the repository.

    python3 scripts/dev-corpus.py /tmp/dev 26      # OUT_DIR SEED
    cargo run --release -- eval /tmp/dev

With `--git REPO` the pairs come from a git repository's history instead (each commit against
its first parent, at most PER_COMMIT files of it), for calibration on more material:

    python3 scripts/dev-corpus.py /tmp/self 26 --git .

With `--trees OLD NEW [NEWER ...]` the pairs are files at one relative path in consecutive
trees (two releases of a library, of an interpreter's standard library, ...):

    python3 scripts/dev-corpus.py /tmp/py 26 --trees ~/.pyenv/versions/3.{10,11,12}*/lib/python3.*
"""
import difflib
import json
import os
import random
import re
import subprocess
import sys

EXTS = {"rs", "c", "h", "cc", "cpp", "hpp"}
GIT_EXTS = EXTS | {"py", "js", "ts", "go", "rb", "java", "php", "sh"}
PER_COMMIT = 3
WORDINGS = ["... existing code ...", "... keep existing code ...", "... rest of code ...", "..."]
PER_PAIR = 20


def registry():
    base = os.path.expanduser("~/.cargo/registry/src")
    for d in sorted(os.listdir(base)):
        yield os.path.join(base, d)


def vkey(v):
    return [int(x) if x.isdigit() else 0 for x in re.split(r"[.+-]", v)]


def version_pairs(reg):
    by = {}
    for d in os.listdir(reg):
        m = re.match(r"^(.*?)-(\d+\.\d+\.\d+.*)$", d)
        if m:
            by.setdefault(m.group(1), []).append(m.group(2))
    for name, vs in sorted(by.items()):
        vs.sort(key=vkey)
        for a, b in zip(vs, vs[1:]):
            yield name, os.path.join(reg, f"{name}-{a}"), os.path.join(reg, f"{name}-{b}"), a, b


def lead(line):
    return line[: len(line) - len(line.lstrip())]


def ind(line):
    return len(lead(line).expandtabs(4))


def groups(ops, c):
    out = []
    for r in (o for o in ops if o[0] != "equal"):
        if out and r[1] - out[-1][-1][2] <= 2 * c:
            out[-1].append(r)
        else:
            out.append([r])
    return out


def enclosing(a, i1, i2, c, cap=60):
    """[i1, i2) grown to the enclosing block: the less indented header above, its closer."""
    lo, hi = max(0, i1 - c), min(len(a), i2 + c)
    body = [ind(a[k]) for k in range(i1, min(i2 + 1, len(a))) if a[k].strip()]
    if not body:
        return lo, hi
    h = i1 - 1
    while h >= 0 and (not a[h].strip() or ind(a[h]) >= min(body)):
        h -= 1
    if h < 0 or i1 - h > cap:
        return lo, hi
    e = i2
    while e < len(a) and (not a[e].strip() or ind(a[e]) > ind(a[h])):
        e += 1
    if e >= len(a) or e - i2 > cap:
        return lo, hi
    return min(lo, h), max(hi, e + 1)


def spans(a, ops, c, block):
    merged = []
    for g in groups(ops, c):
        i1, i2 = g[0][1], g[-1][2]
        lo, hi = enclosing(a, i1, i2, c) if block else (max(0, i1 - c), min(len(a), i2 + c))
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
            merged[-1][2] += g
        else:
            merged.append([lo, hi, g])
    return merged


def snippet(a, b, ext, rng):
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    c, block, wording = rng.choice([1, 2, 3]), rng.random() < 0.35, rng.choice(WORDINGS)
    mark = f"{'#' if ext in ('toml', 'yml', 'yaml', 'sh') else '//'} {wording}"
    out, pos = [], 0

    def placeholder(k):
        while k < len(a) and not a[k].strip():
            k += 1
        out.append(lead(a[k] if k < len(a) else "") + mark)

    for lo, hi, g in spans(a, ops, c, block):
        if lo > pos:
            placeholder(pos)
        k = lo
        for op in g:
            out.extend(a[k : op[1]])
            out.extend(b[op[3] : op[4]])
            k = op[2]
        out.extend(a[k:hi])
        pos = hi
    if pos < len(a):
        placeholder(pos)
    style = rng.choice(["open", "col0", "noblank", "plain"])
    is_mark = [line.strip() == mark for line in out]
    if style == "open":
        out = out[1:] if is_mark and is_mark[0] else out
        out = out[:-1] if out and out[-1].strip() == mark else out
    elif style == "col0":
        out = [mark if m else line for line, m in zip(out, is_mark)]
    elif style == "noblank":
        near = lambda k: (k > 0 and is_mark[k - 1]) or (k + 1 < len(out) and is_mark[k + 1])
        out = [line for k, line in enumerate(out) if line.strip() or not near(k)]
    changed = [o for o in ops if o[0] != "equal"]
    meta = dict(style=style, context=c, block_style=block, wording=wording, hunks=len(changed),
                changed=sum(max(o[2] - o[1], o[4] - o[3]) for o in changed))
    return "\n".join(out) + "\n", meta


def pair_ok(ta, tb):
    """The lines of a before/after pair the corpus keeps (1 to 4 regions, at most 40 changed
    lines, 20 to 4000 lines), or None."""
    if ta == tb or not ta.endswith("\n") or not tb.endswith("\n"):
        return None
    a, b = ta.split("\n")[:-1], tb.split("\n")[:-1]
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    regions = [o for o in ops if o[0] != "equal"]
    changed = sum(max(o[2] - o[1], o[4] - o[3]) for o in regions)
    if 20 <= len(a) <= 4000 and 1 <= len(regions) <= 4 and changed <= 40:
        return a, b
    return None


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, check=True).stdout


def git_pairs(repo):
    """(name, commit, rel, ext, before, after, a, b) for files changed by each commit."""
    for commit in git(repo, "rev-list", "--first-parent", "HEAD").decode().split():
        try:
            out = git(repo, "diff-tree", "--no-commit-id", "-r", "--diff-filter=M", "--name-only",
                      f"{commit}^", commit)
        except subprocess.CalledProcessError:  # the root commit
            continue
        kept = 0
        for rel in out.decode().split("\n"):
            ext = rel.rsplit(".", 1)[-1]
            if ext not in GIT_EXTS or kept >= PER_COMMIT:
                continue
            try:
                ta = git(repo, "show", f"{commit}^:{rel}").decode()
                tb = git(repo, "show", f"{commit}:{rel}").decode()
            except (subprocess.CalledProcessError, UnicodeDecodeError):
                continue
            lines = pair_ok(ta, tb)
            if lines:
                kept += 1
                yield os.path.basename(os.path.abspath(repo)), commit[:10], rel, ext, ta, tb, *lines


def write_case(out_dir, n, name, commit, rel, ext, ta, tb, a, b, rng):
    lazy, meta = snippet(a, b, ext, rng)
    d = os.path.join(out_dir, f"{name}-{commit}-{n}")
    os.makedirs(d, exist_ok=True)
    open(f"{d}/before.{ext}", "w").write(ta)
    open(f"{d}/after.{ext}", "w").write(tb)
    open(f"{d}/lazy.txt", "w").write(lazy)
    meta.update(repo=name, commit=commit, path=rel, ext=ext, lines_before=len(a))
    json.dump(meta, open(f"{d}/meta.json", "w"), indent=1)


def candidates(da, db, exts=EXTS):
    for root, _, files in os.walk(da):
        for f in sorted(files):
            ext = f.rsplit(".", 1)[-1]
            rel = os.path.relpath(os.path.join(root, f), da)
            if ext not in exts or not os.path.exists(os.path.join(db, rel)):
                continue
            try:
                ta, tb = open(os.path.join(da, rel)).read(), open(os.path.join(db, rel)).read()
            except (UnicodeDecodeError, OSError):
                continue
            if ta == tb or not ta.endswith("\n") or not tb.endswith("\n"):
                continue
            a, b = ta.split("\n")[:-1], tb.split("\n")[:-1]
            ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
            regions = [o for o in ops if o[0] != "equal"]
            changed = sum(max(o[2] - o[1], o[4] - o[3]) for o in regions)
            if 20 <= len(a) <= 4000 and 1 <= len(regions) <= 4 and changed <= 40:
                yield rel, ext, ta, tb, a, b


def tree_cases(out_dir, rng, trees):
    """Cases from files at one relative path in consecutive trees (OLD NEW [NEWER ...]):
    PER_PAIR * 3 of each pair, drawn at random."""
    n = 0
    for da, db in zip(trees, trees[1:]):
        cands = sorted(candidates(da, db, GIT_EXTS))
        rng.shuffle(cands)
        name = f"{os.path.basename(os.path.normpath(da))}..{os.path.basename(os.path.normpath(db))}"
        for rel, ext, ta, tb, a, b in cands[: PER_PAIR * 3]:
            n += 1
            write_case(out_dir, n, name.replace("/", "_"), "tree", rel, ext, ta, tb, a, b, rng)
    print(f"{n} cases in {out_dir}")


def main():
    if len(sys.argv) >= 6 and sys.argv[3] == "--trees":
        tree_cases(sys.argv[1], random.Random(int(sys.argv[2])), sys.argv[4:])
        return
    if len(sys.argv) == 5 and sys.argv[3] == "--git":
        out_dir, rng, n = sys.argv[1], random.Random(int(sys.argv[2])), 0
        for name, commit, rel, ext, ta, tb, a, b in git_pairs(sys.argv[4]):
            n += 1
            write_case(out_dir, n, name, commit, rel, ext, ta, tb, a, b, rng)
        print(f"{n} cases in {out_dir}")
        return
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out_dir, rng = sys.argv[1], random.Random(int(sys.argv[2]))
    n = 0
    for reg in registry():
        for name, da, db, va, vb in version_pairs(reg):
            cands = sorted(candidates(da, db))
            rng.shuffle(cands)
            for rel, ext, ta, tb, a, b in cands[:PER_PAIR]:
                lazy, meta = snippet(a, b, ext, rng)
                n += 1
                d = os.path.join(out_dir, f"{name}-{va}-{vb}-{n}")
                os.makedirs(d, exist_ok=True)
                open(f"{d}/before.{ext}", "w").write(ta)
                open(f"{d}/after.{ext}", "w").write(tb)
                open(f"{d}/lazy.txt", "w").write(lazy)
                meta.update(repo=name, commit=f"{va}..{vb}", path=rel, ext=ext, lines_before=len(a))
                json.dump(meta, open(f"{d}/meta.json", "w"), indent=1)
    print(f"{n} cases in {out_dir}")


if __name__ == "__main__":
    main()
