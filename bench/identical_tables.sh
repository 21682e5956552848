#!/usr/bin/env bash
# Behaviour-unchanged check (issue 15): run every built-in scenario, plus
# variants that exercise the ring and PS policies, layer classes and the PS
# options, with short simulated durations; then compare every table byte for
# byte against a baseline directory.
#
#   bench/identical_tables.sh run  CODE_ROOT OUT_DIR   # run the set with CODE_ROOT's harness
#   bench/identical_tables.sh cmp  BASE_DIR  NEW_DIR   # cmp every *.parquet/*.csv
#
# e.g. bench/identical_tables.sh run /work/main /tmp/wt15-base
#      bench/identical_tables.sh run "$PWD"     /tmp/wt15-new
#      bench/identical_tables.sh cmp /tmp/wt15-base /tmp/wt15-new
# ONLY="default thesis-cell" runs and compares those cases alone; the engine is
# the environment's (DDNN_HARNESS_NS3_BUILD=DIR: a build, =wheel: the wheel)
set -u
# name | scenario | --set overrides
CASES=(
  "default|default|run.duration=0.5"
  "background-alone|thesis-background-alone|scale=10 run.duration=0.5"
  "training-alone|thesis-training-alone|scale=10 run.duration=1.2"
  "thesis|thesis|scale=10 run.duration=1.2"
  "thesis-cell|thesis|training.ratio=4 background.rate=92 run.duration=0.3 run.warmup=0.05 run.cooldown=0.05"
  "ring-priority-classes|thesis|scale=10 run.duration=1.2 training.policy=priority training.priority=low training.layer_classes={high=\"0-9\"}"
  "ring-bytescheduler|thesis|scale=10 run.duration=1.2 training.policy=bytescheduler training.ratio=8"
  "ring-fusion-barrier|thesis-training-alone|scale=10 run.duration=1.2 training.fusion_buffer=25000000 training.barrier=true"
  "ps-small|ps-small|run.duration=0.6"
  "ps-mercury|ps-small|run.duration=0.6 training.policy=mercury"
  "ps-bytescheduler-classes|ps-small|run.duration=0.6 training.policy=bytescheduler training.layer_classes={low=\"10-49\"}"
  "ps-tictac-barrier|ps-small|run.duration=0.6 training.policy=tictac training.pull_barrier=true"
  "ps-prophet-2shards|ps-small|run.duration=0.6 training.policy=prophet training.servers=2 training.server_placement=colocated"
  "ps-autobyte-slow|ps-small|run.duration=0.6 training.policy=autobyte training.chunk_overhead=0.0002 training.slowdowns=[{worker=1,start=0.1,end=0.4,factor=2}]"
  "ps-p3-chunk|ps-small|run.duration=0.6 training.policy=p3 training.aggregation=chunk training.deadline_class=high training.priority=low"
  "fairshare-drr|fairshare-drr|run.duration=0.6"
  "dctcp|dctcp|run.duration=0.6"
  "stragglers|stragglers|run.duration=0.8"
  "two-jobs|two-jobs|run.duration=0.6"
  "link-changes-steps|thesis|scale=10 run.duration=1.2 network.link_changes=[{at=0.5,rate=\"500Mbps\"}] background.steps=[{at=0.6,load=0.4}]"
  "min-iterations|thesis|scale=10 run.duration=0.5 run.min_iterations=2"
  "sharded|sharded|run.duration=0.8"
  "sharded-low-noreshard|sharded|run.duration=0.8 training.priority=low training.reshard_after_forward=false training.prefetch_depth=0"
  "buffer-shared-lossy|thesis|scale=10 run.duration=1.2 training.priority=low background.load=0.6 network.buffer.model=shared"
  "buffer-dynamic-switch-leafspine|thesis|scale=10 run.duration=1.2 topology.file=leaf-spine topology.host_link_rate=1Gbps topology.fabric_link_rate=1Gbps training.priority=low background.load=0.5 network.buffer.model=dynamic network.buffer.pool=switch"
  "services|services|run.duration=0.6"
  "services-every-kind|services|run.duration=0.4 training.enabled=false service=[{kind=\"query\",aggregators=[0],workers=[1,2],rate=100,fanout=1,persistent=false},{kind=\"rpc\",clients=[3],servers=[4],outstanding=2},{kind=\"stream\",source=5,destination=6,bitrate=\"2Mbps\"},{kind=\"poisson\",source=6,destination=5,bitrate=\"10Mbps\"},{kind=\"bulk\",sources=[7],destination=0,flows=2,start=0.1}]"
  "services-leafspine|services|run.duration=0.4 scale=2 topology.file=leaf-spine topology.host_link_rate=1Gbps topology.fabric_link_rate=1Gbps training.enabled=false service=[{kind=\"query\",rate=50},{kind=\"rpc\",qps=100,persistent=false},{kind=\"bulk\"}]"
)
if [ -n "${ONLY:-}" ]; then   # the named cases alone
  keep=()
  for c in "${CASES[@]}"; do
    for o in $ONLY; do [ "${c%%|*}" = "$o" ] && keep+=("$c"); done
  done
  CASES=("${keep[@]}")
fi

run_set() {
  local root out
  root=$(realpath "$1"); mkdir -p "$2"; out=$(realpath "$2")
  for c in "${CASES[@]}"; do
    IFS='|' read -r name scen sets <<<"$c"
    local args=()
    for s in $sets; do args+=(--set "$s"); done
    rm -rf "$out/$name"
    # from inside CODE_ROOT: `python -m` puts the current directory first
    # --allow-short: several cases are shorter than one iteration on purpose
    # (the tables, not the measurement, are compared); an older CODE_ROOT
    # without the option fails the case and says so
    if (cd "$root" && PYTHONPATH="$root" nice -n 10 python -m harness.cli run "$scen" "${args[@]}" \
        --allow-short -o "$out/$name" --no-progress >"$out/$name.log" 2>&1); then
      echo "ran  $name"
    else
      echo "FAIL $name (see $out/$name.log)"
    fi
  done
}

cmp_set() {
  local base=$1 new=$2 bad=0 n=0
  for c in "${CASES[@]}"; do
    IFS='|' read -r name _ _ <<<"$c"
    [ -d "$base/$name" ] || { echo "missing baseline $name"; bad=1; continue; }
    while IFS= read -r f; do
      rel=${f#"$base/"}
      n=$((n + 1))
      if ! cmp -s "$f" "$new/$rel"; then echo "DIFFERS $rel"; bad=1; fi
    done < <(find "$base/$name" -type f \( -name '*.parquet' -o -name '*.csv' \) | sort)
    # a table only in the new run is a difference too
    while IFS= read -r f; do
      rel=${f#"$new/"}
      [ -e "$base/$rel" ] || { echo "NEW ONLY $rel"; bad=1; }
    done < <(find "$new/$name" -type f \( -name '*.parquet' -o -name '*.csv' \) 2>/dev/null | sort)
  done
  if [ $bad = 0 ]; then echo "identical: $n tables"; else echo "DIFFERENT"; fi
  return $bad
}

case "${1:-}" in
  run) run_set "$2" "$3" ;;
  cmp) cmp_set "$2" "$3" ;;
  *) sed -n 2,12p "$0"; exit 2 ;;
esac
