#!/usr/bin/env bash
# What each rule of the lazy merge is worth: for every rule `patchgate eval --rules` lists,
# the change in right / harmful / lost_code / refused merges (case counts) on each corpus when
# that rule is off (`eval DIR --without RULE --repeat 1`), printed as a Markdown table.
# A cell reads `+right/+harmful/+lost_code/+refused`, then `, declines wrong +k` when cases
# the corpus expects declined (meta.json `"expect": "decline"`) merge wrong; `=` when nothing
# moved.
#
# Usage: scripts/rule-worth.sh [BIN] [CORPUS_ROOT] [CORPUS...]
# Defaults: target/release/patchgate, ../shared/corpus, and the five edit corpora.
set -euo pipefail

bin=${1:-target/release/patchgate}
root=${2:-../shared/corpus}
shift $(( $# > 2 ? 2 : $# ))
corpora=("$@")
if [ ${#corpora[@]} -eq 0 ]; then
    corpora=(git-history git-history-wide model-snippets git-history-systems git-history-fresh)
fi

# The counts of the summary line of `eval` ARGS...: "right harmful lost_code refused
# decline_wrong".
counts() {
    "$bin" eval "$@" --repeat 1 | tail -n 1 | awk '{
        for (i = 2; i <= NF; i++) { split($i, kv, "="); sub("%", "", kv[2]); v[kv[1]] = kv[2] }
        n = v["n"]
        printf "%d %d %d %d %d\n", v["right"] * n / 100 + 0.5, v["harmful"] * n / 100 + 0.5,
            v["lost_code"] * n / 100 + 0.5, v["refused"] * n / 100 + 0.5, v["decline_wrong"]
    }'
}

declare -A base
header="| rule | stage |"
rule_line="| --- | --- |"
for c in "${corpora[@]}"; do
    base[$c]=$(counts "$root/$c")
    header+=" $c |"
    rule_line+=" --- |"
done
echo "Change in right / harmful / lost_code / refused merges (cases) with the rule off."
echo
echo "$header"
echo "$rule_line"
"$bin" eval --rules | while read -r name stage _; do
    row="| \`$name\` | $stage |"
    for c in "${corpora[@]}"; do
        read -r r h l f d <<<"${base[$c]}"
        read -r r2 h2 l2 f2 d2 <<<"$(counts "$root/$c" --without "$name")"
        if [ "$r $h $l $f $d" = "$r2 $h2 $l2 $f2 $d2" ]; then
            row+=" = |"
        else
            row+=$(printf ' %+d/%+d/%+d/%+d' $((r2 - r)) $((h2 - h)) $((l2 - l)) $((f2 - f)))
            if [ "$d" != "$d2" ]; then
                row+=$(printf ', declines wrong %+d' $((d2 - d)))
            fi
            row+=" |"
        fi
    done
    echo "$row"
done
echo
for c in "${corpora[@]}"; do
    read -r r h l f d <<<"${base[$c]}"
    echo "- $c, every rule on: right $r, harmful $h, lost_code $l, refused $f, declines wrong $d"
done
