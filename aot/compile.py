"""The compiler driver: a model file in, a compiled model (and an artifact) out.

:func:`compile_model` is the whole recipe, read top to bottom::

    load -> optimize (graph passes) -> lower each fused group to loop IR ->
    plan memory (in place where a kernel's loop nest allows it) -> check it
    fits the board -> generate C -> measure sizes

and :meth:`CompiledModel.write` writes the artifact (:mod:`aot.export`).

The target's kind picks the backend of the last steps: ``c`` generates the
artifact's C (kernels and the entry function); ``llvm`` compiles the kernels
with LLVM: for this machine into one module with the entry function, which
:meth:`CompiledModel.jit` runs (no artifact), for a Cortex-M or RISC-V board (``llvm
-mcpu=cortex-m4 ...``, or ``codegen="llvm"`` with the board) into one object
per kernel beside the same C entry function, header and RPC descriptor
(docs/codegen.md).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from aot.version import __version__
from aot import byoc
from aot import kernels as default_kernels
from aot.kernels import PartKernel, lower_parts
from aot.codegen.c import c_identifier
from aot.codegen.cc import CCompiler, FirmwareCommand, ObjectStore, firmware_text_bytes
from aot.errors import AotError, BuildError
from aot.executor import check_fits_board, plan_memory, workspace_alignment
from aot.executor.memory import check_group_fits_board
from aot.executor import codegen as entry
from aot.executor.budget import (BudgetChoice, PlanOption, choose_plan, open_options,
                                 parse_memory_size)
from aot.executor.regions import (MemoryRegionError, PlanRegion, buffer_heat, check_reach,
                                  constant_section, group_linker_script, linker_script,
                                  needs_linker_script, parse_regions, place_constants,
                                  split_for_budget)
from aot.executor.memory import MemoryPlan, Sizes
from aot.executor.code_placement import code_section, place_code
from aot.executor.const_placement import ConstantPlacement, place_default
from aot.export import (firmware_command, firmware_variables,
                        METADATA_FORMAT, METADATA_VERSION, artifact_metadata, build_settings,
                        cortex_m_startup, external_build, library_sources, port_settings,
                        runtime_files, runtime_port, write_artifact)
from aot.frontend import load_model
from aot.executor.patches import PatchStage
from aot.executor.patches import patch_graph as patch_graph_of
from aot.executor.stages import (StageRequest, analyze, choose_planned, parse_patches,
                                 stage_code)
from aot.executor.streams import StreamStage, band_graph
from aot.ir import Graph
from aot.passes.annotated import FusedGroup, rebuild
from aot.passes import DumpAfter, PassContext, optimize
from aot.target import (CODEGENS, Board, Target, TargetError, board_devices, check_cores,
                        load_board, names_a_board, runs_on_host)

if TYPE_CHECKING:  # the LLVM backend imports llvmlite: only llvm targets load it
    from aot.codegen.llvm import LLVMModule
    from aot.executor.jit import JitModel


class CompileError(AotError):
    """The model cannot be compiled for this target (beyond pass, kernel and plan errors)."""


@dataclass
class CompiledModel:
    """Everything one compilation produced; :meth:`write` makes it an artifact."""

    name: str
    source: str
    graph: Graph                 # the optimized (annotated) graph
    target: Target
    board: Board | None
    kernels: list
    plan: MemoryPlan
    files: dict[str, str | bytes]  # generated C (and llvm objects) by artifact path
    sizes: Sizes
    # (stage, wall seconds, CPU seconds) in order, the CPU time with the compilers this
    # process ran (:class:`_Clock`); a stage appears once per plan made.  Kept out of the
    # metadata so the artifact is reproducible.
    timings: list[tuple[str, float, float]] = field(default_factory=list)
    # The llvm target: the kernels' LLVM module; for this machine it holds the entry
    # function too, which the JIT runs (files is empty then).
    llvm: LLVMModule | None = None
    # The entry function as loop IR: the JIT runs it; which kernels it calls (a split
    # group's parts) decides the kernels' files (entry.linked_kernels).
    lowered: entry.Entry | None = None
    # The libraries external codegens call (metadata.json's build.external).
    external: list[dict] = field(default_factory=list)
    # What a memory budget chose (compile_model(..., memory_budget=...)), else None.
    budget: BudgetChoice | None = None
    # The patch stage's code (compile_model(..., patches=...)), else None.
    patches: entry.PatchCode | None = None
    # The kernels the stage's loop calls (per patch or band); the RPC cannot run
    # them alone (metadata.json: "in_stage").
    stage_kernels: frozenset[str] = frozenset()
    # The constants the default placement copied to RAM (aot.executor.const_placement),
    # else None.
    placement: ConstantPlacement | None = None
    # 2 when the entry function hands each parallel step's other half to core 1
    # (docs/targets.md "Several cores of one board"): the firmware links src/cores.c.
    cores: int = 1

    @property
    def is_jit(self) -> bool:
        """Compiled for this machine's LLVM JIT (no artifact; :meth:`jit` runs it)."""
        return self.llvm is not None and self.llvm.machine is None

    def metadata(self) -> dict:
        """The artifact's metadata.json (see docs/compile.md)."""
        inputs, outputs = entry.ports(self.name, self.graph, self.plan)
        lay = entry.layout(self.plan, self.kernels)
        files = self._kernel_files()
        return {
            **artifact_metadata(self.name, self.graph.name, self.source, self.target,
                                self.board),
            "inputs": [_port_json(p) for p in inputs],
            "outputs": [_port_json(p) for p in outputs],
            "state": [{"name": t.name, "shape": list(t.shape), "dtype": t.dtype,
                       "bytes": t.type.nbytes} for t in self.graph.variables()],
            "kernels": [{"name": k.name, "ops": list(k.op_names),
                         "codegen": getattr(k, "codegen", "aot"), "macs": k.macs,
                         "scratch_bytes": k.scratch_bytes, "constant_bytes": k.constant_bytes,
                         "in_stage": k.name in self.stage_kernels,
                         **({"constant_section": k.constant_section}
                            if getattr(k, "constant_section", "") else {}),
                         **({"code_section": k.code_section}
                            if getattr(k, "code_section", "") else {}),
                         **files[k.name]}
                        for k in self.kernels],
            "sizes": self.sizes.to_json(),
            "workspace": {"bytes": lay.workspace_bytes, "alignment": lay.alignment,
                          "plan_bytes": lay.plan_bytes, "scratch_offset": lay.scratch_offset,
                          "scratch_bytes": lay.scratch_bytes},
            "memory_plan": self.plan.to_json(),
            **({"memory_budget": self.budget.to_json()} if self.budget else {}),
            **({"patches": self.patches.to_json()} if self.patches else {}),
            **({"placement": self.placement.to_json()} if self.placement else {}),
            "entry": {"header": f"include/{self.name}.h", "run": f"{self.name}_run",
                      "run_with_workspace": f"{self.name}_run_with_workspace",
                      "reset": f"{self.name}_reset", "rpc_descriptor": "aot_rpc_model",
                      **({"tasks": [{"core": entry.WORKER_CORE, "function": t.name}
                                    for t in self.lowered.tasks]}
                         if self.lowered is not None and self.lowered.tasks else {})},
            "build": build_settings(self.name, self.files, self.board, self.external,
                                    cores=self.cores),
            "layers": self.layers(),
        }

    def _kernel_files(self) -> dict[str, dict]:
        """metadata.json's ``file`` of each kernel by name: its C, or LLVM's object; for a
        split group's whole kernel, which has no file, None and its ``parts`` (per core its
        kernel, file and constant bytes)."""
        paths = {}
        for i, k in entry.linked_kernels(self.kernels, self.lowered):
            path = entry.kernel_file(self.name, i)
            paths[k.name] = (path.removesuffix(".c") + ".o"
                             if self.llvm is not None and k.func is not None else path)
        split = self.lowered.split_kernels
        return {k.name: {"file": None, "parts": [
                    {"core": p.core, "name": p.kernel.name, "file": paths[p.kernel.name],
                     "constant_bytes": p.kernel.constant_bytes} for p in split[k.name]]}
                if k.name in split else {"file": paths[k.name]}
                for k in self.kernels}

    def layers(self) -> list[dict]:
        """Who implements each layer: per kernel, its operators, the model's node
        names, ``by`` (``aot`` or an external codegen of ``-libs``) and, for a
        layer an external codegen matched but declined, why."""
        declined = self.graph.annotations.declined
        groups = []
        for g in self.graph.annotations.groups:
            if g.kind == "patches":  # one kernel per layer of the patch graph
                groups += [pg for pg in self.patches.graph.annotations.groups
                           if pg.kind != "view"]
            elif g.kind != "view":
                groups.append(g)
        out = []
        for g, k in zip(groups, self.kernels, strict=True):
            why = [declined[n] for n in g.nodes if n in declined]
            # A kernel library other than aot.kernels (tests, tuned) may not say.
            by = getattr(k, "codegen", "aot")
            out.append({"kernel": k.name, "ops": [n.op for n in g.nodes],
                        "nodes": [n.name for n in g.nodes], "by": by,
                        **({"declined": why} if why else {})})
        return out

    def write(self, out_dir, *, tar: bool = False) -> Path:
        """Write the artifact (:func:`aot.export.write_artifact`); returns its path."""
        if self.is_jit:
            raise CompileError(
                f"not supported yet: an artifact for the target {str(self.target)!r} (LLVM "
                "objects are made for Cortex-M and RISC-V boards). Run the model on this machine "
                "through the LLVM JIT with `aot run MODEL --target llvm --input X --output Y`, "
                "or compile it for 'c' or a board (--codegen llvm) to get an artifact")
        return write_artifact(out_dir, self.name, self.files, self.metadata(), tar=tar)


    def jit(self) -> JitModel:
        """The model running on this machine (target kind ``llvm``): the entry
        function and the kernels compiled by MCJIT, over numpy memory."""
        if not self.is_jit:
            raise CompileError(f"{self.name} was compiled for {str(self.target)!r}, not for "
                               "this machine's LLVM JIT: compile it for the target 'llvm' to "
                               "run it through the LLVM JIT")
        from aot.executor.jit import JitModel  # llvmlite's MCJIT
        return JitModel(self.lowered, self.llvm)


