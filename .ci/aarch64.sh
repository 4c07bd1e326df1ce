#!/usr/bin/env bash
# The aarch64 part of CI: runs the ABI layout test and the embedded runtime's core tests
# (no jax) with Deno's linux-arm64 build under qemu-user, on the prebuilt linux-aarch64
# native library; test libraries are cross-compiled with Debian's aarch64-linux-gnu-gcc.
# Installs qemu-user-static and the cross compilers with apt when absent; when it cannot,
# says why and exits 0 with no test counts. Time-bounded: AARCH64_TIMEOUT seconds (240).
# Prints the `deno test` output; .ci/run reads its summary line.
set -uo pipefail
cd "$(dirname "$0")/.."
DENO_VERSION=${DENO_VERSION:-2.9.6}
SYSROOT=/usr/aarch64-linux-gnu
work="${XDG_CACHE_HOME:-$HOME/.cache}/deno-xla-ffi/aarch64"
skip() {
  echo "aarch64: skipped: $*"
  exit 0
}

need=()
command -v qemu-aarch64-static >/dev/null 2>&1 || need+=(qemu-user-static)
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-aarch64-linux-gnu)
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || need+=(g++-aarch64-linux-gnu)
if [ ${#need[@]} -gt 0 ]; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo -n true >/dev/null 2>&1 || skip "${need[*]} not installed, and apt-get needs root (no sudo)"
    sudo=(sudo -n)
  fi
  echo "aarch64: installing ${need[*]}"
  if ! timeout 300 "${sudo[@]}" apt-get install -y -q "${need[@]}" >/dev/null 2>&1; then
    timeout 120 "${sudo[@]}" apt-get update -q >/dev/null 2>&1
    timeout 300 "${sudo[@]}" apt-get install -y -q "${need[@]}" >/dev/null 2>&1 ||
      skip "apt-get install ${need[*]} failed"
  fi
fi

deno="$work/deno-${DENO_VERSION}/package/deno"
if [ ! -x "$deno" ]; then
  command -v npm >/dev/null 2>&1 || skip "no npm to fetch @deno/linux-arm64-glibc@${DENO_VERSION}"
  mkdir -p "$work/deno-${DENO_VERSION}"
  (cd "$work/deno-${DENO_VERSION}" &&
    timeout 120 npm pack -q "@deno/linux-arm64-glibc@${DENO_VERSION}" >/dev/null 2>&1 &&
    tar xzf deno-linux-arm64-glibc-"${DENO_VERSION}".tgz && chmod +x package/deno) ||
    skip "npm pack @deno/linux-arm64-glibc@${DENO_VERSION} failed"
fi
qemu=(qemu-aarch64-static -L "$SYSROOT")
version=$("${qemu[@]}" "$deno" --version 2>&1 | head -n 1) ||
  skip "Deno's arm64 build does not start under qemu-user: $version"
echo "aarch64: $version under $(qemu-aarch64-static --version | head -n 1)"

# Programs the tests build and start themselves (the layout dumps) run through qemu too:
# without binfmt_misc the kernel cannot start an aarch64 program for the emulated Deno.
DENO_DIR="$work/deno-dir" CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ \
  XLA_FFI_DENO_TEST_EXEC="${qemu[*]}" QEMU_LD_PREFIX="$SYSROOT" NO_COLOR=1 \
  timeout "${AARCH64_TIMEOUT:-240}" "${qemu[@]}" "$deno" test --no-check --allow-all \
  tests/abi_layout_test.ts tests/runtime_test.ts tests/one_pipeline_test.ts
