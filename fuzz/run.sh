#!/usr/bin/env bash
# Runs every fuzz target for $1 seconds (default 600), two at a time (this machine has 2 cores),
# from the committed seed corpus; prints executions, corpus size and crashes per target.
set -uo pipefail
cd "$(dirname "$0")"
secs=${1:-600}
targets=(netfile symbols idx npy matrix_csv projection codes points classes)
mkdir -p logs
run() {
    local t=$1 work="corpus-run/$1"
    mkdir -p "$work" && cp -n "corpus/$t"/* "$work"/ 2>/dev/null
    cargo +nightly fuzz run "$t" "$work" -- -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 > "logs/$t.log" 2>&1
    echo "$t exit=$? $(grep -E '^#[0-9]+.*(DONE|pulse)' "logs/$t.log" | tail -1) crashes=$(ls artifacts/$t 2>/dev/null | wc -l)"
}
cargo +nightly fuzz build >/dev/null 2>&1 || { echo "cargo fuzz build failed"; exit 1; }
for ((i = 0; i < ${#targets[@]}; i += 2)); do
    run "${targets[i]}" &
    [ -n "${targets[i+1]:-}" ] && run "${targets[i+1]}" &
    wait
done