def _port_json(p) -> dict:
    q = p.tensor.quant
    return {"name": p.tensor.name, "c_name": p.ident, "shape": list(p.tensor.shape),
            "dtype": p.tensor.dtype, "bytes": p.nbytes, "workspace_offset": p.offset,
            "quantization": q.to_json() if q is not None else None}




def resolve_target(target_or_board, codegen: str | None = None, *,
                   refine=None) -> tuple[Target, Board | None]:
    """A :class:`Target`, a :class:`Board`, or a string naming either (a board tag
    such as ``qemu/mps2-an386`` or a target such as ``c -mcpu=cortex-m4``).

    ``refine`` (a target string or :class:`Target`; ``--target`` given with
    ``--board``) adds to the board's target what it says, such as
    ``-libs=cmsis-nn``, and may not contradict it
    (:meth:`aot.target.Target.refined_by`, docs/targets.md).

    ``codegen`` (``c`` or ``llvm``) replaces the target's kind and keeps
    everything else it says: ``qemu/mps2-an386`` with ``codegen="llvm"`` is
    ``llvm -keys=arm_cpu,cpu -mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16
    -opt-level=2 -tag=qemu/mps2-an386``, the same kernels with their code from
    LLVM at the optimisation level of the board's gcc builds.
    """
    if isinstance(target_or_board, Board):
        target, board = target_or_board.target, target_or_board
    elif isinstance(target_or_board, str) and names_a_board(target_or_board):
        board = load_board(target_or_board)
        target = board.target
    else:
        target = (target_or_board if isinstance(target_or_board, Target)
                  else Target(target_or_board))
        board = load_board(target.tag) if target.tag else None
    if refine is not None:
        if board is None:
            raise CompileError(f"--target {refine} refines a board's target: give --board "
                               "too, or give the whole target without --board")
        refine = refine if isinstance(refine, Target) else Target(refine)
        if refine.kind == "composite":
            target, board = _on_cores(refine, board)
        else:
            target = target.refined_by(refine, where=f"the board {board.tag} ({target})")
    elif target.kind == "composite":
        target, board = _on_cores(target, board)
    return switch_codegen(target, codegen), board


def switch_codegen(target: Target, codegen: str | None) -> Target:
    """``target`` with its kind replaced by ``codegen`` (``c`` or ``llvm``; None keeps
    it), everything else it says kept (:func:`resolve_target`)."""
    if codegen is None or codegen == target.kind:
        return target
    if codegen not in CODEGENS or target.kind not in CODEGENS:
        raise CompileError(f"--codegen {codegen}: a {target.kind} target takes "
                           f"{' or '.join(CODEGENS)}")
    switched = {**target.to_dict(), "kind": codegen}
    if codegen == "llvm":
        # The board's C is built -O2; LLVM's -O3 unrolls the kernels' constant
        # loops into up to 2.6x the code for no fewer instructions (docs/codegen.md).
        switched["opt-level"] = 2
    return Target(switched)


def _on_cores(composite: Target, board: Board | None) -> tuple[Target, Board]:
    """A composite target's devices as cores of one board (:func:`aot.target.board_devices`),
    held to what compilation honours (:func:`aot.target.check_cores`)."""
    target, board, cores = board_devices(composite, board)
    try:
        check_cores(board, cores)
    except TargetError as err:
        raise TargetError(f"the composite target's {cores} devices are {cores} cores of "
                          f"{board.tag}: {err}") from None
    return target, board


def check_target(target: Target) -> None:
    """Refuse what the target says that compilation would not honour.

    A composite target is resolved to a board's cores before (:func:`resolve_target`);
    a ``-host`` is not supported yet; ``-libs`` must name registered
    external codegens (:mod:`aot.byoc`; their options are checked by
    :func:`aot.byoc.configure`); the alignments must be powers of two.
    Everything else a ``c`` target states is either used (keys, CPU facts,
    alignments, libs) or only informative (``-model``, ``-device``).
    """
    if target.host is not None:
        raise CompileError(f"not supported yet: -host={{{target.host}}} (the target of code "
                           "that would run on a host beside the device: aot generates device "
                           "code only); remove -host")
    for lib in target.attrs.get("libs") or ():
        byoc.get(lib)
    for attr in ("workspace-byte-alignment", "constants-byte-alignment"):
        value = target.attrs.get(attr)
        if value is not None and (value < 1 or value & (value - 1) or value > 4096):
            raise CompileError(f"-{attr}={value}: use a power of two from 1 to 4096")


