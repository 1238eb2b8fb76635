#!/usr/bin/env bash
# Regenerate screenshots/*.png: real captures of the running TUI. `patchgate demo` runs in a
# private tmux server; keys are sent to it, `tmux capture-pane -e` takes each screen with its
# colours, and scripts/ansi2png.py renders it (Pillow, installed into .venv).
#
#   scripts/screenshots.sh            # needs tmux, python3 and a network for Pillow once
set -euo pipefail
cd "$(dirname "$0")/.."

COLS=150
ROWS=42
out=screenshots
mkdir -p "$out"

cargo build --release --quiet
bin="$PWD/target/release/patchgate"

python="$(.ci/pyenv)"
"$python" -c "import PIL" 2>/dev/null || "$python" -m pip install --quiet pillow

work="$(mktemp -d)"
sock="$work/tmux.sock"
tm() { tmux -S "$sock" -f /dev/null "$@"; }
cleanup() { tm kill-server 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

wait_for() { # TEXT [SECONDS]
    local deadline=$((SECONDS + ${2:-20}))
    until tm capture-pane -p -t pg | grep -qF -- "$1"; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "timed out waiting for: $1" >&2
            tm capture-pane -p -t pg >&2
            exit 1
        fi
        sleep 0.1
    done
}

shot() { # NAME
    sleep 0.6 # let highlighting finish and the frame settle
    tm capture-pane -e -p -t pg >"$work/$1.ansi"
    "$python" scripts/ansi2png.py "$work/$1.ansi" "$out/$1.png" "$COLS" "$ROWS"
    echo "$out/$1.png"
}

# `patchgate demo` at $COLS x $ROWS, on its first review (fast_apply on src/inventory.rs)
# with the diff in focus. The scripted agent's eight calls: six wait for review, one is a
# dry-run, one fails.
start_demo() {
    rm -rf "$work/state"
    tm new-session -d -s pg -x "$COLS" -y "$ROWS" -- env \
        PATCHGATE_STATE_DIR="$work/state" PATCHGATE_LOG="$work/patchgate.log" \
        COLORTERM=truecolor "$bin" demo --pace 150
    wait_for "6 pending" 30
    sleep 1
    tm send-keys -t pg g Enter
    wait_for "hunk 1/"
}

start_demo
shot queue-and-diff

tm send-keys -t pg s
wait_for "side-by-side"
shot side-by-side
tm send-keys -t pg s

tm send-keys -t pg "?"
wait_for "any key closes"
shot help
tm send-keys -t pg Escape

tm send-keys -t pg r
wait_for "a note for the agent"
tm send-keys -t pg -l "Sort the low-stock report by quantity, fewest first."
shot reject-note
# Sent, the note goes back to the demo agent, whose next edit of the file is revision v2:
# select it (the last row) and show its interdiff against the rejected edit.
tm send-keys -t pg Enter
wait_for "v2:"
tm send-keys -t pg Tab
for _ in $(seq 12); do tm send-keys -t pg j; done
tm send-keys -t pg Enter
wait_for "v2 diff"
tm send-keys -t pg i
wait_for "v2 interdiff"
shot revision-interdiff
tm kill-server 2>/dev/null || true

# `patchgate apply` reviewing a two-file patch against a copy of the demo project.
cp -r assets/demo "$work/project"
tm new-session -d -s pg -x "$COLS" -y "$ROWS" -- env \
    PATCHGATE_STATE_DIR="$work/state" PATCHGATE_LOG="$work/patchgate.log" \
    COLORTERM=truecolor "$bin" apply assets/examples/demo.patch --root "$work/project"
wait_for "2 pending" 30
tm send-keys -t pg n Space
wait_for "1 of 2 included"
shot apply
tm kill-server 2>/dev/null || true

# The same TUI in a small terminal: 80 × 24 (queue beside the diff), then 60 × 20 (stacked).
COLS=80
ROWS=24
start_demo
shot small-80x24
tm send-keys -t pg "?"
wait_for "j/k scroll"
shot small-80x24-help
tm send-keys -t pg Escape
COLS=60
ROWS=20
tm resize-window -t pg -x "$COLS" -y "$ROWS"
sleep 0.5
shot small-60x20
