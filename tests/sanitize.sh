#!/usr/bin/env bash
# Runs the whole test suite with the native library (and every test library)
# built with -fsanitize=address,undefined, the sanitizer runtimes preloaded
# into Deno. Usage: tests/sanitize.sh [extra deno test args] (or `deno task test:sanitize`);
# .ci/run runs it after the normal suite.
#
# What is checked: every memory error (ASan) and undefined behaviour (UBSan)
# in code compiled from native/ and native/tests/ aborts the run.
# What is not: leaks. Deno itself keeps allocations alive at exit, so
# LeakSanitizer's report would be mostly Deno's; the module's own objects are
# counted by the native runtime's stats instead (see docs/reliability.md,
# "Leaks"). Deno is not instrumented, so errors inside Deno are out of
# scope; the sanitizers still see every access our C code makes.
set -uo pipefail
cd "$(dirname "$0")/.."
cc_bin=${CC:-cc}
asan=$("$cc_bin" -print-file-name=libasan.so)
ubsan=$("$cc_bin" -print-file-name=libubsan.so)
if [ ! -e "$asan" ] || [ ! -e "$ubsan" ]; then
  echo "sanitizer runtimes not found ($asan, $ubsan): install the compiler's libasan/libubsan"
  exit 1
fi
export XLA_FFI_DENO_SANITIZE=address,undefined
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The fuzzer's default (1M cases) is slow under ASan: 100k unless set.
export XLA_FFI_DENO_FUZZ_CASES=${XLA_FFI_DENO_FUZZ_CASES:-100000}
# The route fuzzer under real XLA: 6 cases per family here (16 in the plain suite): what this
# run adds is the sanitizers' view of our C code on every route, which fewer cases keep.
export ROUTE_FUZZ_XLA_CASES=${ROUTE_FUZZ_XLA_CASES:-6}
DENO=${DENO:-deno}
# Child processes (the C compiler, Deno subprocesses) inherit the preload:
# they are not instrumented, so only our libraries are checked.
LD_PRELOAD="$asan $ubsan" exec $DENO test --allow-ffi --allow-read --allow-write --allow-run --allow-net=127.0.0.1 \
  --allow-env mod.ts cli.ts src/ tests/ "$@"