@dataclass(frozen=True)
class CompileOptions:
    """Everything one compilation is asked for, checked once where it is built
    (:meth:`build`, :meth:`for_target`): the driver's steps read these facts and derive
    none of them again.  :func:`compile_model` takes it (or builds it from keywords).

    ``target`` and ``board`` are :func:`resolve_target`'s.  ``name`` is the C prefix of
    the generated code.  ``input_shapes`` (``{input name: shape}``) fixes the sizes an
    ONNX model leaves open (:func:`aot.frontend.load_model`; model files only).
    ``opt_level``, ``disabled_pass``, ``required_pass`` and ``config`` make the
    :class:`aot.passes.PassContext`; ``dump_after`` prints the graph after that pass to
    ``dump_stream`` (default stdout).

    ``io_in_workspace`` (the default) places the inputs and outputs in the
    workspace, as TFLM's arena does: the header's ``P_input_<name>()`` and
    ``P_output_<name>()`` point into it, ``P_run`` copies a caller's buffer in
    and out unless it is that pointer, and an input's bytes are reused once
    the layers are done with it.  ``False`` keeps them in the caller's
    buffers (the workspace then holds activations only).

    ``inplace`` lets a kernel write its output over an input that dies there
    (``docs/memory.md``) where the kernel's loop nest allows it
    (``Kernel.inplace_allowed``); a library whose kernels list no allowed
    pairs gets no in-place writes.  ``overlap`` lets a kernel's output start
    before the end of an input that dies there and grow over the bytes the
    kernel has finished reading, within the limit its loop nest proves
    (``Kernel.overlap_allowed``, :mod:`aot.kernels.overlap`); ``inplace=False``
    turns both off.  None (the default) means True, or, with a budget, left
    to it.

    ``memory_budget`` (bytes; :meth:`build` also takes a string such as ``"64K"``)
    picks, among the choices left open (``None``) of ``io_in_workspace``, ``inplace``
    and ``overlap``, the one with the fewest instructions whose RAM (workspace with
    scratch, caller i/o, state) fits (:mod:`aot.executor.budget`; the choice is
    ``CompiledModel.budget``); none fits: ``MemoryBudgetError`` with the
    smallest RAM reachable and the tensors live at its peak.

    ``memory_regions`` (the board's regions; :meth:`build` parses ``"ram:4K,psram"``
    or a list of ``"name[:bytes]"``) splits the workspace over the board's data
    memories, the hottest buffers in the fastest (:mod:`aot.executor.regions`); the
    artifact then holds ``codegen/<name>_regions.ld`` for the link.  A region marked
    ``+const`` also takes the hottest kernels' constants, copied there at start-up;
    one marked ``+stack`` holds the firmware's stack.  With a ``memory_budget`` too,
    the budget counts what the model owns in ``ram`` (the workspace buffers left
    there, scratch, caller buffers, state, constants copied there); every other
    region holds at most its own size.

    ``placement`` (default True): on a board whose flash reads wait, once the plan is
    chosen, the constants that pay most are copied into the RAM it leaves
    (:mod:`aot.executor.const_placement`; ``CompiledModel.placement``).  Not with
    ``memory_regions`` (their ``+const`` decides) or the llvm codegen (its objects hold
    the constants); False turns it off; a :class:`Board` places as for that board's
    memory (``aot profile`` compiles for the emulated board of a real board's core).

    ``patches`` (None: left to the compiler; else
    :func:`aot.executor.stages.parse_patches`' form of ``"off"``, ``"auto"``, a grid
    ``"RxC"``, ``"stream"`` or ``"stream:T"``) says which stage runs the leading layers;
    :mod:`aot.executor.stages` chooses the one left open (:func:`compile_model`).

    ``kernel_library`` replaces :mod:`aot.kernels` (tests use it to exercise the
    executor alone; :class:`aot.tune.library.TunedKernels` applies tuning records).
    The target's ``-libs`` hands the layers its external codegens support to them
    (:mod:`aot.byoc`, docs/byoc.md) with ``external_options`` (:func:`aot.byoc.configure`
    of :meth:`build`'s ``codegen_options``, such as ``{"cmsis-nn": {"path": TREE}}``);
    ``keep_with_aot`` names nodes that stay with aot's kernels although a codegen
    supports them (the per-layer choice).

    ``measure_code`` (default True) measures the code size (:meth:`PlannedModel.emit`,
    with ``cache_dir`` for the objects it compiles); False leaves it unknown ("code size
    not measured").  ``jit``: the llvm target of this machine (no artifact).
    """

    target: Target
    board: Board | None
    name: str = "model"
    input_shapes: dict | None = None
    opt_level: int = 2
    disabled_pass: tuple = ()
    required_pass: tuple = ()
    config: dict = field(default_factory=dict)
    dump_after: str | None = None
    dump_stream: TextIO | None = None
    io_in_workspace: bool | None = None
    inplace: bool | None = None
    overlap: bool | None = None
    memory_budget: int | None = None
    memory_regions: tuple[PlanRegion, ...] | None = None
    placement: bool | Board = True
    patches: object = None
    kernel_library: object = None
    external_options: dict = field(default_factory=dict)
    keep_with_aot: frozenset[str] = frozenset()
    measure_code: bool = True
    cache_dir: Path | None = None
    jit: bool = False
    # Cores of the board the model runs on (--cores, a composite target): 2 places it
    # on both (the pass config placement.cores) and hands half of each step to core 1.
    cores: int = 1

    @classmethod
    def build(cls, target_or_board="host/native", *, codegen: str | None = None,
              **options) -> CompileOptions:
        """The options for a target or board (:func:`resolve_target`, with ``codegen``),
        from :func:`compile_model`'s keywords: :meth:`for_target`'s.  A composite target
        runs on as many cores as it names (unless ``cores`` says so too)."""
        target, board = resolve_target(target_or_board, codegen)
        named = target_or_board
        if isinstance(named, str) and named.split(maxsplit=1)[:1] == ["composite"]:
            named = Target(named)
        if isinstance(named, Target) and named.kind == "composite" and "cores" not in options:
            options["cores"] = board_devices(named, board)[2]
        return cls.for_target(target, board, **options)

    @classmethod
    def for_target(cls, target: Target, board: Board | None, *, name: str = "model",
                   memory_budget: int | str | None = None, memory_regions=None,
                   patches=None, codegen_options=None, keep_with_aot=(), config=None,
                   disabled_pass=(), required_pass=(), cores: int = 1,
                   **options) -> CompileOptions:
        """The options for a resolved target and board, each checked, and every
        combination the compiler refuses refused here, before any model is read:
        the target (:func:`check_target`), the C prefix, the budget's size, the memory
        regions of the board, the stage asked for, the external codegens' options, the
        llvm target.  The other ``options`` are the fields of the same name."""
        check_target(target)
        entry.check_name(name)
        external = byoc.configure(target, codegen_options)
        if keep_with_aot and not external:
            raise CompileError("keep_with_aot names layers to keep from external codegens, "
                               "but the target has no -libs")
        regions = _regions(memory_regions, target, board)
        patches = None if patches is None else parse_patches(patches)
        if patches not in (None, "off", "auto") and (regions is not None or external):
            raise _stages_not_supported()
        config = dict(config or {})
        if cores > 1:
            check_cores(board, cores)
            if target.kind == "llvm":
                raise CompileError(f"not supported yet: {cores} cores with the llvm codegen "
                                   "(the split layers' parts are compiled as C only); use "
                                   "--codegen c")
            if patches not in (None, "off"):
                raise CompileError(f"not supported yet: patches or streams on {cores} cores "
                                   "(a stage's loop runs on one core); give --patches off")
            patches = "off"  # the layers split across the cores instead
            if regions is not None and any(r.const for r in regions):
                raise CompileError(f"not supported yet: constants copied to a memory region "
                                   f"(+const) on {cores} cores (the placement moves whole "
                                   "kernels' constants, and a split layer runs its parts'); "
                                   "drop +const")
            if config.setdefault("placement.cores", cores) != cores:
                raise CompileError(f"the pass config placement.cores = "
                                   f"{config['placement.cores']} but the model runs on "
                                   f"{cores} cores (--cores, the composite target)")
        return cls(target, board, name=name,
                   memory_budget=None if memory_budget is None
                   else parse_memory_size(memory_budget),
                   memory_regions=regions, patches=patches, external_options=external,
                   keep_with_aot=frozenset(keep_with_aot),
                   config=config, disabled_pass=tuple(disabled_pass),
                   required_pass=tuple(required_pass), jit=_llvm_jit(target, board),
                   cores=cores, **options)

    @property
    def library(self):
        """The kernel library the groups are lowered with."""
        return self.kernel_library if self.kernel_library is not None else default_kernels

    @property
    def board_ram(self) -> int | None:
        """The board's RAM less its stack: a budget too (never pick a plan it refuses)."""
        board = self.board
        return board.memory.model_ram_bytes if board and board.memory else None

    @property
    def ram_budget(self) -> int | None:
        """The RAM the model may own: the memory budget, at most :attr:`board_ram`."""
        if self.memory_budget is None:
            return None
        return min(self.memory_budget, self.board_ram or self.memory_budget)

    def pass_context(self, **extra) -> PassContext:
        """The graph passes' context; ``extra`` adds to it (instruments, config)."""
        return PassContext(opt_level=self.opt_level, required_pass=self.required_pass,
                           disabled_pass=self.disabled_pass,
                           **{"config": dict(self.config), **extra})


def _regions(spec, target: Target, board: Board | None) -> tuple[PlanRegion, ...] | None:
    """``memory_regions`` as the board's regions (:func:`aot.executor.regions.parse_regions`),
    refused where the target cannot honour them."""
    if spec is None:
        return None
    if target.kind == "llvm" and board is None:
        raise CompileError("not supported yet: memory regions with the llvm JIT (this "
                           "machine has one memory); compile for a board")
    regions = parse_regions(spec, board,
                            cortex_m_startup=board is not None and cortex_m_startup(board))
    if any(r.const for r in regions) and target.kind == "llvm":
        raise CompileError("not supported yet: constants copied to a memory region "
                           "(+const) with the llvm codegen (its objects hold the "
                           "constants); use --codegen c, or drop +const")
    return tuple(regions)


def _stages_not_supported() -> CompileError:
    """The stage asked for (or chosen) with memory regions or -libs."""
    return CompileError("not supported yet: patches with memory regions or -libs; give "
                        "--patches off")


def _llvm_jit(target: Target, board: Board | None) -> bool:
    """Whether ``target`` is this machine's LLVM JIT (no artifact); refuses the JIT with
    a board and the llvm options it does not honour."""
    if target.kind != "llvm":
        return False
    # Options it honours; this machine (the JIT) or a Cortex-M core (objects).
    from aot.codegen.llvm_jit import check_target as check_llvm_target
    jit = check_llvm_target(target)["machine"] is None
    if jit and board is not None:
        raise CompileError(
            f"the llvm codegen for {board.tag}: this machine runs LLVM's code through "
            "its JIT without a board; use --target llvm (aot run MODEL --target llvm), "
            "or a Cortex-M or RISC-V board with --codegen llvm")
    return jit


