"""RPC firmware for qemu/mps2-an386 that exposes kernels one by one.

Every kernel gets its own static buffers, exposed as RPC tensors named
``k<i>_p<j>`` (inputs and states writable), and is callable alone by its
group name.  Shared by tests/kernels/test_arm_cpu.py and
bench/bench_kernels_m4.py (loaded by path: tests are not a package).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np

from aot.codegen.c import C_TYPES, NP_TYPES
from aot.kernels import support_files
from aot.resources import runtime_dir

ROOT = Path(__file__).resolve().parents[2]
ARCH = "-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16"
_DTYPES = {"int8": "AOT_DTYPE_INT8", "uint8": "AOT_DTYPE_UINT8", "int16": "AOT_DTYPE_INT16",
           "int32": "AOT_DTYPE_INT32", "int64": "AOT_DTYPE_INT64", "float32": "AOT_DTYPE_FLOAT32"}
_ROLES = {"input": "AOT_ROLE_INPUT", "state": "AOT_ROLE_INPUT", "output": "AOT_ROLE_OUTPUT"}


def tensor_name(i: int, j: int) -> str:
    return f"k{i}_p{j}"


def descriptor(kernels, names) -> str:
    """C source of an ``aot_rpc_model`` exposing each kernel and its buffers."""
    lines = ["#include <stdint.h>", "#include <stddef.h>", '#include "aot/model.h"', ""]
    table, tensors = [], []
    for i, (k, name) in enumerate(zip(kernels, names)):
        lines.append(k.prototype)
        args = []
        for j, p in enumerate(k.params):
            ident = tensor_name(i, j)
            lines.append(f"static {C_TYPES[p.dtype]} {ident}[{max(p.nbytes, 1)}] "
                         "__attribute__((aligned(8)));")
            args.append(ident)
            flags = "0" if p.role == "output" else "AOT_TENSOR_WRITABLE"
            count = p.nbytes // np.dtype(NP_TYPES[p.dtype]).itemsize
            tensors.append(f'    {{"{ident}", {_DTYPES[p.dtype]}, {_ROLES[p.role]}, {flags}, 1, '
                           f'{{{count}}}, {p.nbytes}, {ident}}},')
        lines.append(f"static int32_t run_{i}(void *ctx) {{ (void)ctx; "
                     f"return {k.name}({', '.join(args)}); }}")
        table.append(f'    {{"{name}", run_{i}}},')
    lines += ["", "static int32_t run_all(void *ctx) {", "    (void)ctx;"]
    lines += [f"    run_{i}(ctx);" for i in range(len(kernels))]
    lines += ["    return 0;", "}", "", "static const aot_tensor_t tensors[] = {", *tensors, "};",
              "static const aot_kernel_t kernels[] = {", *table, "};",
              "const aot_model_t aot_rpc_model = {",
              f'    AOT_MODEL_ABI_VERSION, "kernels", "", {len(tensors)}, tensors, '
              f"{len(kernels)}, kernels, run_all, 0,", "};", ""]
    return "\n".join(lines)


def build(kernels, names, tmp: Path) -> Path:
    """Build the firmware into ``tmp``; returns the ELF."""
    for name, text in support_files(None).items():
        (tmp / name).write_text(text)
    srcs = []
    for k in kernels:
        (tmp / f"{k.name}.c").write_text(k.source)
        srcs.append(str(tmp / f"{k.name}.c"))
    (tmp / "model.c").write_text(descriptor(kernels, names))
    srcs.append(str(tmp / "model.c"))
    elf = tmp / "kernels.elf"
    subprocess.run(["make", "-s", "-f", str(runtime_dir() / "runtime.mk"), str(elf),
                    f"AOT_RUNTIME_DIR={runtime_dir()}", "AOT_PORT=mps2",
                    "CC=arm-none-eabi-gcc", f"AOT_ARCH_FLAGS={ARCH}", f"AOT_BUILD_DIR={tmp}",
                    f"AOT_FIRMWARE={elf}", f"AOT_APP_SRCS={' '.join(srcs)}",
                    f"AOT_EXTRA_CFLAGS=-I{tmp}", "AOT_BOARD_TAG=qemu/mps2-an386",
                    # float kernels call expf/fmaxf: the port's flags plus libm
                    "AOT_PORT_LDFLAGS=-nostartfiles --specs=nano.specs --specs=nosys.specs "
                    "-Wl,--gc-sections -lm"],
                   check=True, env={**os.environ, "MAKEFLAGS": ""})
    return elf


def check_on_qemu(cases, tmp: Path) -> int:
    """Run kernels on qemu/mps2-an386 and compare with expected values.

    ``cases`` are ``(kernel, name, before, after)``: ``before`` holds the
    array of each input and state param (None for outputs), ``after`` the
    expected array of each output and state param (None for inputs).
    Integer results must match bit for bit, float32 within 1e-5 relative.
    Returns the number of arrays compared.
    """
    from aot.rpc import connect
    from flash.qemu import QemuConfig, QemuRunner
    elf = build([c[0] for c in cases], [c[1] for c in cases], tmp)
    compared = 0
    with QemuRunner(QemuConfig(elf=elf, machine="mps2-an386")) as url:
        with connect(url, timeout=60) as client:
            for i, (_kernel, name, before, after) in enumerate(cases):
                for j, a in enumerate(before):
                    if a is not None:
                        flat = np.ascontiguousarray(a).reshape(-1)
                        client.write_tensor(tensor_name(i, j), flat)
                client.run(1, name)
                for j, a in enumerate(after):
                    if a is None:
                        continue
                    got = np.asarray(client.read_tensor(tensor_name(i, j))).reshape(-1)
                    want = np.asarray(a).reshape(-1)
                    if want.dtype == np.float32:
                        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6,
                                                   err_msg=name)
                    else:
                        np.testing.assert_array_equal(got, want, err_msg=name)
                    compared += 1
    return compared
