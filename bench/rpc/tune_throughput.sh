#!/usr/bin/env bash
# Measurement throughput of remote tuning (anvil tune --tracker) with one device and with two, on
# loopback: a tracker and RPC servers on this machine, each server pinned to a core of its own
# (taskset), one session each. Measurement dominates each candidate (--min-repeat-ms 100,
# --repeat 3); the throughput is trials / (time spent measuring), from tune's summary line.
#
#   bench/rpc/tune_throughput.sh [trials]
set -euo pipefail
cd "$(dirname "$0")/../.."
trials=${1:-33}
bin=build/src/runtime/rpc
anvil=build/src/driver/cli/anvil
export ANVIL_RPC_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cat > "$work/conv.anvil" <<'MODEL'
def @main(%x: Tensor[(1, 64, 28, 28), float32], %w: Tensor[(64, 64, 3, 3), float32]) {
  nn.relu(nn.conv2d(%x, %w, padding=[1, 1, 1, 1]))
}
MODEL
"$bin/anvil-rpc-tracker" --host 127.0.0.1 --port 0 > "$work/tracker.out" 2>/dev/null &
sleep 0.5
tracker="127.0.0.1:$(sed -n 's/.*:\([0-9]*\)$/\1/p' "$work/tracker.out")"

measure() {  # devices -> "trials measuring_seconds"
    local devices=$1
    for core in $(seq 0 $((devices - 1))); do
        taskset -c "$core" "$bin/anvil-rpc-server" --host 127.0.0.1 --port 0 --tracker "$tracker" \
            --device-key bench$devices --max-sessions 1 --quiet > /dev/null 2>&1 &
    done
    sleep 1.5
    local out
    out=$("$anvil" tune "$work/conv.anvil" --target llvm -o "$work/records$devices.json" \
        --trials "$trials" --tuner random --no-tuning-cache --parallel 2 --threads 1 \
        --min-repeat-ms 100 --repeat 3 --tracker "$tracker" --device-key bench$devices 2>&1 |
        grep -E "trials in")
    # "N trials in Ts (... measuring M%)"
    local n t m
    n=$(sed -n 's/.*; \([0-9]*\) trials in \([0-9.]*\)s.*measuring \([0-9.]*\)%.*/\1/p' <<<"$out")
    t=$(sed -n 's/.*; \([0-9]*\) trials in \([0-9.]*\)s.*measuring \([0-9.]*\)%.*/\2/p' <<<"$out")
    m=$(sed -n 's/.*; \([0-9]*\) trials in \([0-9.]*\)s.*measuring \([0-9.]*\)%.*/\3/p' <<<"$out")
    echo "$n $(awk -v t="$t" -v m="$m" 'BEGIN { printf "%.3f", t * m / 100 }')"
}

read -r n1 s1 < <(measure 1)
read -r n2 s2 < <(measure 2)
awk -v n1="$n1" -v s1="$s1" -v n2="$n2" -v s2="$s2" 'BEGIN {
    r1 = n1 / s1; r2 = n2 / s2
    printf "devices  trials  measuring s  trials/s\n"
    printf "1        %6d  %11.2f  %8.2f\n", n1, s1, r1
    printf "2        %6d  %11.2f  %8.2f\n", n2, s2, r2
    printf "throughput, 2 devices / 1: %.2fx\n", r2 / r1
}'