def _as_options(options, keywords: dict) -> CompileOptions:
    """``options`` if it is a :class:`CompileOptions` (then no ``keywords``), else
    :meth:`CompileOptions.build` of that target or board and the ``keywords``."""
    if not isinstance(options, CompileOptions):
        return CompileOptions.build(options, **keywords)
    if keywords:
        raise TypeError(f"compile options given twice: a CompileOptions and the keywords "
                        f"{', '.join(keywords)}; use dataclasses.replace(options, ...)")
    return options


def compile_model(model, options: CompileOptions | Target | Board | str = "host/native",
                  **keywords) -> CompiledModel:
    """Compile ``model`` (a path or a :class:`Graph`) with ``options``: a
    :class:`CompileOptions`, or a target or board (a :class:`Target`, a :class:`Board`,
    or a string naming either) with the options as keywords (``codegen`` and the fields
    of :class:`CompileOptions`, :meth:`CompileOptions.build`), a convenience that builds
    the options::

        compile_model("kws.tflite", "qemu/mps2-an386", memory_budget="64K")
        compile_model("kws.tflite", CompileOptions.build("qemu/mps2-an386",
                                                         memory_budget="64K"))

    The plans of the stage choices (:mod:`aot.executor.stages`: the default stream
    stage, ``patches="auto"``, a budget's stages) are made and compared by their RAM
    (:func:`plan_one`, no C printed), and the kept plan's C printed and its code
    measured (:meth:`PlannedModel.emit`).
    """
    timings: list[tuple[str, float, float]] = []
    clock = _Clock(timings)
    options = _as_options(options, keywords)
    clock.lap("frontend")  # the target and board resolved, the options checked
    planned = _placed(_choose_plan(model, options), options)
    planned.timings[:0] = timings
    return planned.emit(measure_code=options.measure_code, cache_dir=options.cache_dir)


def _placed(planned: PlannedModel, options: CompileOptions) -> PlannedModel:
    """``planned`` with the default placement's constants in RAM (``options.placement``):
    made once the plan is chosen, so it changes neither the plan nor the choice.  Not on
    two cores: it prices and moves the whole kernels, which a split group does not run
    (its parts' constants would stay in flash)."""
    board = planned.board
    if options.placement is False or options.memory_regions is not None or board is None \
            or planned.target.kind != "c" or planned.parts:
        return planned
    graph = planned.graph
    placement = place_default(
        planned.plan, planned.kernels, board, ram_used=_ram_used(planned.plan, planned.kernels),
        io_copy_bytes=sum(t.type.nbytes for t in (*graph.inputs, *graph.outputs)),
        ram_budget=options.memory_budget,
        priced=options.placement if isinstance(options.placement, Board) else None)
    if placement is None:
        return planned
    kernels = [k.in_section(constant_section(planned.name, placement.homes[k.name]))
               if k.name in placement.homes else k for k in planned.kernels]
    return dataclasses.replace(planned, kernels=kernels, placement=placement)


def _choose_plan(model, options: CompileOptions) -> PlannedModel:
    """The plan :func:`compile_model` compiles, chosen among :func:`plan_one`'s plans by
    :func:`aot.executor.stages.choose_planned` before any C is printed; its timings
    include the other plans' and the choice's."""
    made: list[PlannedModel] = []
    choosing: list[tuple[str, float, float]] = []

    def make(choice) -> PlannedModel:
        made.append(plan_one(model, dataclasses.replace(options, patches=choice)))
        return made[-1]

    # Stages are not supported with memory regions or -libs yet, and a user's tuning
    # records were made for the whole layers' shapes, not the bands' (aot's pre-tuned
    # ones only add to the library's defaults: TunedKernels.whole_layers_only).
    library = options.kernel_library
    request = StageRequest(
        options.patches, budget=options.memory_budget is not None,
        regions=options.memory_regions is not None,
        stream_by_default=options.memory_regions is None
        and (library is None or not getattr(library, "whole_layers_only", True))
        and not options.target.attrs.get("libs"),
        io_in_workspace=options.io_in_workspace is not False)
    chosen = choose_planned(make, request, lambda: _optimized(model, options),
                            _Clock(choosing).lap)
    chosen.timings[:0] = [t for p in made if p is not chosen for t in p.timings] + choosing
    return chosen


def _optimized(model, options: CompileOptions) -> Graph:
    """The optimized graph the stage estimates are made on (no dump, no partitions)."""
    graph = model if isinstance(model, Graph) else load_model(model, options.input_shapes)
    return optimize(graph, options.pass_context())


def compile_one(model, options: CompileOptions | Target | Board | str = "host/native",
                **keywords) -> CompiledModel:
    """Compile ``model`` with ``options`` (as :func:`compile_model` takes them) once, with
    one plan: :func:`plan_one` (no C yet), then :meth:`PlannedModel.emit` (C, code
    size)."""
    options = _as_options(options, keywords)
    return plan_one(model, options).emit(measure_code=options.measure_code,
                                         cache_dir=options.cache_dir)


class _Clock:
    """Wall and CPU seconds per compile stage, appended to ``timings`` as ``(stage,
    wall, cpu)`` (CompiledModel.timings).  The CPU time counts this process's and the
    C compilers' it ran and waited for (the code size)."""

    def __init__(self, timings: list) -> None:
        self.timings = timings
        self._start = self._now()

    @staticmethod
    def _now() -> tuple[float, float]:
        t = os.times()
        return time.perf_counter(), t.user + t.system + t.children_user + t.children_system

    def lap(self, stage: str) -> None:
        now = self._now()
        self.timings.append((stage, now[0] - self._start[0], now[1] - self._start[1]))
        self._start = now


def plan_one(model, options: CompileOptions | Target | Board | str = "host/native",
             **keywords) -> PlannedModel:
    """Compile ``model`` (a path or a :class:`Graph`) with ``options`` (as
    :func:`compile_model` takes them; ``options.patches`` is the stage, ``"auto"``
    included) up to its memory plan, checked against the board's RAM: no C is printed
    or compiled yet (:meth:`PlannedModel.emit` does), so :func:`compile_model` can
    compare plans' RAM and work (:attr:`PlannedModel.sizes`) and pay for the chosen
    one's C only.  The recipe::

        load -> graph passes -> the stage's layers cut out -> lower each group ->
        the stage's buffers -> memory plan -> placed on the board

    Raises an :class:`AotError` for anything the user can change: an unsupported
    kernel (``aot.kernels.KernelError``), a stage the graph lacks, a model that does
    not fit the board (``MemoryPlanError`` naming both sizes and the largest tensors).
    """
    options = _as_options(options, keywords)
    timings: list[tuple[str, float, float]] = []
    lap = _Clock(timings).lap
    graph, source = _load(model, options)
    lap("frontend")
    staged = _with_stage(_optimize(graph, options), options)
    lap("passes")
    lowered = _lower(staged, options)
    lap("lowering")
    code = None
    if staged.stage is not None:
        code = stage_code(staged.stage, staged.stage_graph, staged.where, options.name,
                          workspace_alignment(options.target))
    plan, budget = _plan(staged.graph, lowered.kernels, code, options)
    kernels = _place(plan, staged.graph, lowered.kernels, options)
    _check_llvm(graph.name, kernels, lowered.external, options)
    lap("planning")
    return PlannedModel(options.name, source, staged.graph, staged.groups, options.target,
                        options.board, kernels, plan, options.library, lowered.external,
                        budget, code, lowered.stage_kernels, jit=options.jit,
                        timings=timings, parts=lowered.parts)


def _load(model, options: CompileOptions) -> tuple[Graph, str]:
    """The model's graph and where it came from (the file, or the graph's name)."""
    if isinstance(model, Graph):
        if options.input_shapes:
            raise CompileError("input_shapes applies to model files; this Graph has its "
                               "shapes already")
        return model, model.name
    return load_model(model, options.input_shapes), str(model)


