# Sourced by scripts/fuzz-*.sh: compiles a fuzzer's sources, instrumented for AddressSanitizer and libFuzzer's
# coverage, several at once.
#
# Every fuzzer compiles with the same flags (`fuzz_flags`) into one object folder (build-fuzz-obj/), so a file that
# several fuzzers use (src/ops, src/graph) is compiled once. Sources compile in unity batches, as the main build's
# do (cmake/Options.cmake): up to `fuzz_unity_batch` consecutive files of one folder become one translation unit,
# so the headers every file includes (nlohmann/json, fmt, the standard library) are parsed once per batch. With
# -gline-tables-only instead of -g, batches of 16 took the fuzzers' build from 414 s to 243 s of CPU (2-core VM). A
# batch's object is rebuilt when it is missing, older than its generated unity file, or older than any file its
# clang dependency file (-MMD) lists (its sources and their headers); when the flags change, every object is. Each
# object is compiled under a lock of its own, so the fuzz scripts can run at the same time (scripts/test.sh).
#
# compile_objects NAME: "${sources[@]}" (in order) are compiled in batches into build-fuzz-obj/; up to nproc
# compiles run at once, and a failed one fails the calling script. Sets the array `objects`.
#
# run_fuzzer NAME LOG PREFIX BIN ARGS...: runs the libFuzzer binary BIN on ARGS (corpus, seeds, limits), its output
# in LOG and crash inputs saved as PREFIX* (a regressions folder and a file prefix); prints a failure line and the
# run's statistics, each starting with NAME; returns 1 when the fuzzer found something.
#
# Background jobs, nproc at a time: start one with `cmd & bg_started`; `bg_drain` waits for the rest. A job that
# fails sets bg_status to 1.
bg_jobs=$(nproc 2>/dev/null || echo 2)
bg_running=()
bg_status=0
bg_started() {
  bg_running+=("$!")
  if [ "${#bg_running[@]}" -ge "$bg_jobs" ]; then
    wait "${bg_running[0]}" || bg_status=1
    bg_running=("${bg_running[@]:1}")
  fi
}
bg_drain() {
  local pid
  for pid in "${bg_running[@]}"; do wait "$pid" || bg_status=1; done
  bg_running=()
}
fuzz_obj_dir=build-fuzz-obj
# -gline-tables-only: file and line in AddressSanitizer's reports at a fifth less compile time than -g.
fuzz_flags=(-std=gnu++20 -O1 -gline-tables-only -fno-omit-frame-pointer -Iinclude -Isrc -Ifuzz
            -DONNX_NAMESPACE=onnx -DONNX_ML=1)
# src/graph/data_dir.cpp finds data/ (the GPU architecture table, device files) through these.
fuzz_flags+=(-DRIDGE_SOURCE_DATA_DIR="\"$PWD/data\"" -DRIDGE_INSTALL_DATA_DIR="\"/usr/local/share/ridge\"")

fuzz_unity_batch=16

# 0 when $1 (an object) must be compiled from $2 (its unity file): missing, older than it or than a file it used.
fuzz_object_stale() {
  local obj=$1 src=$2 dep
  [ -f "$obj" ] && [ -f "${obj%.o}.d" ] || return 0
  [ "$src" -nt "$obj" ] && return 0
  for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "${obj%.o}.d"); do
    if [ ! -e "$dep" ] || [ "$dep" -nt "$obj" ]; then return 0; fi
  done
  return 1
}

# Splits "${sources[@]}" into unity batches: consecutive files of one folder, at most fuzz_unity_batch of them.
# Prints one batch per line, its files separated by spaces.
fuzz_unity_batches() {
  local src dir batch=() batch_dir=""
  for src in "${sources[@]}"; do
    dir=$(dirname "$src")
    if [ "${#batch[@]}" -gt 0 ] && { [ "$dir" != "$batch_dir" ] || [ "${#batch[@]}" -ge "$fuzz_unity_batch" ]; }; then
      echo "${batch[*]}"
      batch=()
    fi
    batch+=("$src")
    batch_dir=$dir
  done
  [ "${#batch[@]}" -eq 0 ] || echo "${batch[*]}"
}

compile_objects() {
  local name=$1 batch unity obj files
  mkdir -p "$fuzz_obj_dir"
  # Objects compiled with other flags are removed (under a lock: another fuzz script may be checking too).
  (
    flock -x 9
    if [ "$(cat "$fuzz_obj_dir/flags" 2>/dev/null)" != "$CXX ${fuzz_flags[*]}" ]; then
      rm -f "$fuzz_obj_dir"/*.o "$fuzz_obj_dir"/*.d
      echo "$CXX ${fuzz_flags[*]}" > "$fuzz_obj_dir/flags"
    fi
  ) 9>"$fuzz_obj_dir/flags.lock"
  objects=()
  while read -r batch; do
    read -ra files <<< "$batch"
    # The batch is named by its folder and a hash of its file list, so fuzzers that list the same files share it.
    unity="$fuzz_obj_dir/$(dirname "${files[0]}" | tr / _)-$(echo "$batch" | md5sum | cut -c1-8).cpp"
    obj="${unity%.cpp}.o"
    (
      flock -x 9
      # The unity file is rewritten only when its text changes (its time stamp is part of the object's staleness).
      printf '#include "%s"\n' "${files[@]/#/$PWD/}" > "$unity.new"
      if cmp -s "$unity.new" "$unity"; then rm -f "$unity.new"; else mv "$unity.new" "$unity"; fi
      # Another fuzz script may have compiled it while this one waited for the lock.
      if fuzz_object_stale "$obj" "$unity"; then
        echo "$name: compiling ${files[*]}" >&2
        "$CXX" "${fuzz_flags[@]}" -fsanitize=address,fuzzer-no-link -MMD -MF "${obj%.o}.d" -c "$unity" -o "$obj"
      fi
    ) 9>"$obj.lock" </dev/null &
    bg_started
    objects+=("$obj")
  done < <(fuzz_unity_batches)
  bg_drain
  [ "$bg_status" = 0 ] || { echo "$name: a compile failed" >&2; exit 1; }
}

run_fuzzer() {
  local name=$1 log=$2 prefix=$3 bin=$4 rc=0
  shift 4
  "$bin" "$@" -artifact_prefix="$prefix" -print_final_stats=1 2>"$log" || rc=1
  [ "$rc" = 0 ] || echo "$name: FAILED; crash input saved under $(dirname "$prefix")/ (log: $log)" >&2
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | sed "s/^/$name: /" >&2 || true
  return $rc
}
