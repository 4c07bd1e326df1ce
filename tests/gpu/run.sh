#!/usr/bin/env bash
# Runs the tests and the GPU benches on a machine with an NVIDIA GPU and no
# network.
#
#   tests/gpu/run.sh [--gpu-only] [deno.tgz]
#
# Deno comes from a carried npm tarball of @deno/linux-x64-glibc (the binary
# is package/deno inside): the path given as the argument, else the first
# *.tgz under .carry/, else a `deno` on PATH. `deno task carry` (on a machine
# with network and a C compiler) fills .carry/ with that tarball, the native
# libraries and the C bench: without a C compiler here, those are used
# (XLA_FFI_DENO_PREBUILT=.carry/lib), as long as the sources are unchanged.
# NVRTC: the usual search (XLA_FFI_DENO_NVRTC, /usr/local/cuda/lib64, ...),
# else the nvidia/*/lib folders of python3's site-packages.
#
# --gpu-only (a minute or two; every step has a time limit, 9 minutes at most in all):
#   the GPU tests only (test names starting "GPU: "), examples/cuda_saxpy.ts,
#   XLA:GPU calling a TS handler (tests/_xla_gpu_case.ts, with the jax of
#   $XLA_FFI_DENO_PYTHON or python3 when it has the CUDA plugin; else reported as
#   skipped) and the C-vs-TS benches. It fails when CUDA is unavailable (a GPU present
#   or not), when any GPU test fails or is ignored, or when the example does
#   not check its results; then prints every figure and ratio as one block to
#   paste into docs/cuda.md ("The GPU run").
# Without it: builds the native library (and the PTX when nvcc exists), runs
#   every test (the GPU tests run when a CUDA device is present), the example
#   and the benches.
#
# Benches: bench/gpu/driver_bench.c (the driver API called from C) and
# bench/gpu/cuda_bench.ts (the same through the bindings) in one run, and the
# ratios against the targets: bandwidth >= 0.9x the C program, launch
# overhead <= 1.2x it.
#
# Environment: BENCH_MIB (copy size, default 64), BENCH_LAUNCHES (default
# 20000), XLA_FFI_DENO_CUDA (another driver library, for both sides).
# Exit status: 1 when tests fail (or, with --gpu-only, are ignored), 2 when
# something needed is missing, 3 when a bench misses its target, else 0.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
gpu_only=0
tarball=""
for a in "$@"; do
  case "$a" in
    --gpu-only) gpu_only=1 ;;
    -h | --help)
      sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *) tarball=$a ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export DENO_NO_UPDATE_CHECK=1 NO_COLOR=1
# limit SECONDS command...: the command, stopped after SECONDS when timeout exists.
limit() {
  if command -v timeout >/dev/null 2>&1; then timeout "$@"; else shift; "$@"; fi
}
PERMS=(--allow-ffi --allow-read --allow-write --allow-run --allow-env --allow-net=127.0.0.1)

# --- Deno -------------------------------------------------------------------
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
  echo "no Deno: pass the @deno/linux-x64-glibc tarball or put one under .carry/ (deno task carry)" >&2
  exit 2
fi
echo "== $("$DENO" --version | head -n 1) ($DENO)"

# --- The GPU ----------------------------------------------------------------
gpu_present=0
if compgen -G '/dev/nvidia[0-9]*' >/dev/null || compgen -G '/proc/driver/nvidia/gpus/*' >/dev/null; then
  gpu_present=1
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  gpu_present=1
  nvidia-smi -L
fi

# --- A C compiler, or the carried libraries -----------------------------------
cc_bin=""
for c in "${CC:-}" cc gcc clang; do
  if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1; then
    cc_bin=$(command -v "$c")
    break
  fi
done
if [ -n "$cc_bin" ]; then
  echo "== C compiler: $cc_bin"
elif [ -f .carry/lib/manifest.json ]; then
  export XLA_FFI_DENO_PREBUILT="$root/.carry/lib"
  echo "== no C compiler: the libraries prebuilt in .carry/lib"
else
  echo "no C compiler, and no .carry/lib: run \`deno task carry\` on a machine with one, carry .carry" >&2
  exit 2
fi

# --- NVRTC --------------------------------------------------------------------
nvrtc_found() {
  "$DENO" eval 'import { nvrtcAvailable } from "./src/cuda/mod.ts"; Deno.exit(nvrtcAvailable() ? 0 : 1)' \
    >/dev/null 2>&1
}
if [ -z "${XLA_FFI_DENO_NVRTC:-}" ] && ! nvrtc_found && command -v python3 >/dev/null 2>&1; then
  sites=$(python3 -c 'import site; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null)
  for site in $sites; do
    for lib in "$site"/nvidia/*/lib/libnvrtc.so*; do
      if [ -f "$lib" ]; then
        export XLA_FFI_DENO_NVRTC=${lib%/*}
        echo "== NVRTC from python3's packages: $XLA_FFI_DENO_NVRTC"
        break 2
      fi
    done
  done
fi

# --- Pieces ---------------------------------------------------------------------
log="$work/test.log"

# Sets passed/failed/ignored from a `deno test` log.
summarize() {
  local summary
  summary=$(grep -E '^(ok|FAILED) \| [0-9]+ passed' "$1" | tail -n 1)
  passed=$(sed -nE 's/.*\| ([0-9]+) passed.*/\1/p' <<<"$summary")
  failed=$(sed -nE 's/.*\| ([0-9]+) failed.*/\1/p' <<<"$summary")
  ignored=$(grep -oE '[0-9]+ ignored' <<<"$summary" | grep -oE '[0-9]+')
  passed=${passed:-0} failed=${failed:-0} ignored=${ignored:-0}
  test_summary=${summary:-no summary}
}