def _optimize(graph: Graph, options: CompileOptions) -> Graph:
    """The graph passes (:func:`aot.passes.optimize`), dumping after ``dump_after``, the
    layers the target's ``-libs`` support partitioned to them, ``keep_with_aot``
    excepted (every name must be a node of the optimized graph)."""
    instruments = []
    dump_stream = options.dump_stream or sys.stdout
    if options.dump_after is not None:
        instruments.append(DumpAfter(options.dump_after, dump_stream))
    config = dict(options.config)
    if options.external_options:
        config.setdefault("partition.tables", byoc.tables(options.target))
        config.setdefault("partition.exclude", options.keep_with_aot)
    annotated = optimize(graph, options.pass_context(config=config, instruments=instruments))
    if options.dump_after is not None and not instruments[0].seen:
        dump_stream.write(f"// pass {options.dump_after} did not run (disabled or below "
                          "opt_level)\n")
    if options.memory_regions is not None:  # a split kernel reaches its buffers from every core
        check_reach(list(options.memory_regions), options.board, annotated.annotations.cores)
    unknown = sorted(options.keep_with_aot - {n.name for n in annotated.nodes})
    if unknown:
        raise CompileError(f"keep_with_aot names {', '.join(map(repr, unknown[:3]))}, which "
                           f"the optimized graph of {graph.name} does not have")
    return annotated


@dataclass(frozen=True)
class _Staged:
    """The optimized graph with the leading layers its stage runs (if any) as one group
    of kind ``patches``, and that stage's layers on their patch or band shapes
    (``stage_graph``, optimized; ``where``: the band graph's tensors)."""

    graph: Graph
    groups: list
    stage: PatchStage | StreamStage | None = None
    stage_graph: Graph | None = None
    where: dict | None = None


def _with_stage(annotated: Graph, options: CompileOptions) -> _Staged:
    """``annotated`` with the stage ``options.patches`` asks for
    (:func:`aot.executor.stages.analyze`)."""
    groups = list(annotated.annotations.groups)
    stage = analyze(annotated, parse_patches(options.patches),
                    options.io_in_workspace is not False)
    if stage is None:
        return _Staged(annotated, groups)
    if options.memory_regions is not None or options.external_options:
        raise _stages_not_supported()  # "auto" or a budget chose one
    stage_graph, where = band_graph(stage) if isinstance(stage, StreamStage) \
        else (patch_graph_of(stage), None)
    ends = [sum(len(g.nodes) for g in groups[:i + 1]) for i in range(len(groups))]
    first = ends.index(len(stage.nodes)) + 1
    groups = [FusedGroup(f"{options.name}_patches", tuple(stage.nodes), None, kind="patches"),
              *groups[first:]]
    return _Staged(rebuild(annotated, groups=tuple(groups)), groups, stage,
                   optimize(stage_graph, options.pass_context()), where)


@dataclass(frozen=True)
class _Lowered:
    """The kernels of every group that is not a view, in order; the names of the stage's;
    the build information of the external codegens' libraries
    (:func:`aot.byoc.build_info`); per split group (several cores), its parts' kernels
    (:mod:`aot.kernels.parts`)."""

    kernels: list
    stage_kernels: frozenset[str]
    external: list[dict]
    parts: dict[str, tuple[PartKernel, ...]]


def _lower(staged: _Staged, options: CompileOptions) -> _Lowered:
    """Every group that is not a view lowered to a kernel (the stage's: one per layer of
    its stage graph; a split group's parts too)."""
    name, target, library = options.name, options.target, options.library
    kernels, codes, stage_kernels = [], [], []
    parts: dict[str, tuple[PartKernel, ...]] = {}
    for i, g in enumerate(staged.groups):
        if g.kind == "patches":
            lowered = [library.lower_group(pg, staged.stage_graph, target,
                                           name=f"{name}_k{i}_{j}")
                       for j, pg in enumerate(staged.stage_graph.annotations.groups)
                       if pg.kind != "view"]
            stage_kernels += [k.name for k in lowered]
            kernels += lowered
        elif g.kind == "external":
            kernel, code = byoc.lower_external(g, staged.graph, target, name=f"{name}_k{i}",
                                               options=options.external_options[g.codegen])
            codes.append((g.codegen, code))
            kernels.append(kernel)
        elif g.kind != "view":
            kernels.append(library.lower_group(g, staged.graph, target, name=f"{name}_k{i}"))
            split = lower_parts(g, staged.graph, target, name=f"{name}_k{i}",
                                lower=library.lower_group)
            if split:
                parts[g.name] = split
    return _Lowered(kernels, frozenset(stage_kernels),
                    byoc.build_info([c for _, c in codes], [n for n, _ in codes]), parts)


def _plan(graph: Graph, kernels, code, options: CompileOptions
          ) -> tuple[MemoryPlan, BudgetChoice | None]:
    """The memory plan of ``graph`` with the stage's buffer (``code.buffer``) held during
    its step, and what a memory budget chose (:func:`aot.executor.budget.choose_plan`)."""
    # The planner may put an output over an input that dies at its kernel
    # only where that kernel's loop nest allows it (a fact of the lowered
    # kernel, proved on first use: a plan without overlaps never pays for
    # the overlap proofs); the pairs the plan takes are then bound in the kernels.
    @functools.cache
    def allowed() -> set:
        return {(k.params[i].tensor, k.params[j].tensor)
                for k in kernels for i, j in getattr(k, "inplace_allowed", ())}

    @functools.cache
    def limits() -> dict:
        return {(k.params[i].tensor, k.params[j].tensor): d
                for k in kernels for i, j, d in getattr(k, "overlap_allowed", ())}

    step_buffers = None if code is None else {graph.annotations.groups[0].name: code.buffer}
    scratch = max((k.scratch_bytes for k in kernels), default=0)

    def plan_for(option: PlanOption) -> MemoryPlan:
        plan = plan_memory(graph, alignment=workspace_alignment(options.target),
                           step_buffers=step_buffers,
                           io_in_workspace=option.io_in_workspace,
                           inplace=(lambda out, src: (src.name, out.name) in allowed())
                           if option.inplace else False,
                           overlap=(lambda out, src: limits().get((src.name, out.name)))
                           if option.inplace and option.overlap else None)
        if options.memory_regions is not None:
            split_for_budget(plan, graph, list(options.memory_regions),
                             buffer_heat(plan, kernels), options.ram_budget, scratch)
        return plan

    if options.memory_budget is None:
        inplace = options.inplace is not False
        return plan_for(PlanOption(options.io_in_workspace is not False, inplace,
                                   inplace and options.overlap is not False)), None
    io_copies = sum(t.type.nbytes for t in (*graph.inputs, *graph.outputs))
    budget = choose_plan(plan_for, open_options(options.io_in_workspace, options.inplace,
                                                options.overlap),
                         options.memory_budget, board_bytes=options.board_ram,
                         scratch_bytes=scratch, io_copy_bytes=io_copies,
                         where=f"model {graph.name!r}")
    return budget.plan, budget


def _place(plan: MemoryPlan, graph: Graph, kernels, options: CompileOptions) -> list:
    """``plan`` on the board: the firmware's stack in its region, checked against the
    board's RAM; the kernels with the plan's in-place pairs bound, and the hottest
    kernels' constants in the regions marked ``+const``."""
    regions, board = options.memory_regions, options.board
    stack_home = next((r.name for r in regions or () if r.stack), "")
    if stack_home:
        plan.stack_region, plan.stack_bytes = stack_home, board.memory.stack_bytes
    if board is not None:
        check_fits_board(plan, graph, board, kernels=kernels)
    kernels = [_bind_inplace(k, plan) for k in kernels]
    if regions is None or not any(r.const for r in regions):
        return kernels
    ram_used = _ram_used(plan, kernels)
    ram_budget = options.ram_budget
    if ram_budget is not None:
        # The budget counts what the model owns in ram (docs/memory.md "Memory
        # budget"): constants copied there take what the rest leaves of it.
        regions = [dataclasses.replace(r, capacity=min(r.capacity, ram_budget))
                   if r.name == "ram" else r for r in regions]
    homes = place_constants(plan, kernels, list(regions), ram_used=ram_used)
    return [k.in_section(constant_section(options.name, homes[k.name])) if k.name in homes
            else k for k in kernels]


def _ram_used(plan: MemoryPlan, kernels) -> int:
    """Bytes of ``ram`` the model owns: the workspace with its scratch, the state
    and the caller's buffers."""
    lay = entry.layout(plan, kernels)
    return (lay.scratch_offset + lay.scratch_bytes if lay.scratch_bytes
            else lay.workspace_bytes) + plan.state_bytes + plan.io_bytes


def _check_llvm(model: str, kernels, external, options: CompileOptions) -> None:
    """Refuse what the llvm codegen cannot make of these kernels."""
    if options.target.kind != "llvm":
        return
    if options.jit and external:
        raise CompileError("not supported yet: -libs with the llvm JIT (external codegens "
                           "write C); compile for a board or a 'c' target")
    if not kernels:
        raise CompileError(f"not supported yet: {model} has no operator left to run "
                           "(every output is a constant), and the llvm codegen makes no "
                           "empty module; use --codegen c (on this machine: --board "
                           "host/native)")
    if all(k.func is None for k in kernels):
        raise CompileError(f"no kernel of {model} is loop IR (all are hand-written "
                           "C): nothing for the llvm codegen; use --codegen c")


