"""Build an artifact with the host gcc and run it as a process (``aot run --board host/native``).

The program is the model library plus a generated ``main`` (see
:func:`aot.executor.codegen.host_main`) that reads N invocations from a
file and writes the outputs to another, so one process runs a whole
sequence on one state.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

from aot.codegen.cc import CCompiler
from aot.errors import AotError
from aot.export import external_build, library_sources, read_metadata
from aot.inputs import check_inputs

SANITIZE_FLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                  "-fno-omit-frame-pointer", "-g")


class HostRunError(AotError):
    """Running the compiled model on the host failed (building it is a BuildError)."""


def build_program(artifact: Path, name: str, main_source: str, out: Path, *,
                  opt: str = "-O2", sanitize: bool = False) -> Path:
    """Compile the artifact's library and ``main_source`` into the executable ``out``."""
    artifact = Path(artifact)
    main_c = out.with_suffix(".main.c")
    main_c.write_text(main_source)
    files = {str(p.relative_to(artifact)): "" for p in (artifact / "codegen").glob("*.c")}
    sources = [str(artifact / s) for s in library_sources(files, name)]
    extra_sources, extra_flags = external_build(read_metadata(artifact).get("build", {}))
    flags = [opt, f"-I{artifact / 'include'}", *extra_flags,
             *(SANITIZE_FLAGS if sanitize else ())]
    sources += extra_sources
    return CCompiler.host().executable([*sources, main_c], out, flags,
                                       what=f"the host build of {name}")


def run_program(program: Path, graph, inputs: list[np.ndarray], workdir: Path,
                timeout: float = 600.0) -> list[np.ndarray]:
    """Run ``inputs`` (one ``[N, *shape]`` array per graph input) through ``program``.

    Returns one ``[N, *shape]`` array per graph output, like
    :func:`aot.commands.model_io.interpret`; a model without inputs (an
    ONNX graph of constants) runs once.
    """
    inputs = check_inputs(graph, inputs)
    n = inputs[0].shape[0] if inputs else 1  # a model without inputs runs once
    data = bytearray()
    for i in range(n):
        for x in inputs:
            data += x[i].tobytes()
    in_path, out_path = Path(workdir) / "inputs.bin", Path(workdir) / "outputs.bin"
    in_path.write_bytes(bytes(data))
    try:
        proc = subprocess.run([str(program), str(in_path), str(out_path), str(n)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise HostRunError(f"{program.name} did not finish within {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise HostRunError(f"{program.name} failed (exit status {proc.returncode}):\n"
                           f"{(proc.stderr or proc.stdout).strip()}")
    raw = out_path.read_bytes()
    sizes = [t.type.nbytes for t in graph.outputs]
    if len(raw) != n * sum(sizes):
        raise HostRunError(f"{program.name} wrote {len(raw)} bytes, expected {n * sum(sizes)}")
    outputs = [np.empty((n, *t.shape), t.type.np_dtype) for t in graph.outputs]
    pos = 0
    for i in range(n):
        for k, t in enumerate(graph.outputs):
            outputs[k][i] = np.frombuffer(raw[pos:pos + sizes[k]],
                                          t.type.np_dtype).reshape(t.shape)
            pos += sizes[k]
    return outputs
