#!/usr/bin/env bash
# Starts a private single-node Slurm (own munge key and socket, own config, ports and spool in a temp folder),
# runs `ridge sweep --on slurm` for mnist at three batch sizes with one task failing on purpose, checks that the
# failure is reported with its state and log, resubmits it, and compares the merged result with a local run.
# Stops exactly the daemons it started, by PID. Exit 77 (skipped) where Slurm cannot run.
set -u
RIDGE=${1:?usage: slurm_test.sh path/to/ridge}
pass=0; fail=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; fail=$((fail + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

for tool in sbatch squeue scontrol slurmctld slurmd munged python3; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || { echo "skipped: $tool is not installed (scripts/install-deps.sh --with-test-deps installs slurm-wlm and munge)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "skipped: starting slurmd needs root"; exit 77; }

T=$(mktemp -d /tmp/ridge-slurm.XXXXXX)
chmod 755 "$T"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT

# munge with its own key and socket
mkdir -p "$T/munge" "$T/spool/ctld" "$T/spool/d" "$T/log"
chmod 700 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$T/munge/munge.key"
/usr/sbin/munged --force --socket="$T/munge/munge.sock" --key-file="$T/munge/munge.key" \
  --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" --seed-file="$T/munge/seed" || { echo "skipped: munged would not start"; exit 77; }
pids+=("$(cat "$T/munge/munged.pid")")

host=$(hostname -s)
port=$(( 20000 + ($$ % 20000) ))
mem=$(( $(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo) / 2 ))
cat > "$T/slurm.conf" <<CONF
ClusterName=ridgetest
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.sock
StateSaveLocation=$T/spool/ctld
SlurmdSpoolDir=$T/spool/d
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldPort=$port
SlurmdPort=$((port + 1))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
MinJobAge=600
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
NodeName=$host CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$T/slurm.conf"
/usr/sbin/slurmctld -f "$SLURM_CONF" || { echo "skipped: slurmctld would not start"; exit 77; }
for i in $(seq 50); do [ -s "$T/slurmctld.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$T/slurmctld.pid")")
/usr/sbin/slurmd -f "$SLURM_CONF" || { echo "skipped: slurmd would not start"; exit 77; }
for i in $(seq 50); do [ -s "$T/slurmd.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$T/slurmd.pid")")
for i in $(seq 60); do sinfo -h -o %T 2>/dev/null | grep -q idle && break; sleep 0.5; done
sinfo -h -o %T | grep -q idle || { echo "skipped: the Slurm node did not become idle"; cat "$T/log/slurmctld.log" | tail -5; exit 77; }
echo "slurm up on $host (ports $port, $((port + 1)))"

# 1. local sweep: the reference
"$RIDGE" sweep mnist --batch 1,8,64 --out "$T/local" --format json > "$T/local.json" 2>"$T/local.err"
check "local sweep succeeds" '[ $? = 0 ]'

# 2. the same sweep on Slurm, point 1 failing on purpose
RIDGE_SWEEP_FAIL_TASK=1 "$RIDGE" sweep mnist --batch 1,8,64 --on slurm --out "$T/cluster" --wait --format json \
  > "$T/first.json" 2> "$T/first.err"
rc=$?
check "a failed task makes the collect exit 1" "[ $rc = 1 ]"
check "the failed point is listed with its state" "grep -q 'point 1 (mnist at batch 8): no result — FAILED (exit 1)' '$T/first.json'"
check "the failed point's log path is given and holds the reason" \
  "log=\$(python3 -c 'import json,sys,re; n=[x for x in json.load(open(sys.argv[1]))[\"notes\"] if \"point 1\" in x][0]; print(n.split(\"log \")[1])' '$T/first.json'); grep -q 'fails on purpose' \"\$log\""
check "two of three points collected" "python3 -c 'import json,sys; sys.exit(0 if len(json.load(open(sys.argv[1]))[\"points\"]) == 2 else 1)' '$T/first.json'"
check "the result files were written atomically (no temp files left)" "! ls '$T/cluster/results' | grep -q tmp"

# 3. resubmit only the failed point
"$RIDGE" sweep --resubmit-failed "$T/cluster" --wait --format json > "$T/merged.json" 2> "$T/resubmit.err"
check "resubmitting the failed point succeeds" '[ $? = 0 ]'
check "only one task was resubmitted" "grep -q 'resubmitted 1 point' '$T/resubmit.err'"
check "the merged Slurm result equals the local run (same rows, same estimated figures)" \
  "python3 - '$T/local.json' '$T/merged.json' <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if a['points'] == b['points'] and a['fits'] == b['fits'] else 1)
PY"
"$RIDGE" sweep --collect "$T/cluster" --format json > "$T/collect.json"
check "--collect reads the same merged result" "python3 -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:3]); sys.exit(0 if a[\"points\"]==b[\"points\"] else 1)' '$T/merged.json' '$T/collect.json'"

# 4. bad input
echo '{"not": "a result"}' > "$T/cluster/results/mnist__b8.json.tmp.1"
echo 'garbage' > "$T/cluster/results/notes.txt"
"$RIDGE" sweep --collect "$T/cluster" --format json > "$T/foreign.json" 2>&1
check "foreign and half-written files are ignored and named" "grep -q 'notes.txt: not a result of this sweep' '$T/foreign.json' && grep -q 'unfinished write' '$T/foreign.json'"
"$RIDGE" sweep mnist --batch 2 --on slurm --out "$T/bad" --partition nosuchpartition > /dev/null 2> "$T/refused.err"
check "sbatch refusing the job is a one-line error, exit 1" "[ \$? = 1 ] && grep -q 'sbatch refused the job' '$T/refused.err' && [ \$(wc -l < '$T/refused.err') = 1 ]"
"$RIDGE" sweep resnet18 --batch 1 --on slurm --out "$T/cluster" > /dev/null 2> "$T/reuse.err"
check "a folder holding another sweep is never overwritten" "[ \$? = 1 ] && grep -q 'holds a different sweep' '$T/reuse.err'"
env -i PATH=/nonexistent "$RIDGE" sweep mnist --batch 2 --on slurm --out "$T/nos" > /dev/null 2> "$T/noslurm.err"
check "no Slurm installed: clear message, exit 1" "[ \$? = 1 ] && grep -q 'Slurm is not installed' '$T/noslurm.err'"
"$RIDGE" sweep mnist --batch 1,2 --on slurm --out "$T/gpu" --gres gpu:2 --partition gpu --account acct \
  --gpu-cmd 'python3 train.py --batch-size {batch}' --dry-run > "$T/gpu.sbatch"
check "GPU options appear in the generated script" "grep -q '^#SBATCH --gres=gpu:2' '$T/gpu.sbatch' && grep -q '^#SBATCH --partition=gpu' '$T/gpu.sbatch' && grep -q '^#SBATCH --account=acct' '$T/gpu.sbatch' && grep -q 'profile-cmd' '$T/gpu.sbatch'"
check "--dry-run submits and writes nothing" "[ ! -e '$T/gpu' ]"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