@dataclass
class PlannedModel:
    """One compilation up to its memory plan (:func:`plan_one`): kernels lowered to
    loop IR, buffers placed, no C printed or compiled yet."""

    name: str
    source: str
    graph: Graph                  # the optimized (annotated) graph
    groups: list
    target: Target
    board: Board | None
    kernels: list
    plan: MemoryPlan
    library: object               # the kernel library (support files)
    external: list[dict]
    budget: BudgetChoice | None
    patches: entry.PatchCode | entry.StreamCode | None
    stage_kernels: frozenset[str]
    jit: bool = False             # the llvm target of this machine (no artifact)
    placement: ConstantPlacement | None = None  # the default placement's (compile_model)
    timings: list[tuple[str, float, float]] = field(default_factory=list)
    # Per split group (placement.cores > 1): its parts' kernels with the byte offsets of
    # their arguments (aot.kernels.parts), which the entry function's hand-over to the
    # cores calls (aot.executor.codegen).
    parts: dict[str, tuple[PartKernel, ...]] = field(default_factory=dict)

    @functools.cached_property
    def lowered(self) -> entry.Entry:
        """The entry function as loop IR (no C)."""
        return entry.lower_entry(self.name, self.graph, self.groups, self.kernels,
                                 self.plan, self.patches, parts=self.parts)

    @property
    def kernels_run(self) -> list:
        """The kernels an inference runs, the ones the artifact holds: a split group's
        parts' in place of its whole kernel (:func:`aot.executor.codegen.linked_kernels`)."""
        return [k for _, k in entry.linked_kernels(self.kernels, self.lowered)]

    def sizes_with(self, code: int | None, note: str) -> Sizes:
        """The model's sizes, which the plan and the entry function fix, with ``code``."""
        lowered, plan = self.lowered, self.plan
        return Sizes(workspace=lowered.layout.workspace_bytes,
                     constants=sum(k.constant_bytes for k in self.kernels_run)
                     + lowered.constant_arg_bytes, state=lowered.state_bytes,
                     io=plan.io_bytes, code=code, code_note=note,
                     ram_constants=plan.region_constants.get("ram", 0))

    @property
    def sizes(self) -> Sizes:
        """Every size but the code's: what plans are compared by."""
        return self.sizes_with(None, CODE_NOT_MEASURED)

    def emit(self, *, measure_code: bool = True, cache_dir: Path | None = None
             ) -> CompiledModel:
        """The model's C (or LLVM objects) and its code size: the
        :class:`CompiledModel`.  ``measure_code=False`` leaves the code size
        unknown ("code size not measured"); ``cache_dir`` keeps the objects compiled
        to measure it (:meth:`aot.codegen.cc.CCompiler.text_bytes`).  Where the
        default placement ran and the board lets code run from RAM, the measured
        sizes of the kernel files also choose the kernels that do
        (:meth:`_code_in_ram`)."""
        lap = _Clock(self.timings).lap
        name, target, board, kernels, plan = (self.name, self.target, self.board,
                                              self.kernels, self.plan)
        module = None
        if target.kind == "llvm":
            from aot.codegen.llvm import build_kernels
            # Kernels an external codegen wrote have only C: objects leave them to
            # the board's compiler (the JIT refuses -libs).
            compiled_by_llvm = [k for k in kernels if k.func is not None]
            module = build_kernels(compiled_by_llvm, target,
                                   self.library.support_files(target),
                                   entry=self.lowered.run if self.jit else None)
        common = dict(budget=self.budget, patches=self.patches,
                      stage_kernels=self.stage_kernels, placement=self.placement)
        if self.jit:
            lap("codegen")
            code, note = ((module.object_text_bytes(), "") if measure_code
                          else (None, CODE_NOT_MEASURED))
            sizes = self.sizes_with(code, note)
            lap("code size")
            return CompiledModel(name, self.source, self.graph, target, None, kernels, plan,
                                 {}, sizes, self.timings, llvm=module, lowered=self.lowered,
                                 **common)

        generated = entry.generate(name, self.graph, self.groups, kernels, plan,
                                   target=str(target), board=board.tag if board else None,
                                   version=__version__, target_hash=target.digest(),
                                   patches=self.patches, parts=self.parts)
        files: dict[str, str | bytes] = dict(generated.files)
        if needs_linker_script(plan):
            files[f"codegen/{name}_regions.ld"] = linker_script(name, plan, board)
        if module is None:
            for support_name, text in self.library.support_files(target).items():
                files[f"codegen/{support_name}"] = text
        else:
            files.update(_llvm_files(name, kernels, module,
                                     self.library.support_files(target)))
        lap("codegen")

        code, note, each = (_code_bytes(files, name, target, board, self.external, cache_dir)
                            if measure_code else (None, CODE_NOT_MEASURED, {}))
        placement = self.placement
        if placement is not None and board.memory.code_in_ram_bytes and each:
            placement, kernels = self._code_in_ram(placement, kernels, files, each)
        ram_code = placement.code.bytes if placement is not None and placement.code else 0
        sizes = dataclasses.replace(self.sizes_with(code, note), ram_code=ram_code)
        if board is not None:
            check_fits_board(plan, self.graph, board, sizes=sizes, kernels=kernels)
        lap("code size")
        return CompiledModel(name, self.source, self.graph, target, board, kernels, plan,
                             files, sizes, self.timings, llvm=module, lowered=self.lowered,
                             external=self.external, cores=generated.cores,
                             **common | {"placement": placement})

    def _code_in_ram(self, placement: ConstantPlacement, kernels, files: dict,
                     each: dict[str, int]) -> tuple[ConstantPlacement, list]:
        """The code half of the default placement (:mod:`aot.executor.code_placement`),
        given each generated file's code bytes ``each``: the placement with its
        ``code``, and the kernels with the chosen ones in their RAM sections,
        whose files in ``files`` are printed again (their code bytes do not
        change: the section holds the same functions)."""
        sized = {k.name: each.get(entry.kernel_file(self.name, i), 0)
                 for i, k in enumerate(kernels)}
        code = place_code(kernels, sized, region=placement.region, room=placement.free,
                          limit=self.board.memory.code_in_ram_bytes)
        moved = {m.kernel for m in code.moved}
        kernels = [k.in_code_section(code_section(k.name)) if k.name in moved else k
                   for k in kernels]
        for i, k in enumerate(kernels):
            if k.name in moved:
                files[entry.kernel_file(self.name, i)] = k.source
        return dataclasses.replace(placement, code=code), kernels


#: Why a compiled model's code size is unknown when it was not asked for.
CODE_NOT_MEASURED = "code size not measured"


@dataclass
class CompiledGroup:
    """Several compiled models sharing one workspace (:func:`group_models`);
    :meth:`write` makes them one artifact."""

    name: str
    models: list[CompiledModel]   # each with its entry generated for the shared workspace
    target: Target
    board: Board | None
    files: dict[str, str | bytes]
    sizes: Sizes                  # the group's: the largest workspace, everything else summed
    external: list[dict] = field(default_factory=list)

    def metadata(self) -> dict:
        """The group artifact's metadata.json: ``group`` (the shared workspace and
        the models' names) and ``models`` (each model's own metadata, as a
        single model's artifact has it, less ``build``: the group has one)."""
        models = []
        for m in self.models:
            meta = m.metadata()
            del meta["build"]
            for key in ("format", "format_version", "aot_version", "target", "target_hash",
                        "board", "board_version"):
                del meta[key]
            meta["entry"]["rpc_descriptor"] = None
            models.append(meta)
        return {
            "format": METADATA_FORMAT, "format_version": METADATA_VERSION,
            "aot_version": __version__, "name": self.name, "model": None,
            "target": str(self.target), "target_hash": self.target.digest(),
            "board": self.board.tag if self.board is not None else None,
            "board_version": self.board.versioned_tag if self.board is not None else None,
            "group": {"header": f"include/{self.name}.h",
                      "models": [m.name for m in self.models],
                      "workspace": {"symbol": f"{self.name}_workspace",
                                    "bytes": self.sizes.workspace,
                                    "alignment": workspace_alignment(self.target),
                                    "separate_bytes": sum(m.sizes.workspace
                                                          for m in self.models)},
                      **({"regions": {r: {"symbol": f"{self.name}_region_{r}",
                                          "bytes": max(m.plan.regions.get(r, 0)
                                                       for m in self.models)}
                                      for r in dict.fromkeys(r for m in self.models
                                                             for r in m.plan.regions)}}
                         if any(m.plan.regions for m in self.models) else {})},
            "models": models,
            "sizes": self.sizes.to_json(),
            "build": build_settings(self.name, self.files, self.board, self.external),
        }

    def write(self, out_dir, *, tar: bool = False) -> Path:
        """Write the group's artifact (:func:`aot.export.write_artifact`)."""
        return write_artifact(out_dir, self.name, self.files, self.metadata(), tar=tar)


