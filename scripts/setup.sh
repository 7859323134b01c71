#!/usr/bin/env bash
# Bring a Debian 12 machine to the state the project needs, idempotently:
#   1. cross toolchains and QEMU from Debian packages (only the missing ones),
#   2. a virtual environment in .venv with the project and its test extras
#      (which pin onnx to the release whose node tests tests/onnx_suite runs),
#      and with AOT_TORCH=1 (make test) PyTorch for the PyTorch route's tests.
# Re-running is cheap: apt is skipped when every tool is present, and pip is
# skipped when pyproject.toml has not changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
have() { command -v "$1" >/dev/null 2>&1; }
have arm-none-eabi-gcc || need_pkgs+=(gcc-arm-none-eabi)
[ -d /usr/lib/arm-none-eabi/newlib ] \
  || need_pkgs+=(libnewlib-arm-none-eabi)
have qemu-system-arm || need_pkgs+=(qemu-system-arm)
have qemu-system-riscv32 || need_pkgs+=(qemu-system-misc)
have riscv64-unknown-elf-gcc || need_pkgs+=(gcc-riscv64-unknown-elf)
[ -d /usr/lib/picolibc/riscv64-unknown-elf ] || need_pkgs+=(picolibc-riscv64-unknown-elf)
have make || need_pkgs+=(make)
have gcc || need_pkgs+=(gcc)
have cmake || need_pkgs+=(cmake)
# tests/cmake builds an out-of-tree firmware with the Ninja generator as well as Make.
have ninja || need_pkgs+=(ninja-build)
# clang with its sanitizer and libFuzzer runtime: the runtime's frame decoder is fuzzed.
have clang || need_pkgs+=(clang)
[ -d /usr/lib/llvm-14/lib/clang ] && ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1 \
  || need_pkgs+=(libclang-rt-14-dev)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_pkgs+=(python3-venv)

if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages: ${need_pkgs[*]}" >&2
    echo "setup: run as root, or install them with apt-get first." >&2
    exit 1
  fi
  echo "setup: installing Debian packages: ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi

stamp=.venv/.installed-pyproject
if ! cmp -s pyproject.toml "$stamp" 2>/dev/null; then
  echo "setup: installing the project and its test dependencies into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e '.[test]'
  cp pyproject.toml "$stamp"
fi

# The PyTorch route's tests (tests/frontend/test_onnx_pytorch.py) need torch and
# torchvision: several GB (a CUDA build where pip finds no CPU one), so only
# AOT_TORCH=1 installs them (`make test` sets it; AOT_TORCH=0 make test does not,
# and those tests then skip), under their own stamp.
torch_stamp=.venv/.installed-torch
if [ "${AOT_TORCH:-0}" = 1 ] && ! cmp -s pyproject.toml "$torch_stamp" 2>/dev/null; then
  echo "setup: installing PyTorch for the PyTorch route's tests (AOT_TORCH=0 make test skips it)"
  .venv/bin/python -m pip install -q -e '.[test,torch]'
  cp pyproject.toml "$torch_stamp"
fi
