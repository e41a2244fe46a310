# Sourced by scripts/fuzz-*.sh: compiles a fuzzer's sources, instrumented for AddressSanitizer and libFuzzer's
# coverage, several at once.
#
# Every fuzzer compiles with the same flags (`fuzz_flags`) into one object folder (build-fuzz-obj/), so a file that
# several fuzzers use (src/ops, src/graph) is compiled once. An object is rebuilt when it is missing, older than its
# source, or older than any header its clang dependency file (-MMD) lists; when the flags change, every object is.
# Each object is compiled under a lock of its own, so the fuzz scripts can run at the same time (scripts/test.sh).
#
# compile_objects NAME: each of "${sources[@]}" becomes build-fuzz-obj/<path with / as _>.o, compiled by $CXX; up
# to nproc compiles run at once, and a failed one fails the calling script. Sets the array `objects`, in source order.
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
fuzz_flags=(-std=gnu++20 -O1 -g -fno-omit-frame-pointer -Iinclude -Isrc -Ifuzz -DONNX_NAMESPACE=onnx -DONNX_ML=1)
# src/graph/data_dir.cpp finds data/ (the GPU architecture table, device files) through these.
fuzz_flags+=(-DRIDGE_SOURCE_DATA_DIR="\"$PWD/data\"" -DRIDGE_INSTALL_DATA_DIR="\"/usr/local/share/ridge\"")

# 0 when $1 (an object) must be compiled from $2 (its source): missing, older than the source or a header it used.
fuzz_object_stale() {
  local obj=$1 src=$2 dep
  [ -f "$obj" ] && [ -f "${obj%.o}.d" ] || return 0
  [ "$src" -nt "$obj" ] && return 0
  for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "${obj%.o}.d"); do
    if [ ! -e "$dep" ] || [ "$dep" -nt "$obj" ]; then return 0; fi
  done
  return 1
}

compile_objects() {
  local name=$1 src obj
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
  for src in "${sources[@]}"; do
    obj="$fuzz_obj_dir/$(echo "$src" | tr / _).o"
    if fuzz_object_stale "$obj" "$src"; then
      (
        flock -x 9
        # Another fuzz script may have compiled it while this one waited for the lock.
        if fuzz_object_stale "$obj" "$src"; then
          echo "$name: compiling $src" >&2
          "$CXX" "${fuzz_flags[@]}" -fsanitize=address,fuzzer-no-link -MMD -MF "${obj%.o}.d" -c "$src" -o "$obj"
        fi
      ) 9>"$obj.lock" &
      bg_started
    fi
    objects+=("$obj")
  done
  bg_drain
  [ "$bg_status" = 0 ] || { echo "$name: a compile failed" >&2; exit 1; }
}