# A TS handler launching saxpy on a CUDA runtime's stream (tests/cuda_handler_test.ts
# runs it too; here its output is in the log). Without a device it prints "skipped: <reason>".
example_status=0 example_line=""
run_example() {
  echo "== examples/cuda_saxpy.ts"
  local out
  out=$(limit 60 "$DENO" run "${PERMS[@]}" examples/cuda_saxpy.ts 2>&1)
  example_status=$?
  echo "$out"
  example_line=$(grep -m 1 -E 'all results correct|results wrong|skipped' <<<"$out")
  if [ "$example_status" -ne 0 ]; then
    echo "examples/cuda_saxpy.ts failed (exit ${example_status})" >&2
  elif [ "$gpu_present" -eq 1 ] && ! grep -q "all results correct" <<<"$out"; then
    echo "examples/cuda_saxpy.ts did not check its results on this GPU machine" >&2
    example_status=1
  fi
}

# XLA:GPU: jax's CUDA backend hosted in Deno runs a jitted program whose custom call is a TS
# handler launching a kernel on XLA's stream (tests/_xla_gpu_case.ts; tests/xla_gpu_test.ts runs
# it in the suite). Runs when the Python (XLA_FFI_DENO_PYTHON, else python3) has jax's CUDA plugin.
xla_gpu_status=0 xla_gpu_line=""
run_xla_gpu() {
  echo "== XLA:GPU: tests/_xla_gpu_case.ts"
  local py=${XLA_FFI_DENO_PYTHON:-python3} out
  if ! "$py" -c "import importlib.util as u, sys; sys.exit(0 if u.find_spec('jax') and any(u.find_spec(n) for n in ('jax_cuda13_plugin', 'jax_cuda12_plugin')) else 1)" \
    >/dev/null 2>&1; then
    xla_gpu_line="skipped: no jax with the CUDA plugin for $py"
    echo "$xla_gpu_line"
    return
  fi
  out=$(limit 150 "$DENO" run "${PERMS[@]}" tests/_xla_gpu_case.ts 2>&1)
  xla_gpu_status=$?
  echo "$out" | grep -vE '^(WARNING|I0000|E0000|W0000)' | tail -n 30
  xla_gpu_line=$(grep -m 1 -E '^XLA:GPU: |XLA:GPU case failed' <<<"$out")
  if [ "$xla_gpu_status" -ne 0 ]; then
    echo "tests/_xla_gpu_case.ts failed (exit ${xla_gpu_status})" >&2
  fi
}

# The C and the TS benches in one run; writes the ratio table to $work/ratios.md.
bench_status=0
run_benches() {
  echo "== benches"
  local mib=${BENCH_MIB:-64} launches=${BENCH_LAUNCHES:-20000} bench_bin=""
  if [ -n "$cc_bin" ]; then
    local cflags=(-std=c11 -O2 -Wall -Wextra -Werror)
    for inc in "${CUDA_HOME:-/nonexistent}/include" /usr/local/cuda/include; do
      if [ -f "$inc/cuda.h" ]; then cflags+=(-DUSE_CUDA_H "-I$inc"); break; fi
    done
    if "$cc_bin" "${cflags[@]}" bench/gpu/driver_bench.c -o "$work/driver_bench" -ldl; then
      bench_bin="$work/driver_bench"
    fi
  elif [ -x .carry/bin/driver_bench ]; then
    bench_bin=.carry/bin/driver_bench
  fi
  if [ -z "$bench_bin" ]; then
    echo "cannot compile bench/gpu/driver_bench.c (and no .carry/bin/driver_bench)" >&2
    bench_status=3
  elif ! limit 60 "$bench_bin" examples/kernels/saxpy.ptx "$mib" "$launches" >"$work/c.txt"; then
    echo "the C bench failed (no GPU?)" >&2
    bench_status=3
  elif ! limit 60 "$DENO" run --allow-ffi --allow-read --allow-env bench/gpu/cuda_bench.ts "$mib" \
    "$launches" >"$work/ts.txt"; then
    echo "the TypeScript bench failed" >&2
    bench_status=3
  else
    # Ratio TS/C per metric. Bandwidth: higher is better, target >= 0.9.
    # Launch overhead: lower is better, target <= 1.2.
    awk -v mib="$mib" -v launches="$launches" '
      FNR == NR { if ($1 == "BENCH") c[$2] = $3; next }
      FNR == 1 {
        print "| metric (" mib " MiB copies, " launches " launches) | C (driver API) | TS (`@deno-xla/ffi/cuda`) | TS / C | target |"
        print "| --- | --- | --- | --- | --- |"
      }
      $1 == "BENCH" {
        name = $2; ts = $3; base = c[name]
        if (base == "" || base + 0 == 0) { printf "| %s | no C figure | %s | | |\n", name, ts; bad = 1; next }
        r = ts / base
        if (name ~ /_gbps$/) { ok = (r >= 0.9); target = "≥ 0.90" } else { ok = (r <= 1.2); target = "≤ 1.20" }
        unit = name ~ /_gbps$/ ? " GB/s" : " µs"
        printf "| %s | %.3f%s | %.3f%s | %.3f | %s %s |\n", name, base, unit, ts, unit, r, target, ok ? "met" : "MISSED"
        if (!ok) bad = 1
      }
      END { exit bad }
    ' "$work/c.txt" "$work/ts.txt" >"$work/ratios.md" || bench_status=3
    cat "$work/ratios.md"
  fi
}