def group_models(models, name: str = "models") -> CompiledGroup:
    """Several compiled models as one group that shares a single workspace,
    sized to the largest model's need (``name_workspace``), run one model at
    a time.  Each model keeps its constants, state, kernels and interface
    under its own C prefix (its ``name``); its entry file is generated again
    to use the shared array.

    Refused: fewer than two models, models compiled for different targets or
    boards, two models (or a model and the group) with one name, models for
    this machine's LLVM JIT (no artifact).  The group must fit the board:
    its RAM is the shared workspace plus every model's state and caller
    buffers, its flash every model's constants and code."""
    models = list(models)
    entry.check_name(name)
    if len(models) < 2:
        raise CompileError(f"a model group needs two or more models, got {len(models)}: "
                           "compile one model with compile_model")
    first = models[0]
    for m in models[1:]:
        where = (m.board.tag if m.board else None), str(m.target)
        if where != ((first.board.tag if first.board else None), str(first.target)):
            raise CompileError(
                f"the models of group {name!r} disagree on the target: {first.name} was "
                f"compiled for {_where(first)}, {m.name} for {_where(m)}; compile every model "
                "of a group for one board or target")
    _check_group_names(name, [(m.name, m.source) for m in models])
    if first.is_jit:
        raise CompileError("not supported yet: a model group for this machine's LLVM JIT "
                           "(no artifact); compile the group for a board or a 'c' target")
    files: dict[str, str | bytes] = {}
    owner: dict[str, str] = {}
    members = []
    external: list[dict] = []
    split = any(needs_linker_script(m.plan) for m in models)
    shared_regions = _group_regions(name, models) if split else {}
    for m in models:
        generated = entry.generate(
            m.name, m.graph, list(m.graph.annotations.groups), m.kernels, m.plan,
            target=str(m.target), board=m.board.tag if m.board else None,
            version=__version__, target_hash=m.target.digest(),
            shared_workspace=f"{name}_workspace", shared_regions=name if split else None,
            patches=m.patches)
        own = {**m.files, **{p: t for p, t in generated.files.items() if p in m.files}}
        # The RPC descriptor defines the one aot_rpc_model: not for a group yet.
        own.pop(f"codegen/{m.name}_rpc.c", None)
        # One script for the group: the models' would declare the same memories.
        own.pop(f"codegen/{m.name}_regions.ld", None)
        for path, text in own.items():
            # The kernels' support headers are the same for every model of one
            # target; any other file is one model's (its prefix names it).
            if path in files and files[path] != text:
                raise CompileError(
                    f"the models {owner[path]!r} and {m.name!r} of group {name!r} both "
                    f"generate {path}: rename one (e.g. {m.name!r} -> {m.name + 'x'!r}) so "
                    "that neither name is the other's followed by '_kernels_<i>' or "
                    "'_llvm_helpers', and compile both with the same kernel library")
            files[path] = text
            owner.setdefault(path, m.name)
        members.append(dataclasses.replace(m, files=own))
        external += [e for e in m.external if e not in external]
    files.update(entry.group_files(
        name, [(m.name, m.graph.name, m.sizes.workspace) for m in models],
        alignment=workspace_alignment(first.target), target=str(first.target),
        board=first.board.tag if first.board else None, version=__version__,
        regions=shared_regions))
    if split:
        files[f"codegen/{name}_regions.ld"] = group_linker_script(
            name, {m.name: m.plan for m in models}, first.board)
    codes = [m.sizes.code for m in models]
    sizes = Sizes(workspace=max(m.sizes.workspace for m in models),
                  constants=sum(m.sizes.constants for m in models),
                  state=sum(m.sizes.state for m in models),
                  io=sum(m.sizes.io for m in models),
                  ram_constants=sum(m.sizes.ram_constants for m in models),
                  code=None if None in codes else sum(codes),
                  code_note=next((m.sizes.code_note for m in models if m.sizes.code is None),
                                 ""))
    if first.board is not None:
        check_group_fits_board(name, {m.name: m.sizes for m in models}, sizes, first.board)
    return CompiledGroup(name, members, first.target, first.board, files, sizes, external)


def _group_regions(name: str, models) -> dict[str, tuple[int, int | None]]:
    """``{region: (bytes, speed)}`` of a group's shared arrays outside ram: each
    the largest model's bytes there.  Refused: models whose stacks are in
    different memories, and a memory that cannot hold the shared array, every
    model's constants copied there and the stack."""
    stacks = {m.plan.stack_region or "ram" for m in models}
    if len(stacks) > 1:
        raise CompileError(f"the models of group {name!r} put the stack in different "
                           f"memories ({', '.join(sorted(stacks))}): give every model the same "
                           "--memory-regions")
    mem = models[0].board.memory
    shared: dict[str, tuple[int, int | None]] = {}
    used = {r for m in models for r in (*m.plan.regions, *m.plan.region_constants,
                                        m.plan.stack_region) if r and r != "ram"}
    for region in sorted(used):
        array = max(m.plan.regions.get(region, 0) for m in models)
        consts = {m.name: m.plan.region_constants.get(region, 0) for m in models}
        stack = next((m.plan.stack_bytes for m in models if m.plan.stack_region == region), 0)
        need = array + sum(consts.values()) + stack
        length = mem.pool(region).length
        if need > length:
            each = ", ".join(f"{n} {b}" for n, b in consts.items() if b)
            raise MemoryRegionError(
                f"model group {name!r} needs {need} bytes of {region} (shared workspace "
                f"array {array}, constants copied there {sum(consts.values())}"
                + (f": {each}" if each else "") + (f", stack {stack}" if stack else "")
                + f") but {region} has {length}: give the models smaller sizes there")
        if array:
            shared[region] = (array, next(m.plan.region_speeds.get(region) for m in models
                                          if region in m.plan.regions))
    return shared


def _check_group_names(group: str, named) -> None:
    """Refuse two models (``(name, source)``) of ``group`` with one C prefix, or
    a model named like the group; names are also macro prefixes (upper case),
    so compare them ignoring case."""
    seen: dict[str, str] = {group.lower(): f"the group's name {group!r}"}
    for name, source in named:
        entry.check_name(name)
        if name.lower() in seen:
            raise CompileError(
                f"the name {name!r} of {source} clashes with {seen[name.lower()]}: every "
                "model of a group needs its own C prefix (names=[...] in compile_group, "
                "--model-name per model on the command line), and none may be the group's "
                "name (--name)")
        seen[name.lower()] = f"the model {name!r} ({source})"


def _where(m: CompiledModel) -> str:
    return f"the board {m.board.tag}" if m.board is not None else f"{str(m.target)!r}"


def compile_group(models, options: CompileOptions | Target | Board | str = "host/native", *,
                  names=None, name: str = "models", **keywords) -> CompiledGroup:
    """Compile several models (paths or :class:`Graph` s) with one target or board's
    ``options`` (as :func:`compile_model` takes them, without ``name`` and
    ``memory_budget``) into a group sharing one workspace (:func:`group_models`).

    ``names`` are their C prefixes, one per model; by default each model
    file's stem (``kws.tflite`` -> ``kws``) or graph name as a C identifier.
    ``name`` is the group's prefix (its header, ``name_workspace``).  The models'
    constants stay in flash (no default placement: each model alone would take the RAM
    the others need).
    """
    models = list(models)
    if names is None:
        names = [_default_name(m) for m in models]
    names = list(names)
    if len(names) != len(models):
        raise CompileError(f"{len(names)} names for {len(models)} models: give one name per "
                           "model")
    if "name" in keywords:
        raise CompileError("compile_group takes names=[...] (one per model) and name= (the "
                           "group's), not one model name")
    options = _as_options(options, keywords)
    if options.memory_budget is not None:
        raise CompileError("not supported yet: memory_budget for a model group (the models "
                           "share one workspace); compile each model alone to use it")
    entry.check_name(name)
    _check_group_names(name, [(n, str(m.name if isinstance(m, Graph) else m))
                              for m, n in zip(models, names)])
    return group_models([compile_model(m, dataclasses.replace(options, name=n,
                                                              placement=False))
                         for m, n in zip(models, names)], name)


