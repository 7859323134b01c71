"""Models compiled for the ``llvm`` target: the entry function and kernels compiled
by MCJIT (aot.executor.jit) equal the C entry function built by gcc.

Both are the same loop IR (:func:`~aot.executor.codegen.lower_entry`); these tests
cover what the shared models do not: inputs and outputs in the workspace,
views, constants passed as arguments and state carried between invocations
(with a small loop-IR kernel library, since the real library's stateful
kernels are hand-written C).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_codegen import _inputs, toy_graph

from aot import te
from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.tir import Call, Comment, Evaluate, IfThenElse, LetStmt
from aot.tir.functor import all_nodes
from aot.kernels import Kernel, KernelParam

_OPS = {"relu": lambda a: te.if_then_else(a > 0.0, a, te.const(0.0, "float32")),
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}


class LoopIRToyLibrary:
    """Float elementwise groups as loop-IR kernels (real :class:`Kernel` records,
    printed as C by aot.codegen or compiled by the llvm backend).  Constants
    are kernel arguments (the entry function passes them); a kernel reading a
    variable also adds the node's other operand into it, writing the state
    through a second parameter bound to the same address."""

    def support_files(self, target) -> dict[str, str]:
        return {}

    def lower_group(self, group, ag, target, *, name: str) -> Kernel:
        from aot import lower

        y = group.outputs(ag)[0]
        n = y.type.size
        phs, params, value, variables = [], [], {}, []
        for t in group.inputs():
            ph = te.placeholder((n,), "float32", f"a{len(phs)}")
            phs.append(ph)
            params.append(KernelParam(t.name, "input", "float32", t.type.nbytes))
            value[id(t)] = ph
            if t.kind == "variable":
                variables.append((len(params) - 1, t, ph))

        def elem(i, t):
            return value[id(t)][i] if isinstance(value[id(t)], te.Tensor) else value[id(t)](i)

        def node_value(node):
            ins = [t for t in node.inputs if t is not None]
            return lambda i: _OPS[node.op](*[elem(i, x) for x in ins])

        for node in group.nodes:
            value[id(node.outputs[0])] = node_value(node)
        Y = te.compute((n,), lambda i: elem(i, y), name="Y")
        outs = [Y]
        params.append(KernelParam(y.name, "output", "float32", y.type.nbytes))
        inplace = ()
        if variables:
            vi, v, vph = variables[0]
            reader = next(nd for nd in group.nodes if any(a is v for a in nd.inputs))
            other = next(a for a in reader.inputs if a is not None and a is not v)
            V = te.compute((n,), lambda i: vph[i] + elem(i, other), name="V")
            outs.append(V)
            params.append(KernelParam(v.name, "output", "float32", v.type.nbytes))
            inplace = ((vi, len(params) - 1),)
        s = te.create_schedule([o.op for o in outs])
        func = lower(s, phs + outs, name=f"{name}_impl")
        return Kernel(name, tuple(params), 0, n, tuple(nd.op for nd in group.nodes),
                      target=str(target), func=func, inplace=inplace)  # not a planner choice


def _both(graph, inputs, tmp_path, **options):
    got = {}
    for target in ("host/native", "llvm"):
        compiled = compile_model(graph, target, name="toy", measure_code=False, **options)
        got[target] = run_on_host(compiled, inputs, workdir=tmp_path)
    return got["host/native"], got["llvm"]


@pytest.mark.parametrize("io_in_workspace", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.one_fast
def test_real_kernels_through_the_jit_equal_the_c_entry(io_in_workspace, inplace, tmp_path):
    inputs = _inputs(3)
    c_out, llvm_out = _both(toy_graph(), inputs, tmp_path, io_in_workspace=io_in_workspace,
                            inplace=inplace)
    for c, j in zip(c_out, llvm_out):
        assert c.dtype == j.dtype and c.shape == j.shape
        assert c.tobytes() == j.tobytes()


def test_the_jit_runs_the_entry_function_the_c_entry_prints():
    compiled = compile_model(toy_graph(), "llvm", name="toy", measure_code=False,
                             io_in_workspace=True)
    run = compiled.lowered.run
    calls = [n.name for n in all_nodes(run.body) if isinstance(n, Call) and n.kind == "extern"]
    assert sorted(calls) == sorted(k.name for k in compiled.kernels)  # the view has no code
    steps = run.body.seq
    # inputs copied into the workspace unless the caller passed its bytes, first
    assert isinstance(steps[0], IfThenElse) and isinstance(steps[0].then_case, Evaluate)
    assert isinstance(steps[1], Comment) and isinstance(steps[2], LetStmt)  # a kernel's call
    assert [p.kind for p in compiled.lowered.params] == ["workspace", "input", "output", "output"]
    assert compiled.files == {} and run.name in compiled.llvm.units


def test_state_and_constant_arguments_carry_over_invocations(tmp_path):
    graph = toy_graph(with_state=True)
    inputs = _inputs(4, seed=1)
    c_out, llvm_out = _both(graph, inputs, tmp_path, kernel_library=LoopIRToyLibrary())
    for c, j in zip(c_out, llvm_out):
        assert c.tobytes() == j.tobytes()
    # The state before invocation t is the sum of the earlier y*y (see the library).
    x = inputs[0].reshape(4, 1, 16)
    y = np.maximum(x, 0) + np.linspace(-2, 2, 16, dtype=np.float32)
    state = np.zeros((1, 16), np.float32)
    for t in range(4):
        np.testing.assert_allclose(llvm_out[0][t], y[t] * y[t] + state, rtol=1e-5)
        state = state + y[t] * y[t]


def test_reset_restores_the_state():
    graph = toy_graph(with_state=True)
    compiled = compile_model(graph, "llvm", name="toy", measure_code=False,
                             kernel_library=LoopIRToyLibrary())
    assert compiled.lowered.constants and compiled.lowered.states
    model = compiled.jit()
    x = _inputs(1, seed=2)[0][0]
    first = model.run([x])[0].copy()
    assert not np.array_equal(model.run([x])[0], first)
    model.reset()
    np.testing.assert_array_equal(model.run([x])[0], first)


@pytest.mark.slow
def test_a_jit_model_outlives_the_compiled_model_it_came_from(tmp_path):
    """`compile_model(...).jit()` drops the compiled model at once; its kernels'
    code must stay alive with the JitModel (this crashed with a segfault once
    the engine was collected).  Run in a child process so a crash fails the test
    instead of the test session."""
    import subprocess
    import sys

    from support.models import MODELS_DIR
    script = tmp_path / "outlive.py"
    script.write_text(
        "import gc, numpy as np\n"
        "from aot.compile import compile_model\n"
        f"path = {str(MODELS_DIR / 'tflm_hello_world_int8.tflite')!r}\n"
        "run = compile_model(path, 'llvm').jit()\n"
        "gc.collect()\n"
        "for _ in range(3):\n"
        "    compile_model(path, 'llvm').jit()\n"
        "    gc.collect()\n"
        "x = np.full((1, 1), 5, np.int8)\n"
        "print(int(run.run([x])[0].reshape(-1)[0]))\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    want = compile_model(MODELS_DIR / "tflm_hello_world_int8.tflite", "llvm").jit()
    assert int(done.stdout.split()[-1]) == int(
        want.run([np.full((1, 1), 5, np.int8)])[0].reshape(-1)[0])


def test_the_entry_function_of_the_toy_graph_reads_as_expected():
    """The loop IR both backends take, in its text form: the input copied in unless the
    caller passed the workspace, each kernel's status returned unless 0 (the view has no
    code; the plan runs every kernel in place), the outputs copied out."""
    compiled = compile_model(toy_graph(), "llvm", name="toy", measure_code=False,
                             io_in_workspace=True)
    ws = 'address(ws, 0, float32, "r")'
    calls = "\n".join(
        f"  // {comment}\n"
        f'  let {s} = call_extern("{k}", {ws}, address(ws, 0, float32, "rw"))\n'
        f"  if (({s} != 0)) {{\n    return {s}\n  }}"
        for comment, s, k in [("fused_0_relu: relu", "status", "toy_k0"),
                              ("view_1_reshape: a view, no code\n  // fused_2_add: add",
                               "status_1", "toy_k2"),
                              ("fused_3_mul: mul", "status_2", "toy_k3")])
    copies_out = "\n".join(
        f'  if ((address({o}, 0, float32, "rw") != {ws})) {{\n'
        f'    memcpy(address({o}, 0, float32, "rw"), {ws}, 64)\n  }}'
        for o in ("out_mul_4", "out_add_3"))
    assert str(compiled.lowered.run) == (
        "primfn toy_entry(ws: uint8[64], in_x_0: float32[16], out_mul_4: float32[16], "
        "out_add_3: float32[16]) {\n"
        '  if ((address(in_x_0, 0, float32, "r") != address(ws, 0, float32, "rw"))) {\n'
        '    memcpy(address(ws, 0, float32, "rw"), address(in_x_0, 0, float32, "r"), 64)\n'
        f"  }}\n{calls}\n{copies_out}\n}}")
