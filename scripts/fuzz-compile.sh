# Sourced by scripts/fuzz-*.sh: compiles a fuzzer's sources, instrumented for AddressSanitizer and libFuzzer's
# coverage, several at once.
#
# compile_objects NAME: each of "${sources[@]}" becomes $out/obj/<path with / as _>.o, compiled by $CXX with
# "${flags[@]}" when that object is missing or older than its source or any of "${deps[@]}"; up to nproc compiles
# run at once, and a failed one fails the calling script (set -e). Sets the array `objects`, in source order.
compile_objects() {
  local name=$1 jobs src obj dep stale pid
  local running=()
  jobs=$(nproc 2>/dev/null || echo 2)
  objects=()
  for src in "${sources[@]}"; do
    obj="$out/obj/$(echo "$src" | tr / _).o"
    stale=0
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ]; then stale=1; fi
    for dep in "${deps[@]}"; do
      if [ "$dep" -nt "$obj" ]; then stale=1; fi
    done
    if [ "$stale" = 1 ]; then
      echo "$name: compiling $src" >&2
      "$CXX" "${flags[@]}" -fsanitize=address,fuzzer-no-link -c "$src" -o "$obj" &
      running+=("$!")
      if [ "${#running[@]}" -ge "$jobs" ]; then
        wait "${running[0]}"
        running=("${running[@]:1}")
      fi
    fi
    objects+=("$obj")
  done
  for pid in "${running[@]}"; do wait "$pid"; done
}
