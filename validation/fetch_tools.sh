#!/usr/bin/env bash
# Checks out the peer tools' sources from local git mirrors into a cache folder outside the repository and
# prints the PYTHONPATH that run_tools.py needs. It does not download anything: clone each repository yourself
# (or point at existing mirrors) and pass the git directories as environment variables:
#
#   FVCORE_GIT=~/src/fvcore/.git PTFLOPS_GIT=... THOP_GIT=... TORCHINFO_GIT=... PTHFLOPS_GIT=... \
#   CALFLOPS_GIT=... DEEPSPEED_GIT=... [VALIDATION_CACHE=~/.cache/ridge-validation] validation/fetch_tools.sh
#
# Repositories: facebookresearch/fvcore, sovrasov/flops-counter.pytorch (ptflops), Lyken17/pytorch-OpCounter (thop),
# TylerYep/torchinfo, 1adrianb/pytorch-estimate-flops (pthflops), MrYxJ/calculate-flops.pytorch (calflops),
# microsoft/DeepSpeed (only deepspeed/profiling/flops_profiler/profiler.py is taken, as ds_profiler.py).
# Each is checked out at its HEAD (or at REF_<NAME>, e.g. REF_FVCORE=<commit>), except torchinfo, which is checked
# out at its release tag v1.8.0 (what `pip install torchinfo` gives, and what ridge's `torchinfo` convention
# reproduces; HEAD has unreleased counting changes); the commits used are written to $VALIDATION_CACHE/src/COMMITS.
set -euo pipefail
cache=${VALIDATION_CACHE:-$HOME/.cache/ridge-validation}
src=$cache/src
mkdir -p "$src"
: > "$src/COMMITS"

checkout() {  # NAME GIT_DIR [DEFAULT_REF]
  local name=$1 git=$2 ref_var="REF_${1^^}" default=${3:-HEAD}
  local ref=${!ref_var:-$default}
  [[ -d $git ]] || { echo "fetch_tools.sh: ${name^^}_GIT=$git is not a git directory" >&2; exit 1; }
  rm -rf "${src:?}/$name" && mkdir -p "$src/$name"
  git --git-dir="$git" archive "$ref" | tar -x -C "$src/$name"
  echo "$name $(git --git-dir="$git" rev-parse "$ref") $(git --git-dir="$git" log -1 --format=%cs "$ref")" >> "$src/COMMITS"
}

checkout fvcore "${FVCORE_GIT:?set FVCORE_GIT}"
checkout ptflops "${PTFLOPS_GIT:?set PTFLOPS_GIT}"
checkout thop "${THOP_GIT:?set THOP_GIT}"
checkout torchinfo "${TORCHINFO_GIT:?set TORCHINFO_GIT}" v1.8.0
checkout pthflops "${PTHFLOPS_GIT:?set PTHFLOPS_GIT}"
checkout calflops "${CALFLOPS_GIT:?set CALFLOPS_GIT}"
ds_ref=${REF_DEEPSPEED:-HEAD}
rm -rf "$src/deepspeed_profiler" && mkdir -p "$src/deepspeed_profiler"
git --git-dir="${DEEPSPEED_GIT:?set DEEPSPEED_GIT}" show "$ds_ref:deepspeed/profiling/flops_profiler/profiler.py" \
  > "$src/deepspeed_profiler/ds_profiler.py"
echo "deepspeed $(git --git-dir="$DEEPSPEED_GIT" rev-parse "$ds_ref") $(git --git-dir="$DEEPSPEED_GIT" log -1 --format=%cs "$ds_ref")" \
  >> "$src/COMMITS"

cat "$src/COMMITS" >&2
here=$(cd "$(dirname "$0")" && pwd)
echo "$here:$src/fvcore:$src/ptflops:$src/thop:$src/torchinfo:$src/pthflops:$src/calflops:$src/deepspeed_profiler"
