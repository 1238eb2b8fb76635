#!/usr/bin/env bash
# What each rule of the lazy merge is worth: for every rule `patchgate eval --rules` lists,
# the change in correct / right / wrong / harmful / lost_code / refused merges (exact case
# counts, as `eval` prints them) on each corpus when that rule is off (`eval DIR --without
# RULE --repeat 1`), printed as a Markdown table. A cell reads
# `+correct/+right/+wrong/+harmful/+lost_code/+refused`, then `, declines wrong +k` when cases
# the corpus expects declined (meta.json `"expect": "decline"`) merge wrong; `=` only when no
# count moved (a merge going from correct to loose moves `correct`). A failing `eval` stops it.
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

# The exact case counts `eval` ARGS... prints (its own counts, not percentages): "correct
# right wrong harmful lost_code refused decline_wrong". Stops the script when `eval` fails or
# its output lacks a count.
counts() {
    local out
    if ! out=$("$bin" eval "$@" --repeat 1); then
        echo "rule-worth: \`$bin eval $* --repeat 1\` failed" >&2
        exit 1
    fi
    awk '
        $1 == "correct:" { v["correct"] = $2 }
        $1 == "right:" { v["right"] = $2 }
        $1 == "wrong:" { w = $2; sub(",", "", w); v["wrong"] = w; v["harmful"] = $4 }
        $1 == "refused:" { v["refused"] = $2 }
        / lost_code_merges=/ {
            for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] = kv[2] }
            v["lost_code"] = s["lost_code_merges"]; v["decline_wrong"] = s["decline_wrong"]
        }
        END {
            split("correct right wrong harmful lost_code refused decline_wrong", keys, " ")
            for (k = 1; k <= 7; k++) {
                if (!(keys[k] in v) || v[keys[k]] !~ /^[0-9]+$/) {
                    print "rule-worth: no count " keys[k] " in eval output" > "/dev/stderr"
                    exit 1
                }
                line = line (k > 1 ? " " : "") v[keys[k]]
            }
            print line
        }' <<<"$out"
}

declare -A base
header="| rule | stage |"
rule_line="| --- | --- |"
for c in "${corpora[@]}"; do
    base[$c]=$(counts "$root/$c")
    header+=" $c |"
    rule_line+=" --- |"
done
echo "Change in correct / right / wrong / harmful / lost_code / refused merges (cases) with the"
echo "rule off."
echo
echo "$header"
echo "$rule_line"
rules=$("$bin" eval --rules)
while read -r name stage _; do
    row="| \`$name\` | $stage |"
    for c in "${corpora[@]}"; do
        read -r k r w h l f d <<<"${base[$c]}"
        off=$(counts "$root/$c" --without "$name")
        read -r k2 r2 w2 h2 l2 f2 d2 <<<"$off"
        if [ "${base[$c]}" = "$off" ]; then
            row+=" = |"
        else
            row+=$(printf ' %+d/%+d/%+d/%+d/%+d/%+d' $((k2 - k)) $((r2 - r)) $((w2 - w)) \
                $((h2 - h)) $((l2 - l)) $((f2 - f)))
            if [ "$d" != "$d2" ]; then
                row+=$(printf ', declines wrong %+d' $((d2 - d)))
            fi
            row+=" |"
        fi
    done
    echo "$row"
done <<<"$rules"
echo
for c in "${corpora[@]}"; do
    read -r k r w h l f d <<<"${base[$c]}"
    echo "- $c, every rule on: correct $k, right $r, wrong $w (harmful $h), lost_code $l," \
        "refused $f, declines wrong $d"
done