# --- --gpu-only -----------------------------------------------------------------
if [ "$gpu_only" -eq 1 ]; then
  info=$(limit 60 "$DENO" run --allow-ffi --allow-read --allow-env tests/gpu/device_info.ts 2>&1)
  if [ $? -ne 0 ]; then
    if [ "$gpu_present" -eq 1 ]; then
      echo "FAILED: a GPU is present but CUDA reports it unavailable: $info" >&2
    else
      echo "FAILED: no usable GPU here: $info" >&2
    fi
    exit 1
  fi
  echo "== device: $info"
  if [ -n "$cc_bin" ]; then
    "$DENO" task build >/dev/null || { echo "native build failed" >&2; exit 1; }
  fi

  echo "== GPU tests"
  limit 150 "$DENO" test --no-check "${PERMS[@]}" --filter '/^GPU: /' tests/cuda_test.ts \
    tests/runtime_cuda_test.ts tests/cuda_handler_test.ts tests/cli_runtime_test.ts 2>&1 | tee "$log"
  test_status=${PIPESTATUS[0]}
  summarize "$log"
  status=0
  if [ "$test_status" -ne 0 ] || [ "$failed" -ne 0 ]; then
    echo "FAILED: GPU tests (exit ${test_status}): ${test_summary}" >&2
    status=1
  fi
  if [ "$ignored" -ne 0 ]; then
    echo "FAILED: ${ignored} GPU test(s) ignored:" >&2
    grep -E ' \.\.\. ignored' "$log" >&2
    status=1
  fi
  if [ "$passed" -eq 0 ]; then
    echo "FAILED: no GPU test ran" >&2
    status=1
  fi

  run_example
  [ "$example_status" -eq 0 ] || status=1
  run_xla_gpu
  [ "$xla_gpu_status" -eq 0 ] || status=1
  run_benches

  echo
  echo "===== GPU figures (paste into docs/cuda.md) ====="
  echo "$(date -u +%F), \`tests/gpu/run.sh --gpu-only\` in ${SECONDS} s: ${info}."
  echo
  echo "- GPU tests: ${passed} passed, ${failed} failed, ${ignored} ignored"
  echo "- examples/cuda_saxpy.ts: ${example_line:-no result} (exit ${example_status})"
  echo "- XLA:GPU, TS handler on XLA's stream: ${xla_gpu_line:-no result} (exit ${xla_gpu_status})"
  echo
  if [ -s "$work/ratios.md" ]; then cat "$work/ratios.md"; else echo "(no bench figures)"; fi
  echo "====="
  echo "== done in ${SECONDS} s: tests/example exit ${status}, benches exit ${bench_status}"
  [ "$status" -eq 0 ] || exit 1
  exit "$bench_status"
fi

# --- Everything -------------------------------------------------------------------
if [ -n "$cc_bin" ]; then
  echo "== build"
  "$DENO" task build || { echo "native build failed" >&2; exit 1; }
  if "$DENO" eval 'import { findNvcc } from "./build.ts"; Deno.exit(findNvcc() ? 0 : 1)' 2>/dev/null; then
    "$DENO" task build:ptx || echo "nvcc failed: using the shipped PTX"
  else
    echo "no nvcc: using the shipped PTX (examples/kernels/saxpy.ptx)"
  fi
fi

echo "== tests"
"$DENO" task test 2>&1 | tee "$log"
test_status=${PIPESTATUS[0]}
summarize "$log"
echo "tests: ${test_summary} (exit ${test_status})"

run_example
[ "$example_status" -eq 0 ] || test_status=1
run_benches

echo "== done: tests exit ${test_status}, benches exit ${bench_status}"
[ "$test_status" -eq 0 ] || exit 1
exit "$bench_status"
