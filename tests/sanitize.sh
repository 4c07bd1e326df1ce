#!/usr/bin/env bash
# Runs the test suite (less SKIP, below) with the native library (and every test library)
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
# Left to the plain suite: the tests whose subject is the build, packaging, imports, docs and
# examples (compilers, prebuilt binaries, URL imports, doc recipes, the example scripts); the
# C code they run is run here by the tests written for it. They took about 2.5 of this run's 17
# minutes. In the files that run here, the tests of a docs recipe or an example script under real
# XLA are ignored for the same reason, saying so (xlaRecipe in tests/_xla_env.ts).
SKIP=(
  tests/native_build_test.ts  # generated files current, symbol lists, link checks
  tests/build_test.ts         # buildHandlerLibrary: compiling users' C
  tests/cli_cxx_test.ts       # the command line compiling C++ handlers
  tests/prebuilt_test.ts      # choosing the prebuilt library (not the sanitized build)
  tests/local_checkout_test.ts  # a checkout imported by path and over HTTP
  tests/testing_guide_test.ts # docs/testing.md's recipes
  tests/examples_test.ts      # the example scripts
  tests/gpu_run_test.ts       # tests/gpu/run.sh on the stand-in driver
)
export ROUTE_FUZZ_XLA_CASES=${ROUTE_FUZZ_XLA_CASES:-6}
# The test files Deno would find in src/ and tests/, less SKIP (listed here: deno test's
# --ignore is not applied to every path given).
TESTS=()
while IFS= read -r f; do
  case " ${SKIP[*]} " in *" $f "*) ;; *) TESTS+=("$f") ;; esac
done < <(find src tests -type f \( -name '*_test.ts' -o -name '*.test.ts' -o -name 'test.ts' \) | sort)
DENO=${DENO:-deno}
# Child processes (the C compiler, Deno subprocesses) inherit the preload:
# they are not instrumented, so only our libraries are checked.
LD_PRELOAD="$asan $ubsan" exec $DENO test --allow-ffi --allow-read --allow-write --allow-run --allow-net=127.0.0.1 \
  --allow-env mod.ts cli.ts "${TESTS[@]}" "$@"
