#!/usr/bin/env bash
# chaos.sh: long runs of the fault-injection harness
# (docs/safety/fault-injection.md).  Runs the chaos profiles
# (tests/integration/t7[6-8]N-chaos-*.sh) one after another,
# round-robin, each for SECONDS with a fresh random seed, until MINUTES
# have passed, and prints the totals.  Every run's seed,
# schedule, history and checker report are kept under OUT/run-N-PROFILE; a
# failed run is replayed with the command printed for it.
#   scripts/chaos.sh [--minutes M] [--seconds S] [--profiles "kill9 ..."]
#                    [--bin BUILD/bin] [--out DIR]
# Defaults: 30 minutes, 20 s per run, every profile, build/dev/bin,
# build/chaos.  Exit 1 if any run failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
minutes=30 seconds=20 profiles="" bin=$PWD/build/dev/bin out=$PWD/build/chaos
while [ $# -gt 0 ]; do
    case $1 in
    --minutes) minutes=$2 ;;
    --seconds) seconds=$2 ;;
    --profiles) profiles=$2 ;;
    --bin) bin=$(cd "$2" && pwd) ;;
    --out) out=$2 ;;
    *) echo "usage: $0 [--minutes M] [--seconds S] [--profiles LIST] [--bin DIR] [--out DIR]" >&2; exit 2 ;;
    esac
    shift 2
done
if [ -z "$profiles" ]; then
    for f in tests/integration/t7[6-8][0-9]-chaos-*.sh; do
        p=${f##*/t7[6-8]?-chaos-}
        profiles+="${p%.sh} "
    done
fi
mkdir -p "$out"
: >"$out/ha-windows.txt" # the HA profile's failovers (docs/HA.md)
export TN_BIN=$bin TN_SRC=$PWD
end=$(($(date +%s) + minutes * 60))
runs=0 failed=0 faults=0 ops=0 grants=0 admits=0 rejects=0 violations=0 events=0
declare -A per_runs per_faults
t0=$(date +%s)
while [ "$(date +%s)" -lt "$end" ]; do
    for p in $profiles; do
        [ "$(date +%s)" -lt "$end" ] || break
        runs=$((runs + 1))
        seed=$(((RANDOM << 15) | RANDOM))
        dir=$out/run-$runs-$p
        mkdir -p "$dir"
        script=$(ls tests/integration/t7[6-8]?-chaos-"$p".sh)
        TN_CHAOS_SEED=$seed TN_CHAOS_SECONDS=$seconds CHAOS_OUT=$dir \
            bash "$script" >"$dir/log" 2>&1
        rc=$?
        grep -h '^ha-window ' "$dir/log" >>"$out/ha-windows.txt"
        line=$(grep -E '^(ok - |FAIL: )' "$dir/log" | tail -1)
        kv() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$line" | head -1; }
        f=$(kv faults) o=$(kv ops) g=$(kv grants) a=$(kv sink_admit) r=$(kv sink_reject) e=$(kv events)
        faults=$((faults + ${f:-0})) ops=$((ops + ${o:-0})) grants=$((grants + ${g:-0}))
        admits=$((admits + ${a:-0})) rejects=$((rejects + ${r:-0})) events=$((events + ${e:-0}))
        per_runs[$p]=$((${per_runs[$p]:-0} + 1))
        per_faults[$p]=$((${per_faults[$p]:-0} + ${f:-0}))
        if [ "$rc" != 0 ]; then
            failed=$((failed + 1))
            v=0
            if [ -f "$dir/report.json" ]; then
                v=$(grep -oE '"(duplicate_token|token_order|overlapping_grant|superseded_success|renew_token_changed|sink_below_mark|sink_never_granted|sink_mark_moved_down|sink_mark_mismatch|renew_after_lost|check_revived)": [0-9]+' \
                    "$dir/report.json" | awk '{s += $2} END {print s + 0}')
            fi
            violations=$((violations + v))
            echo "FAILED run $runs ($p, seed $seed, $v violations): see $dir/log;" \
                "replay: TN_KEEP=1 TN_CHAOS_SEED=$seed TN_CHAOS_SECONDS=$seconds TN_BIN=$bin bash $script"
        else
            echo "run $runs $p seed $seed: ${line#ok - }"
        fi
    done
done
echo
echo "chaos: $runs runs in $(($(date +%s) - t0)) s ($seconds s each), $failed failed"
for p in $profiles; do
    echo "  $p: ${per_runs[$p]:-0} runs, ${per_faults[$p]:-0} faults"
done
echo "  faults injected: $faults; operations: $ops ($grants grants); history events: $events"
echo "  sink writes admitted: $admits; zombie writes attempted and rejected: $rejects"
echo "  violations found: $violations"
if [ -s "$out/ha-windows.txt" ]; then
    echo "  $(/usr/bin/python3 tests/tools/ha/ha_check.py summary <"$out/ha-windows.txt")"
fi
[ "$failed" = 0 ]