def _default_name(model) -> str:
    stem = model.name if isinstance(model, Graph) else Path(model).stem
    return c_identifier(stem).lower()


def _llvm_files(name: str, kernels, module: LLVMModule,
                support: dict[str, str]) -> dict[str, str | bytes]:
    """The artifact's files made by LLVM for a microcontroller: one object per
    loop-IR kernel (``codegen/P_kernels_<i>.o``, the symbol the entry function
    calls; the support headers' helpers are linked into it as bitcode) and,
    when the kernels call other C (``import_c`` code), ``codegen/P_llvm_helpers.c``
    defining each function as ``P_c_<name>`` (compiled by the board's compiler
    like the entry function).  A kernel of an external codegen keeps its C
    file ``codegen/P_kernels_<i>.c`` beside the objects."""
    files: dict[str, str | bytes] = {}
    if any(k.func is None for k in kernels):
        for header, htext in support.items():
            files[f"codegen/{header}"] = htext
    rename = {}
    if module.c_externals:  # C of import_c code; the headers' helpers are bitcode
        prefix = f"{name}_c_"
        from aot.codegen.llvm_jit import helper_source
        text, headers = helper_source(module, prefix, module.c_externals)
        files[f"codegen/{name}_llvm_helpers.c"] = (
            f"/* Generated by aot: the C helpers the LLVM objects of {name} call\n"
            f"   ({', '.join(sorted(module.c_externals))}), each as {prefix}<helper>. */\n"
            # A wrapper whose pixel count is an argument lets GCC imagine a
            # count so large that an index overflows and warn (-Werror); the
            # kernels pass the counts of their own loops.
            "#if defined(__GNUC__) && !defined(__clang__)\n"
            "#pragma GCC diagnostic ignored \"-Waggressive-loop-optimizations\"\n"
            "#endif\n" + text)
        for header, htext in headers:
            files[f"codegen/{header}"] = htext
        rename = {n: prefix + n for n in module.c_externals}
    objects = module.objects(rename)
    for i, k in enumerate(kernels):
        if k.func is None:
            files[f"codegen/{name}_kernels_{i}.c"] = k.source
        else:
            files[f"codegen/{name}_kernels_{i}.o"] = objects[k.name]
    return files


def _bind_inplace(kernel, plan: MemoryPlan):
    """``kernel`` with the in-place pairs of ``plan`` bound (their arguments share a buffer)."""
    names = [p.tensor for p in kernel.params]
    aliased = {(out, src) for out, src, how in plan.aliases if how in ("in place", "overlap")}
    if not any((names[j], names[i]) in aliased for i in range(len(names))
               for j in range(len(names))):
        return kernel  # the plan shares none of its arguments: no fact to read
    allowed = set(getattr(kernel, "inplace_allowed", ()))
    allowed |= {(i, j) for i, j, _ in getattr(kernel, "overlap_allowed", ())}
    if not allowed:
        return kernel
    return kernel.with_inplace([(i, j) for i, j in sorted(allowed)
                                if (names[j], names[i]) in aliased])


def _port_cflags(board: Board | None) -> list[str]:
    """The flags the board's runtime port builds model code with (its port.mk's
    ``AOT_PORT_CFLAGS``: e.g. picolibc's specs on RISC-V, without which the
    cross compiler finds no C library headers)."""
    port = runtime_port(board) if board is not None else None
    return port_settings(port).get("AOT_PORT_CFLAGS", "").split() if port else []


def _code_bytes(files: dict[str, str], name: str, target: Target,
                board: Board | None, external=(), cache_dir: Path | None = None
                ) -> tuple[int | None, str, dict[str, int]]:
    """Bytes of executable code (``.text*`` sections) of the model library, compiled
    as firmware builds compile it (the board's toolchain, optimisation and flags; the
    host compiler, -O2, for host targets), or None and why; and, compiled as a
    board's firmware, each generated file's bytes by its path in the artifact
    (else ``{}``).

    The files compile in parallel; with ``cache_dir`` their objects are kept there
    (:class:`aot.codegen.cc.ObjectStore`), keyed by the compiler, the flags, the
    source and every header the artifact and the external libraries hold.
    A toolchain that is missing or cannot compile here (a cross gcc without the
    C library headers for this CPU) leaves the size unknown rather than failing
    the compilation: the generated C itself is checked by the builds that use it.
    """
    if board is not None:
        cc = CCompiler.for_toolchain(board.toolchain)
    elif runs_on_host(target):
        try:
            cc = CCompiler.host()
        except BuildError as err:
            return None, str(err), {}
    else:
        return None, "no toolchain for a bare target", {}
    missing = cc.missing()
    if missing is not None:
        return None, f"{missing} is not installed", {}
    store = ObjectStore(cache_dir) if cache_dir is not None else None
    variables = firmware_variables(board) if board is not None else None
    command = None
    if variables is not None:  # compiled as the board's firmware project compiles it
        command = firmware_command(variables, external_build({"external": list(external)})[1])
    try:
        if command is not None:
            return _firmware_code_bytes(files, name, board, command, external, store)
        return _library_code_bytes(files, name, cc, board, external, store), "", {}
    except BuildError as err:
        errors = [line for line in str(err).splitlines() if "error" in line]
        reason = errors[0].split("error:", 1)[-1].strip() if errors else "failed"
        return None, f"{Path(cc.cc).name} cannot compile here: {reason}", {}


def _firmware_code_bytes(files: dict[str, str | bytes], name: str, board: Board,
                         command: FirmwareCommand, external, store
                         ) -> tuple[int, str, dict[str, int]]:
    """The code size compiled as the board's firmware project compiles it
    (:class:`aot.codegen.cc.FirmwareCommand`): the artifact in ``model/``, the
    runtime's headers in ``runtime/include/``, from the project's root, so that
    ``aot build`` can put the kept objects into the project; as
    :func:`_code_bytes` returns it."""
    with tempfile.TemporaryDirectory(prefix="aot-size-") as tmp:
        root = Path(tmp)
        texts = {f"model/{rel}": text for rel, text in files.items()}
        for rel, src in runtime_files(runtime_port(board)).items():
            if rel.startswith("runtime/include/"):
                texts[rel] = src.read_bytes()
        for rel, text in texts.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(text if isinstance(text, bytes) else text.encode())
        sources = [f"model/{p}" for p in library_sources(files, name)]
        sources += [str(Path(lib["root"]) / s) for lib in external for s in lib["sources"]]
        objects = sum(_llvm_text_bytes(data) for rel, data in files.items()
                      if rel.endswith(".o"))
        each = firmware_text_bytes(command, sources, cwd=root, store=store)
        return sum(each.values()) + objects, "", {
            src.removeprefix("model/"): n for src, n in each.items() if src.startswith("model/")}


def _library_code_bytes(files: dict[str, str | bytes], name: str, cc: CCompiler,
                        board: Board | None, external, store) -> int:
    """The code size compiled from the artifact's root with the code flags alone
    (host targets, and boards the runtime has no port for)."""
    headers = hashlib.sha256()
    with tempfile.TemporaryDirectory(prefix="aot-size-") as tmp:
        root = Path(tmp)
        for rel, text in sorted(files.items()):
            if isinstance(text, str):
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text)
                if not rel.endswith(".c"):
                    headers.update(f"{rel}\0{text}\0".encode())
        # Relative to the artifact: the same file compiles under the same key
        # whichever temporary folder holds it.
        sources: list[str | Path] = list(library_sources(files, name))
        flags = ["-Iinclude", *_port_cflags(board)]
        for lib in external:  # the external codegens' library sources count as model code
            sources += [Path(lib["root"]) / s for s in lib["sources"]]
            flags += [f"-I{Path(lib['root']) / d}" for d in lib["include_dirs"]]
            flags += [f"-D{d}" for d in lib["defines"]]
            for d in lib["include_dirs"]:
                for h in sorted((Path(lib["root"]) / d).rglob("*.h")):
                    headers.update(f"{h}\0".encode() + h.read_bytes() + b"\0")
        objects = sum(_llvm_text_bytes(data) for rel, data in files.items()
                      if rel.endswith(".o"))
        return cc.text_bytes(sources, flags, cwd=root, headers_digest=headers.hexdigest(),
                             store=store) + objects


def _llvm_text_bytes(obj: bytes) -> int:
    from aot.codegen.llvm_object import text_bytes  # llvmlite: only for LLVM's objects
    return text_bytes(obj)
