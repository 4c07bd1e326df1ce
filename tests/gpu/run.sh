#!/usr/bin/env bash
# Runs the whole test suite and the GPU benches on a machine with an NVIDIA
# GPU and no network.
#
#   tests/gpu/run.sh [deno.tgz]
#
# Deno comes from a carried npm tarball of @deno/linux-x64-glibc (the binary
# is package/deno inside): the path given as the argument, else the first
# *.tgz under .carry/, else a `deno` on PATH.
#
# Steps: build the native library (and the PTX when nvcc exists), run every
# test (the GPU tests run when a CUDA device is present), the TS-handler GPU
# example (examples/cuda_saxpy.ts), then the benches:
# bench/gpu/driver_bench.c (the driver API called from C) and
# bench/gpu/cuda_bench.ts (the same through the bindings) in one run, and
# the ratios against the targets: bandwidth >= 0.9x the C program, launch
# overhead <= 1.2x it.
#
# Environment: BENCH_MIB (copy size, default 64), BENCH_LAUNCHES (default
# 20000), XLA_FFI_DENO_CUDA (another driver library, for both sides).
# Exit status: 1 when tests fail, 3 when a bench misses its target, else 0.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export DENO_NO_UPDATE_CHECK=1 NO_COLOR=1

# --- Deno -------------------------------------------------------------------
tarball="${1:-}"
if [ -z "$tarball" ]; then
  tarball=$(find .carry -maxdepth 3 -name '*.tgz' 2>/dev/null | sort | head -n 1)
fi
if [ -n "$tarball" ]; then
  [ -f "$tarball" ] || { echo "no such tarball: $tarball" >&2; exit 2; }
  tar -xzf "$tarball" -C "$work" || { echo "cannot unpack $tarball" >&2; exit 2; }
  DENO="$work/package/deno"
  [ -f "$DENO" ] || { echo "$tarball has no package/deno" >&2; exit 2; }
  chmod +x "$DENO"
elif command -v deno >/dev/null 2>&1; then
  DENO=$(command -v deno)
else
  echo "no Deno: pass the @deno/linux-x64-glibc tarball or put one under .carry/" >&2
  exit 2
fi
echo "== $("$DENO" --version | head -n 1) ($DENO)"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L

# --- Build ------------------------------------------------------------------
echo "== build"
"$DENO" task build || { echo "native build failed" >&2; exit 1; }
if "$DENO" eval 'import { findNvcc } from "./build.ts"; Deno.exit(findNvcc() ? 0 : 1)' 2>/dev/null; then
  "$DENO" task build:ptx || echo "nvcc failed: using the shipped PTX"
else
  echo "no nvcc: using the shipped PTX (examples/kernels/saxpy.ptx)"
fi

# --- Tests ------------------------------------------------------------------
echo "== tests"
log="$work/test.log"
"$DENO" task test 2>&1 | tee "$log"
test_status=${PIPESTATUS[0]}
summary=$(grep -E '^(ok|FAILED) \| [0-9]+ passed' "$log" | tail -n 1)
echo "tests: ${summary:-no summary} (exit ${test_status})"

# --- Examples on the GPU ----------------------------------------------------
# A TS handler launching saxpy on a CUDA runtime's stream (tests/cuda_handler_test.ts runs it
# too; here its output is in the log). Without a device it prints "skipped: <reason>".
echo "== examples/cuda_saxpy.ts"
example_out=$("$DENO" run --allow-ffi --allow-read --allow-write --allow-run --allow-env \
  examples/cuda_saxpy.ts 2>&1)
example_status=$?
echo "$example_out"
if [ "$example_status" -ne 0 ]; then
  echo "examples/cuda_saxpy.ts failed (exit ${example_status})" >&2
  test_status=1
elif command -v nvidia-smi >/dev/null 2>&1 && ! grep -q "all results correct" <<<"$example_out"; then
  echo "examples/cuda_saxpy.ts did not check its results on this GPU machine" >&2
  test_status=1
fi

# --- Benches ----------------------------------------------------------------
echo "== benches"
mib=${BENCH_MIB:-64}
launches=${BENCH_LAUNCHES:-20000}
cflags=(-std=c11 -O2 -Wall -Wextra -Werror)
for inc in "${CUDA_HOME:-/nonexistent}/include" /usr/local/cuda/include; do
  if [ -f "$inc/cuda.h" ]; then cflags+=(-DUSE_CUDA_H "-I$inc"); break; fi
done
bench_status=0
if ! ${CC:-cc} "${cflags[@]}" bench/gpu/driver_bench.c -o "$work/driver_bench" -ldl; then
  echo "cannot compile bench/gpu/driver_bench.c" >&2
  bench_status=3
elif ! "$work/driver_bench" examples/kernels/saxpy.ptx "$mib" "$launches" >"$work/c.txt"; then
  echo "the C bench failed (no GPU?)" >&2
  bench_status=3
elif ! "$DENO" run --allow-ffi --allow-read --allow-env bench/gpu/cuda_bench.ts "$mib" "$launches" \
  >"$work/ts.txt"; then
  echo "the TypeScript bench failed" >&2
  bench_status=3
else
  # Ratio TS/C per metric. Bandwidth: higher is better, target >= 0.9.
  # Launch overhead: lower is better, target <= 1.2.
  awk '
    FNR == NR { if ($1 == "BENCH") c[$2] = $3; next }
    $1 == "BENCH" {
      name = $2; ts = $3; base = c[name]
      if (base == "" || base + 0 == 0) { printf "%-18s no C figure\n", name; bad = 1; next }
      r = ts / base
      if (name ~ /_gbps$/) { ok = (r >= 0.9); target = ">= 0.90" }
      else { ok = (r <= 1.2); target = "<= 1.20" }
      printf "%-18s C %10.3f  TS %10.3f  ratio %6.3f  target %s  %s\n", name, base, ts, r, target, ok ? "PASS" : "MISS"
      if (!ok) bad = 1
    }
    END { exit bad }
  ' "$work/c.txt" "$work/ts.txt" || bench_status=3
fi

echo "== done: tests exit ${test_status}, benches exit ${bench_status}"
[ "$test_status" -eq 0 ] || exit 1
exit "$bench_status"
