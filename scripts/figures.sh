#!/usr/bin/env bash
# Regenerate docs/figures.md: every figure the README quotes, with the machine it was measured
# on. Builds the release binary, scores each engine on the corpora (`patchgate eval`), the code
# search (`patchgate search-eval`), times a lazy merge of a generated 40 KB Rust file and of the
# same text as a .txt (in process, as `eval` times it, and end to end, as `patchgate merge`),
# and prints the binary's size.
#
#   scripts/figures.sh                 # corpora in ../shared/corpus (or $PATCHGATE_CORPUS)
set -euo pipefail
cd "$(dirname "$0")/.."

corpus="${PATCHGATE_CORPUS:-../shared/corpus}"
out=docs/figures.md
runs=21 # end-to-end merges timed; the median is quoted

[ -d "$corpus" ] || { echo "no corpus at $corpus (set PATCHGATE_CORPUS)" >&2; exit 2; }

cargo build --release --locked --quiet
bin="$PWD/target/release/patchgate"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A Rust file of about $1 bytes, every function distinct (as benches/lazy_scale.rs makes
# them); function number $2 gets its multiplication rotated (-1: none).
rust_file() {
    awk -v bytes="$1" -v tweak="$2" 'BEGIN {
        s = "use std::collections::HashMap;\n\n"; printf "%s", s; n = length(s)
        for (i = 0; n < bytes; i++) {
            t = (i == tweak) ? ".rotate_left(1)" : ""
            f = sprintf("/// Computes value number %d.\npub fn compute_%d(input: u64, table: &HashMap<u64, u64>) -> u64 {\n    let base = input.wrapping_mul(%d)%s;\n    match table.get(&base) {\n        Some(v) => v + %d,\n        None => base ^ 0x%x,\n    }\n}\n\n", i, i, i, t, i, i)
            printf "%s", f; n += length(f)
        }
    }'
}

# The summary line (the last) of a command's output.
last() { "$@" 2>/dev/null | tail -n 1; }

# One key's value in a summary line (`key=value`).
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# The median wall time of `patchgate merge lazy $1 $2`, in microseconds.
merge_us() {
    for _ in $(seq "$runs"); do
        local s e
        s=$(date +%s%N)
        "$bin" merge lazy "$1" "$2" >/dev/null
        e=$(date +%s%N)
        echo $(((e - s) / 1000))
    done | sort -n | sed -n "$(((runs + 1) / 2))p"
}

ms() { awk -v us="$1" 'BEGIN { printf "%.2f ms", us / 1000 }'; }

echo "== merge timing" >&2
rust_file 40000 -1 >"$work/before.rs"
middle=$(($(grep -c '^pub fn' "$work/before.rs") / 2))
rust_file 40000 "$middle" >"$work/after.rs"
printf '// ... existing code ...\npub fn compute_%d(input: u64, table: &HashMap<u64, u64>) -> u64 {\n    let base = input.wrapping_mul(%d).rotate_left(1);\n    match table.get(&base) {\n// ... existing code ...\n' \
    "$middle" "$middle" >"$work/lazy.txt"
for ext in rs txt; do
    mkdir -p "$work/timing-$ext/case"
    cp "$work/before.rs" "$work/timing-$ext/case/before.$ext"
    cp "$work/after.rs" "$work/timing-$ext/case/after.$ext"
    cp "$work/lazy.txt" "$work/timing-$ext/case/lazy.txt"
    cmp -s <("$bin" merge lazy "$work/timing-$ext/case/before.$ext" "$work/lazy.txt") "$work/after.rs" ||
        { echo "the timed merge of the .$ext file is not the expected result" >&2; exit 1; }
done
rs_line=$(last "$bin" eval "$work/timing-rs" --repeat "$runs")
txt_line=$(last "$bin" eval "$work/timing-txt" --repeat "$runs")
rs_e2e=$(merge_us "$work/timing-rs/case/before.rs" "$work/lazy.txt")
txt_e2e=$(merge_us "$work/timing-txt/case/before.txt" "$work/lazy.txt")

echo "== eval" >&2
eval_rows=""
for c in git-history git-history-wide git-history-systems git-history-fresh model-snippets; do
    [ -d "$corpus/$c" ] || continue
    for format in lazy blocks; do
        [ "$format" = blocks ] && ! ls "$corpus/$c"/*/blocks.txt >/dev/null 2>&1 && continue
        line=$(last "$bin" eval "$corpus/$c" --format "$format")
        declines=$(field "$line" declines)
        [ -n "$declines" ] && declines="$(field "$line" declined) of $declines" || declines="—"
        eval_rows+="| $c | $format | $(field "$line" n) | $(field "$line" right) | $(field "$line" harmful) | $(field "$line" correct) | $(field "$line" wrong) | $(field "$line" lost_code) | $(field "$line" refused) | $declines | $(field "$line" median_us) |"$'\n'
    done
done

echo "== search-eval" >&2
search_rows=""
for c in search search-fresh; do
    [ -d "$corpus/$c" ] || continue
    line=$(last "$bin" search-eval "$corpus/$c")
    search_rows+="| $c | $(field "$line" n) | $(field "$line" recall@5) | $(field "$line" hit@1) | $(field "$line" mrr) | $(field "$line" median_ms) | $(field "$line" index_ms) |"$'\n'
done

size=$(stat -c %s "$bin")
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)

cat >"$out" <<EOF
# Figures

Written by \`scripts/figures.sh\`; do not edit by hand: run the script again. Times are from a
shared machine and move by tens of percent from run to run; the accuracy figures do not move.

| | |
| --- | --- |
| date | $(date -u +%Y-%m-%d) |
| commit | \`$(git rev-parse --short HEAD)\` |
| machine | $(uname -m), ${cpu:-unknown CPU}, $(nproc) cores, $(uname -s) $(uname -r) |
| rustc | $(rustc --version) |
| release binary (default features) | $(awk -v b="$size" 'BEGIN { printf "%.1f MB", b / 1e6 }') ($size bytes) |

## A lazy merge's time

One changed function in the middle of a generated 40 KB Rust file (${middle} functions,
between two placeholders), and the same text as a \`.txt\` file (no grammar, so no parse). In
process: \`patchgate eval\`'s median over $runs runs (decode and merge; the syntax work apart).
End to end: the median wall time of $runs runs of \`patchgate merge lazy FILE SNIPPET\` (process
start to exit).

| file | merge in process | syntax work in process | end to end |
| --- | --- | --- | --- |
| 40 KB \`.rs\` | $(ms "$(field "$rs_line" median_us)") | $(ms "$(field "$rs_line" check_median_us)") | $(ms "$rs_e2e") |
| 40 KB \`.txt\` | $(ms "$(field "$txt_line" median_us)") | $(ms "$(field "$txt_line" check_median_us)") | $(ms "$txt_e2e") |

## The engines on the corpora (\`patchgate eval\`)

Percentages of the cases; \`lost code\` counts wrong merges that lose a line of the file's own
code; cases that only a refusal gets right (\`expect: decline\`) are counted apart: how many
of them were refused; median µs is the median merge time per case.

| corpus | engine | cases | right | harmful | correct | wrong | lost code | refused | refusals expected | median µs |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${eval_rows}
## The code search (\`patchgate search-eval\`)

| corpus | queries | recall@5 | hit@1 | MRR | median ms per query | index build ms |
| --- | --- | --- | --- | --- | --- | --- |
${search_rows}
EOF
echo "wrote $out" >&2
