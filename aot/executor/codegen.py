"""AOT executor code generation: the entry function, the header and the RPC descriptor.

Input: the optimized graph, its fused groups in execution order, one
:class:`aot.kernels.Kernel` per group that is not a view, and the memory
plan.  Output: C text per file of the artifact (:func:`generate`):

* ``include/P.h``: input/output structs, ``P_run``, ``P_run_with_workspace``,
  ``P_reset`` and every size as a macro;
* ``codegen/P.c``: the entry function, one plain call per kernel in order,
  each argument a caller pointer or ``workspace + planned offset`` (a view
  is its source's bytes, so it costs no code); state tensors as static
  zero-initialized arrays; constant arguments as static tables;
* ``codegen/P_kernels_<i>.c``: the kernels' own translation units (for a
  ``c`` target; an ``llvm`` target's kernels are objects, :mod:`aot.compile`);
* ``codegen/P_rpc.c``: the ``aot_rpc_model`` descriptor for RPC firmware,
  with the whole model and each kernel alone (``P_run_kernel``: the same
  call as in the entry function, for timing kernels one by one).

What the entry function does is decided once, as loop IR: :func:`lower_entry`
gives ``P_entry`` (an :mod:`aot.tir` ``PrimFunc``) whose parameters are the
workspace, the board regions' arrays, the caller's ports, the state and the
constant arguments (:class:`Param`), and whose body calls the kernels (an
``extern`` call of each kernel's symbol, its status returned unless 0) with
:class:`~aot.tir.expr.Address` arguments (a byte offset into a parameter, as the
kernel's element type), between ``memcpy`` builtins; and one ``P_kernel_<i>``
per kernel for ``P_run_kernel``.  :mod:`aot.codegen.c` prints them into the
entry file, whose template calls them; for the ``llvm`` target of this machine
:mod:`aot.codegen.llvm` emits ``P_entry`` into the kernels' module and the JIT
(:mod:`aot.executor.jit`) calls it.  One lowering, two printers: the C and the
JIT cannot disagree about the entry.

A patch stage (a group of kind ``"patches"``, :mod:`aot.executor.patches`)
is one loop nest over the tiles (:func:`_patch_loop`) calling the stage's
kernels (lowered once for the patch shapes, :class:`PatchCode`) between a
copy-in, fills and a copy-out.  A stream stage (the same kind of group with a
:class:`StreamCode`, :mod:`aot.executor.streams`) is one loop over bands of rows
(:func:`_stream_loop`) that slides each window, copies the input's new rows in,
calls each kernel (lowered once for the band shapes) on fixed runs of rows and fills
the rows outside the image.  Neither stage's kernels are in ``P_run_kernel``'s
table (they run only inside the loop).

Workspace layout: the planned buffers from offset 0, then (when a kernel
asks for scratch) one scratch area, shared by all kernels since only one
runs at a time, at the first aligned offset after the plan.

Kernels receive ``restrict`` pointers, so no two arguments of a call may
share bytes, except an in-place alias of the plan (``(y, x, "in place")``:
the call gets one address for both) that the kernel writing ``y`` lists in
``Kernel.inplace`` (declared without ``restrict``, loop nest checked by
:mod:`aot.kernels.inplace`).  :func:`aot.compile.compile_model` plans with
the kernels' consent; :func:`generate` checks every call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from aot.codegen.c import C_TYPES, NP_TYPES, c_identifier, canonical_target, print_functions
from aot.codegen.jinja import templates
from aot.errors import AotError
from aot.executor.regions import constant_section
from aot.ir import Graph, Tensor
from aot.passes import annotations
from aot.tir import (Address, Buffer, Comment, Evaluate, For, FuncRef, IfThenElse, LetStmt,
                     PrimFunc, Return, Select, Stmt, Store, Var, call_extern, call_memory, const,
                     decl_buffer)
from aot.tir.expr import max_, min_
from aot.tir.stmt import seq


def _template(name: str):
    """One of aot/executor/templates (the entry function, header, RPC descriptor)."""
    return templates("aot.executor").get_template(name)


_AOT_DTYPES = {"int8": "AOT_DTYPE_INT8", "uint8": "AOT_DTYPE_UINT8",
               "int16": "AOT_DTYPE_INT16", "int32": "AOT_DTYPE_INT32",
               "float32": "AOT_DTYPE_FLOAT32", "int64": "AOT_DTYPE_INT64",
               "bool": "AOT_DTYPE_UINT8"}
_MAX_RPC_NAME = 63  # AOT_MAX_NAME in runtime_c/include/aot/config.h

#: What the generated ``P_run`` / ``P_run_kernel`` return besides 0 (success);
#: the RPC reports the value with AOT_ERR_RUN_FAILED (runtime_c/include/aot/model.h).
STATUS_NO_KERNEL = -1
STATUS_CONSTANTS_NOT_COPIED = -2
STATUS_CORES_NOT_STARTED = -3
RUN_STATUSES = {
    STATUS_NO_KERNEL: "there is no kernel with that index (P_run_kernel)",
    STATUS_CONSTANTS_NOT_COPIED: "the start-up code did not copy the model's constants into "
        "their fast memory (--memory-regions ...+const): it must process the .aot_copy_table",
    STATUS_CORES_NOT_STARTED: "the board's port started fewer cores than the model is placed "
        "on (aot_cores_start() in runtime_c/src/cores.c)",
}

#: The core that runs the other half of every parallel step (a model placed on two cores).
WORKER_CORE = 1


class CodegenError(AotError):
    """The executor cannot generate code for this model or name."""


@dataclass(frozen=True)
class Port:
    """One model input or output as the generated C sees it."""

    tensor: Tensor
    role: str            # "input" | "output"
    index: int
    ident: str           # struct member name
    macro: str           # P_INPUT_<IDENT>, prefix of the _BYTES/_OFFSET macros
    offset: int | None   # workspace offset with io_in_workspace, else None

    @property
    def tensor_name(self) -> str:
        return _comment(self.tensor.name)

    @property
    def ctype(self) -> str:
        return C_TYPES[self.tensor.dtype]

    @property
    def nbytes(self) -> int:
        return self.tensor.type.nbytes

    @property
    def count(self) -> int:
        return max(self.tensor.type.size, 1)

    @property
    def shape(self) -> str:
        return "[" + "][".join(map(str, self.tensor.shape)) + "]" if self.tensor.shape else ""

    @property
    def quant(self) -> str:
        q = self.tensor.quant
        return f"scale {q.scales()[0]:.9g} zero point {int(q.zero_points()[0])}" \
            if q is not None and not q.is_per_axis else ""

    @property
    def dims(self) -> list[int]:
        return list(self.tensor.shape) or [1]

    @property
    def aot_dtype(self) -> str:
        return _AOT_DTYPES[self.tensor.dtype]

    @property
    def rpc_name(self) -> str:
        return self.ident[:_MAX_RPC_NAME]


@dataclass(frozen=True)
class RpcTensor:
    """One entry of an RPC descriptor's tensor table (``aot_tensor_t``)."""

    name: str
    dtype: str
    role: str            # "input" | "output"
    writable: bool       # the host may write it
    dims: tuple[int, ...]
    nbytes: int
    symbol: str          # the C array holding it

    @property
    def aot_dtype(self) -> str:
        return _AOT_DTYPES[self.dtype]

    @property
    def role_macro(self) -> str:
        return "AOT_ROLE_INPUT" if self.role == "input" else "AOT_ROLE_OUTPUT"


def rpc_tables(prefix: str, model_name: str, target_hash: str, tensors, kernels,
               run: str = "NULL") -> str:
    """The C of an ``aot_rpc_model`` descriptor's tables: ``tensors``
    (:class:`RpcTensor`), ``kernels`` (``(rpc name, C function)`` pairs) and
    the model record naming ``run``.  Model artifacts and tuning images both
    use it, so the descriptor's layout is written once."""
    for name, _ in kernels:
        if len(name) > _MAX_RPC_NAME:
            raise CodegenError(f"RPC kernel name {name!r} is longer than {_MAX_RPC_NAME}")
    return _template("rpc_tables.c.j2").render(
        prefix=prefix, model_name=model_name, target_hash=target_hash, tensors=list(tensors),
        kernels=list(kernels), run=run)


@dataclass(frozen=True)
class _Array:
    """A static array in the entry file: a state tensor or a constant argument."""

    tensor: Tensor
    ident: str
    values: str = ""

    @property
    def tensor_name(self) -> str:
        return _comment(self.tensor.name)

    @property
    def ctype(self) -> str:
        return C_TYPES[self.tensor.dtype]

    @property
    def count(self) -> int:
        return max(self.tensor.type.size, 1)

    @property
    def nbytes(self) -> int:
        return self.tensor.type.nbytes

    @property
    def zero(self) -> int:
        """The value a fresh state holds (``Tensor.fresh_value``), as the
        reference interpreter and TFLM start from."""
        return self.tensor.fresh_value

    @property
    def start_values(self) -> np.ndarray | None:
        """The state's start values when the model gives some other than its
        fresh value (``Tensor.fresh_value``) everywhere (None otherwise)."""
        data = self.tensor.data
        if self.tensor.kind != "variable" or data is None or np.all(data == self.zero):
            return None
        return np.asarray(data)

    @property
    def start(self) -> str:
        """C initializer of :attr:`start_values` ("" without them)."""
        return "" if self.start_values is None else _c_values(self.tensor)


@dataclass(frozen=True)
class Layout:
    """The workspace layout: the plan's buffers, then the shared kernel scratch."""

    plan_bytes: int
    scratch_offset: int
    scratch_bytes: int
    alignment: int

    @property
    def workspace_bytes(self) -> int:
        return self.scratch_offset + self.scratch_bytes if self.scratch_bytes \
            else self.plan_bytes


def layout(plan, kernels) -> Layout:
    """Where the scratch goes: the first aligned offset after the planned buffers."""
    scratch = max((k.scratch_bytes for k in kernels), default=0)
    a = plan.alignment
    offset = -(-plan.workspace_bytes // a) * a
    return Layout(plan.workspace_bytes, offset, scratch, a)


def region_array(name: str, region: str) -> str:
    """The C array of the model's buffers in a board region (``P_region_<r>``)."""
    return f"{name}_region_{region}"


def kernel_file(name: str, index: int) -> str:
    """The artifact path of model ``name``'s kernel number ``index`` (its C)."""
    return f"codegen/{name}_kernels_{index}.c"


def linked_kernels(kernels, entry: Entry) -> list[tuple[int, object]]:
    """The kernels ``entry``'s functions call, each with its number (its file,
    :func:`kernel_file`): the groups' ``kernels`` in order, then the split groups'
    parts' (``entry.part_kernels``) numbered after them.  A split group's whole
    kernel is left out (its number unused): its parts run in its place, so no
    build compiles or links it."""
    every = [*kernels, *entry.part_kernels]
    return [(i, k) for i, k in enumerate(every) if k.name not in entry.split_kernels]


def check_name(name: str) -> str:
    """``name`` if it is a usable C prefix (an identifier, not reserved), else CodegenError."""
    if not name or c_identifier(name) != name or name.startswith("aot_rpc"):
        raise CodegenError(f"--name {name!r} is not a usable C identifier prefix: use letters, "
                           "digits and '_', not starting with a digit (for example 'kws')")
    return name


def ports(name: str, graph: Graph, plan) -> tuple[list[Port], list[Port]]:
    """The model inputs and outputs with unique C identifiers, in graph order."""
    used: set[str] = set()
    result = []
    for role, tensors in (("input", graph.inputs), ("output", graph.outputs)):
        group = []
        for k, t in enumerate(tensors):
            ident = _unique(c_identifier(t.name).lower(), used)
            b = plan.buffer_of(t)
            offset = None if b.external else b.offset
            macro = f"{name.upper()}_{role.upper()}_{ident.upper()}"
            group.append(Port(t, role, k, ident, macro, offset))
        result.append(group)
    return result[0], result[1]


def _unique(ident: str, used: set[str]) -> str:
    base, n = ident, 1
    while ident in used:
        ident = f"{base}_{n}"
        n += 1
    used.add(ident)
    return ident


def _comment(text: str) -> str:
    return text.replace("*/", "* /")


def _c_values(t: Tensor) -> str:
    data = np.asarray(t.data).reshape(-1)
    if t.dtype == "float32":
        if not np.isfinite(data).all():
            raise CodegenError(f"constant {t.name!r} holds inf or nan; a kernel must embed it")
        items = [f"{float(v)!r}f" for v in data.astype(np.float32)]
    elif t.dtype == "int64":
        items = [f"INT64_C({int(v)})" for v in data]
    else:
        items = [str(int(v)) for v in data]
    lines = [", ".join(items[i:i + 12]) for i in range(0, len(items), 12)]
    return ",\n".join("    " + line for line in lines) or "    0"


@dataclass(frozen=True)
class PatchCode:
    """What the entry function needs of a patch stage: the stage
    (:class:`aot.executor.patches.PatchStage`), its layers on the patch shapes
    (``graph``, optimized: its groups are the kernels' order) with their own memory
    ``plan``, and ``buffer``, the tensor the model's plan places the patch plan's bytes
    in during the stage's step."""

    stage: object
    graph: Graph
    plan: object
    buffer: Tensor

    def to_json(self) -> dict:
        s = self.stage
        return {"layers": [n.name for n in s.nodes], "grid": list(s.grid),
                "patches": len(s.patches()), "tile": list(s.tile),
                "buffer_bytes": self.buffer.type.nbytes, "extra_macs": s.extra_macs}

    def summary(self) -> str:
        s = self.stage
        return (f"patches: the first {len(s.nodes)} layers in {s.grid[0]}x{s.grid[1]} "
                f"patches of {s.tile[0]}x{s.tile[1]} output positions, "
                f"{self.buffer.type.nbytes} bytes of patch buffers, "
                f"{s.extra_macs} MACs recomputed ({s.extra_macs / max(s.macs, 1):+.1%} "
                "of the stage)")


@dataclass(frozen=True)
class StreamCode:
    """What the entry function needs of a stream stage: the stage
    (:class:`aot.executor.streams.StreamStage`), its layers on the band shapes
    (``graph``, optimized: its groups are the kernels' order), where each of that graph's
    tensors lives (``where``, :func:`aot.executor.streams.band_graph`), each window's
    offset in ``buffer`` (by the stage tensor's name), and ``buffer``, the tensor the
    model's plan places the windows in during the stage's step."""

    stage: object
    graph: Graph
    where: dict
    offsets: dict[str, int]
    buffer: Tensor

    def to_json(self) -> dict:
        s = self.stage
        return {"kind": "stream", "layers": [n.name for n in s.nodes], "band_rows": s.band,
                "bands": s.bands - s.first_band, "buffer_bytes": self.buffer.type.nbytes,
                "extra_macs": s.extra_macs, "copy_bytes": s.copy_bytes}

    def summary(self) -> str:
        s = self.stage
        return (f"stream: the first {len(s.nodes)} layers in bands of {s.band} output rows "
                f"({s.bands - s.first_band} bands), {self.buffer.type.nbytes} bytes of row "
                f"windows, {s.extra_macs} MACs on rows outside the image "
                f"({s.extra_macs / max(s.macs, 1):+.1%} of the stage), {s.copy_bytes} bytes "
                "copied or filled")


def _fill_bytes(st) -> bytes:
    return np.array(st.fill if st.fill is not None else 0, st.tensor.type.np_dtype).tobytes()


def _tensor_map(graph: Graph) -> dict[str, Tensor]:
    return {t.name: t for t in graph.tensors()}


def _check_overlap(k, tensors: dict[str, Tensor], plan) -> None:
    """Two arguments of one call share bytes (one address, or overlapping
    workspace ranges) only as a pair the kernel accepts (``Kernel.inplace``:
    declared without ``restrict``, loop nest checked)."""
    accepted = set(getattr(k, "inplace", ()))
    seen: list[tuple[int, object, int, int]] = []
    for j, p in enumerate(k.params):
        t = tensors[p.tensor]
        if t.kind not in ("input", "activation"):
            continue
        b = plan.buffer_of(t)
        lo = b.offset if b.offset is not None else 0
        for i, other, olo, ohi in seen:
            shared = other is b or (b.offset is not None and other.offset is not None
                                    and other.region == b.region
                                    and olo < lo + t.type.nbytes and lo < ohi)
            writes = (k.params[i].role, p.role) != ("input", "input")  # readers may share
            if shared and writes and (i, j) not in accepted:
                raise CodegenError(
                    f"the plan puts {k.params[i].tensor!r} and {p.tensor!r} on shared bytes, "
                    f"but kernel {k.name} declares them restrict: plan with the kernels' "
                    "consent (compile_model does) or inplace=False")
        seen.append((j, b, lo, lo + t.type.nbytes))


# -- the entry function as loop IR ----------------------------------------------------
@dataclass(frozen=True)
class Param:
    """One parameter of the entry functions: ``kind`` is ``workspace``, ``region``
    (``name`` is the C array of the board region), ``input``/``output`` (``name`` is
    the port's struct member), ``state`` or ``constant`` (``name`` is the entry file's
    array); ``buffer`` is the parameter in the loop IR."""

    kind: str
    name: str
    buffer: Buffer


@dataclass(frozen=True)
class Entry:
    """The model's entry function lowered to loop IR (:func:`lower_entry`).

    ``run`` runs the whole model (``P_run_with_workspace`` calls it, the LLVM JIT
    calls it); ``kernels`` are ``P_run_kernel``'s cases, each kernel outside a patch
    or stream stage alone with the copies its ports need, named by ``rpc_kernels``.
    Every function takes ``params`` in order, none ``restrict`` (a caller's buffer
    may be the workspace's own bytes)."""

    run: PrimFunc
    kernels: tuple[PrimFunc, ...]
    rpc_kernels: tuple[str, ...]
    params: tuple[Param, ...]
    inputs: list[Port]
    outputs: list[Port]
    layout: Layout
    states: tuple[_Array, ...]
    constants: tuple[_Array, ...]
    tasks: tuple[PrimFunc, ...] = ()        # core 1's side of each parallel step
    part_kernels: tuple = ()                # the split groups' parts' kernels they call
    # The split groups' whole kernels by name, each with its parts (aot.kernels.parts),
    # which run in its place: nothing calls the whole kernel.
    split_kernels: dict[str, tuple] = field(default_factory=dict)

    @property
    def constant_arg_bytes(self) -> int:
        return sum(c.nbytes for c in self.constants)

    @property
    def state_bytes(self) -> int:
        return sum(s.nbytes for s in self.states)


@dataclass(frozen=True)
class _Ptr:
    """Where the entry function finds a tensor: ``offset`` bytes into ``buffer`` (a
    parameter), as ``dtype`` elements; ``caller`` when the buffer is a model port's."""

    buffer: Buffer
    offset: int
    dtype: str
    writable: bool
    caller: bool = False

    def at(self, extra=0, dtype: str | None = None) -> Address:
        """The address ``extra`` more bytes on (an int or an int32 expression)."""
        offset = self.offset + extra if isinstance(extra, int) else (
            extra if self.offset == 0 else self.offset + extra)
        return Address(self.buffer, offset, dtype or self.dtype, "rw" if self.writable else "r")


class _Bindings:
    """The entry function's parameters, made as tensors are bound to them."""

    def __init__(self, name: str, plan, inputs: list[Port], outputs: list[Port],
                 region_owner: str, lay: Layout) -> None:
        self.name = name
        self.plan = plan
        self.region_owner = region_owner
        self.workspace = decl_buffer((max(lay.workspace_bytes, 1),), "uint8", "ws")
        self.regions: dict[str, Buffer] = {}
        self.ports = {id(p.tensor): (p, decl_buffer((p.count,), p.tensor.dtype,
                                                    f"{'in' if p.role == 'input' else 'out'}_"
                                                    f"{p.ident}")) for p in inputs + outputs}
        # With io_in_workspace the ports are bound to the workspace, not the structs.
        self.caller = {} if plan.io_in_workspace else dict(self.ports)
        self.states: dict[int, tuple[_Array, Buffer]] = {}
        self.constants: dict[int, tuple[_Array, Buffer]] = {}

    def ptr(self, t: Tensor, *, writable: bool) -> _Ptr:
        if t.kind == "variable":
            if id(t) not in self.states:
                ident = f"{self.name}_state_{len(self.states)}"
                self.states[id(t)] = (_Array(t, ident),
                                      decl_buffer((max(t.type.size, 1),), t.dtype, ident))
            # state is the model's own mutable array, whichever way a kernel declares it
            return _Ptr(self.states[id(t)][1], 0, t.dtype, True)
        if t.kind == "constant":
            if writable:
                raise CodegenError(f"a kernel writes the constant tensor {t.name!r}")
            if id(t) not in self.constants:
                ident = f"{self.name}_const_{len(self.constants)}"
                self.constants[id(t)] = (_Array(t, ident, _c_values(t)),
                                         decl_buffer((max(t.type.size, 1),), t.dtype, ident))
            return _Ptr(self.constants[id(t)][1], 0, t.dtype, False)
        b = self.plan.buffer_of(t)
        if not b.external:
            return _Ptr(self.region(b.region), b.offset, t.dtype, writable)
        # A caller buffer holds exactly one graph input or output; views of it share it.
        owner, buffer = next(self.caller[id(m)] for m in b.tensors if id(m) in self.caller)
        if owner.role == "input" and writable:
            raise CodegenError(f"the plan writes {t.name!r} over the caller's input "
                               f"{owner.tensor.name!r}")
        return _Ptr(buffer, 0, t.dtype, writable, caller=True)

    def port(self, p: Port) -> _Ptr:
        return _Ptr(self.ports[id(p.tensor)][1], 0, p.tensor.dtype, p.role == "output",
                    caller=True)

    def region(self, region: str) -> Buffer:
        """The workspace (``""``) or the array of a board region."""
        if not region:
            return self.workspace
        if region not in self.regions:
            self.regions[region] = decl_buffer((max(self.plan.regions[region], 1),), "uint8",
                                               f"region_{region}")
        return self.regions[region]

    def params(self) -> tuple[Param, ...]:
        return (Param("workspace", "ws", self.workspace),
                *(Param("region", region_array(self.region_owner, r), b)
                  for r, b in self.regions.items()),
                *(Param(p.role, p.ident, b) for p, b in self.ports.values()),
                *(Param("state", a.ident, b) for a, b in self.states.values()),
                *(Param("constant", a.ident, b) for a, b in self.constants.values()))


def _call(name: str, args) -> Stmt:
    """Call the kernel ``name``; return its status from the entry function unless 0."""
    status = Var("status", "int32")
    return LetStmt(status, call_extern("int32", name, *args),
                   IfThenElse(status.not_equal(0), Return(status)))


def _kernel_args(k, ptrs: list[_Ptr], lay: Layout, bindings: _Bindings, moves=None) -> list:
    """A kernel's pointer arguments (each moved by ``moves[i]``, an expression, if
    given), then the shared scratch if it asks for some."""
    args = [p.at() if not moves or moves[i] is None else p.at(moves[i])
            for i, p in enumerate(ptrs)]
    if k.scratch_bytes:
        args.append(Address(bindings.workspace, lay.scratch_offset, "uint8", "rw"))
    return args


def _copy(dst: _Ptr, src: _Ptr, nbytes: int, unless_same: bool = False) -> Stmt:
    """``memcpy``; ``unless_same``: skip when the caller passed the workspace's own bytes."""
    copy = Evaluate(call_memory("memcpy", dst.at(), src.at(), nbytes))
    if not unless_same:
        return copy
    caller, own = (src, dst) if src.caller else (dst, src)
    return IfThenElse(caller.at().not_equal(own.at(dtype=caller.dtype)), copy)


def _fill(dst: _Ptr, offset, count, fill: bytes, dtype: str) -> Stmt:
    """Set ``count`` elements from ``offset`` bytes past ``dst`` to the element ``fill``
    (its bytes): one ``memset`` when they are all one byte, else a loop of stores."""
    if len(set(fill)) == 1:
        return Evaluate(call_memory("memset", dst.at(offset, "uint8"), fill[0],
                                    count * len(fill)))
    d, k = Var("d", "handle"), Var("k")
    row = Buffer("d", dtype, (count,), data=d)
    value = np.frombuffer(fill, np.dtype(NP_TYPES[dtype]))[0]
    return LetStmt(d, dst.at(offset, dtype),
                   For(k, 0, count, "serial", Store(row, const(value.item(), dtype), k)))


def _starts(index: Var, starts: tuple[int, ...], tile: int):
    """The tiles' first rows (or columns) as a function of the tile ``index``:
    ``min(index * tile, last)``, as :func:`aot.executor.patches.analyze_stage` places them."""
    if starts != tuple(min(i * tile, starts[-1]) for i in range(len(starts))):
        raise CodegenError(f"patch tiles start at {list(starts)}: not every {tile} rows "
                           "up to the last tile")
    if starts[-1] == (len(starts) - 1) * tile:  # the last tile is not pulled back
        return index * tile
    return min_(index * tile, const(starts[-1]))


def _window(dst: _Ptr, src: _Ptr | None, pt, fill: bytes | None, a, b) -> Stmt:
    """Fill (and with ``src`` copy) one patch's window of the image ``pt.tensor``: row by
    row, the positions inside the image copied, the others set to ``fill``."""
    t = pt.tensor
    item = t.type.np_dtype.itemsize
    (ih, iw), cb = (t.shape[1], t.shape[2]), t.shape[3] * item
    width = pt.cols.size
    i, r, c, lo, hi = Var("i"), Var("r"), Var("c"), Var("lo"), Var("hi")
    outside = (r < 0) | (r >= ih)
    body = []
    if src is not None:
        body.append(IfThenElse(hi > lo, Evaluate(call_memory(
            "memcpy", dst.at((i * width + lo) * cb, "uint8"),
            src.at((r * iw + c + lo) * cb, "uint8"), (hi - lo) * cb))))
    if fill is not None:
        per = cb // len(fill)  # fill elements per position
        body += [_fill(dst, i * (width * cb), lo * per, fill, t.dtype),
                 _fill(dst, (i * width + hi) * cb, (width - hi) * per, fill, t.dtype)]
    lo_value = Select(outside, const(width),
                      Select(c < 0, min_(0 - c, const(width)), const(0)))
    hi_value = Select(outside, const(width),
                      Select(c + width > iw, max_(iw - c, lo), const(width)))
    return For(i, 0, pt.rows.size, "serial",
               LetStmt(r, a * pt.rows.scale + (pt.rows.start + i),
                       LetStmt(c, b * pt.cols.scale + pt.cols.start,
                               LetStmt(lo, lo_value, LetStmt(hi, hi_value, seq(*body))))))


def _patch_loop(code: PatchCode, calls, plan, bindings: _Bindings, lay: Layout) -> Stmt:
    """The patch stage's loop over the output tiles: copy the stage input's window in,
    call the kernels of ``code.graph`` (taken from ``calls`` in order, bound to the patch
    buffers, which the model's plan put at one offset) and fill their outputs' outside
    positions, copy the tile of the last output out."""
    stage, pplan = code.stage, code.plan
    base = plan.buffer_of(code.buffer)
    if base.external or base.region:
        raise CodegenError("the patch buffers must be in the main workspace")
    by_name = {pt.tensor.name + "_patch": pt for pt in stage.tensors.values()}
    tensors = _tensor_map(code.graph)

    def ptr(t: Tensor, writable: bool) -> _Ptr:
        return _Ptr(bindings.workspace, base.offset + pplan.buffer_of(t).offset, t.dtype,
                    writable)

    th, tw = stage.tile
    pr, pc = Var("pr"), Var("pc")
    a, b = Var("a"), Var("b")
    x_in, y_out = stage.tensors[id(stage.input)], stage.tensors[id(stage.output)]
    px, py = code.graph.inputs[0], code.graph.outputs[0]
    x_fill = x_in.fill if x_in.fill is not None else 0
    body = [_window(ptr(px, True), bindings.ptr(stage.input, writable=False), x_in,
                    np.array(x_fill, x_in.tensor.type.np_dtype).tobytes(), a, b)]
    for group in code.graph.annotations.groups:
        if group.kind == "view":
            raise CodegenError("a view inside a patch stage is not supported yet")
        _, k = next(calls)
        ptrs = [ptr(tensors[p.tensor], p.role == "output") if
                tensors[p.tensor].kind in ("input", "activation")
                else bindings.ptr(tensors[p.tensor], writable=False) for p in k.params]
        _check_overlap(k, tensors, pplan)
        body += [Comment(f"{group.name} on a patch"),
                 _call(k.name, _kernel_args(k, ptrs, lay, bindings))]
        for t in group.outputs(code.graph):
            pt = by_name.get(t.name)  # None: a window of a patch (its fills come along)
            if pt is not None and pt.fill is not None:
                body.append(_window(ptr(t, True), None, pt,
                                    np.array(pt.fill, t.type.np_dtype).tobytes(), a, b))
    cb = stage.output.shape[3] * stage.output.type.np_dtype.itemsize
    i = Var("i")
    dst, out = bindings.ptr(stage.output, writable=True), ptr(py, False)
    body.append(For(i, 0, th, "serial", Evaluate(call_memory(
        "memcpy", dst.at(((a + i) * stage.output.shape[2] + b) * cb, "uint8"),
        out.at(((i - y_out.rows.start) * y_out.cols.size - y_out.cols.start) * cb, "uint8"),
        tw * cb))))
    return For(pr, 0, len(stage.row_starts), "serial", For(
        pc, 0, len(stage.col_starts), "serial",
        LetStmt(a, _starts(pr, stage.row_starts, th),
                LetStmt(b, _starts(pc, stage.col_starts, tw), seq(*body)))))


def _band_rows(dst: _Ptr, src: _Ptr | None, st, j: Var) -> Stmt | None:
    """One band's new rows of the window ``st`` (a stream tensor): copied from ``src``
    (the whole image) when it is given and the row is inside the image, set to the
    tensor's fill when the row is outside and it has one."""
    if src is None and st.fill is None:
        return None
    i, r = Var("i"), Var("r")
    rb = st.row_bytes
    fill = None
    if st.fill is not None:
        element = _fill_bytes(st)
        fill = _fill(dst, i * rb, rb // len(element), element, st.tensor.dtype)
    if src is None:
        step = IfThenElse((r < 0) | (r >= st.height), fill)
    else:
        step = IfThenElse((r >= 0) & (r < st.height), Evaluate(call_memory(
            "memcpy", dst.at(i * rb, "uint8"), src.at(r * rb, "uint8"), rb)), fill)
    return For(i, 0, st.new, "serial", LetStmt(r, j * st.new + (st.phase + i), step))


def _stream_loop(code: StreamCode, calls, plan, bindings: _Bindings, lay: Layout) -> Stmt:
    """The stream stage's loop over bands: fill every window, then per band slide each
    window, copy the stage input's new rows in, call the kernels of ``code.graph``
    (taken from ``calls`` in order) on fixed runs of rows of the windows (which the
    model's plan put at one offset) and the stage output's rows of the band, and fill
    their rows outside the image."""
    stage = code.stage
    base = plan.buffer_of(code.buffer)
    if base.external or base.region:
        raise CodegenError("the stream windows must be in the main workspace")
    tensors = _tensor_map(code.graph)
    j = Var("j")

    def window(st, rows: int = 0, writable: bool = True) -> _Ptr:
        return _Ptr(bindings.workspace, base.offset + code.offsets[st.tensor.name]
                    + rows * st.row_bytes, st.tensor.dtype, writable)

    def place(name: str, writable: bool) -> tuple[_Ptr, object, tuple[int, int]]:
        """The pointer, its move per band (None: fixed) and its byte range at band 0
        (windows only)."""
        bt = code.where[name]
        st = bt.source
        if st.tensor is stage.output:
            return bindings.ptr(stage.output, writable=writable), \
                j * (bt.rows * st.row_bytes), (-1, -1)
        p = window(st, bt.offset, writable)
        return p, None, (p.offset, p.offset + bt.rows * st.row_bytes)

    body = []
    for group in code.graph.annotations.groups:
        if group.kind == "view":
            raise CodegenError("a view inside a stream stage is not supported yet")
        _, k = next(calls)
        ptrs, moves, spans = [], [], []
        for p in k.params:
            t = tensors[p.tensor]
            if t.kind in ("input", "activation"):
                ptr, move, span = place(t.name, p.role == "output")
                spans.append((p, span))
            else:
                ptr, move = bindings.ptr(t, writable=False), None
            ptrs.append(ptr)
            moves.append(move)
        for i, (p, (lo, hi)) in enumerate(spans):
            for q, (lo2, hi2) in spans[:i]:
                if "output" in (p.role, q.role) and lo < hi2 and lo2 < hi:
                    raise CodegenError(f"kernel {k.name}: {p.tensor!r} and {q.tensor!r} share "
                                       "bytes of the stream windows")
        outs = [code.where[t.name].source for t in group.outputs(code.graph)]
        first = outs[0]
        row = j * first.new + first.phase  # the band's first new row of the layer output
        body.append(IfThenElse((row < first.height) & (row + first.new > 0),
                               seq(Comment(f"{group.name} on a band"),
                                   _call(k.name, _kernel_args(k, ptrs, lay, bindings, moves)))))
        body += [_band_rows(window(st, st.kept), None, st, j) for st in outs
                 if st.fill is not None and st.tensor is not stage.output]
    windows = [st for st in stage.windowed if st.tensor.name in code.offsets]
    xs = stage.tensors[id(stage.input)]
    slides = [Evaluate(call_memory("memmove", window(st).at(dtype="uint8"),
                                   window(st).at(st.new * st.row_bytes, "uint8"),
                                   st.kept * st.row_bytes)) for st in windows if st.kept]
    fills = [_fill(window(st), 0, st.window_bytes // len(_fill_bytes(st)), _fill_bytes(st),
                   st.tensor.dtype) for st in windows]
    copy_in = _band_rows(window(xs, xs.kept), bindings.ptr(stage.input, writable=False), xs, j)
    return seq(*fills, For(j, stage.first_band, stage.bands - stage.first_band, "serial",
                           seq(*slides, copy_in, *body)))


def _steps(graph: Graph, groups, kernels, plan, bindings: _Bindings, lay: Layout,
           patches: PatchCode | StreamCode | None, parts=None
           ) -> list[tuple[str, Stmt | _HandOver | None, list]]:
    """One step per group: a comment saying what it does, its statement (None for a view
    without code) and, per kernel call, ``(call, kernel, group)`` for ``P_run_kernel``,
    which runs it alone (``call`` None: the step's hand-over); a patch or stream stage is
    one loop.

    A view whose input and output ended up in different buffers (for
    example a graph input reshaped straight into a graph output) is a
    ``memcpy``: the bytes are the same, only their place differs.

    A group split across the cores (``parts``: group name -> its parts' kernels,
    :mod:`aot.kernels.parts`) is a hand-over (:class:`_HandOver`): core 1's part is a
    task, core 0 calls its own part's kernel.  A group placed whole on core 1 (side by
    side with the group before it) is a :class:`_HandOver` whose core-0 call is still
    to come: :func:`_side_by_side` pairs it with the step before.
    """
    tensors = _tensor_map(graph)
    placed = annotations(graph)
    steps = []
    calls = iter(enumerate(kernels))
    for g in groups:
        if g.kind == "view":
            x, y = g.nodes[0].inputs[0], g.nodes[-1].outputs[0]
            if plan.buffer_of(x) is plan.buffer_of(y):
                steps.append((f"{g.name}: a view, no code", None, []))
            else:
                steps.append((f"{g.name}: a view into another buffer",
                              _copy(bindings.ptr(y, writable=True),
                                    bindings.ptr(x, writable=False), y.type.nbytes), []))
            continue
        if g.kind == "patches":
            if patches is None:
                raise CodegenError(f"{g.name}: a patch stage without its patch code")
            stage = patches.stage
            if isinstance(patches, StreamCode):
                steps.append((f"{g.name}: {stage.describe()}",
                              _stream_loop(patches, calls, plan, bindings, lay), []))
            else:
                steps.append((f"{g.name}: {len(stage.nodes)} layers in {stage.grid[0]}x"
                              f"{stage.grid[1]} patches",
                              _patch_loop(patches, calls, plan, bindings, lay), []))
            continue
        _, k = next(calls)
        ptrs = []
        for p in k.params:
            t = tensors.get(p.tensor)
            if t is None:
                raise CodegenError(f"kernel {k.name} binds unknown tensor {p.tensor!r}")
            ptrs.append(bindings.ptr(t, writable=p.role == "output"))
        _check_overlap(k, tensors, plan)
        what = f"{g.name}: {', '.join(n.op for n in g.nodes)}"
        call = _call(k.name, _kernel_args(k, ptrs, lay, bindings))
        split = (parts or {}).get(g.name, ())
        core = placed.devices(g.nodes[0])[0].core
        if split:
            steps.append((f"{what}, split across the cores",
                          _split(g, split, tensors, bindings, lay), [(None, k, g)]))
        elif core == WORKER_CORE:
            task = _task(f"{g.name} on core {WORKER_CORE}", k,
                         [(p, ptr, 0) for p, ptr in zip(k.params, ptrs)], bindings, lay)
            steps.append((f"{what}, on core {WORKER_CORE}", _HandOver(task, None),
                          [(call, k, g)]))
        elif core != 0:
            raise CodegenError(f"{g.name} is placed on core {core}: the entry function "
                               f"hands work to core {WORKER_CORE} only")
        else:
            steps.append((what, call, [(call, k, g)]))
    return _side_by_side(steps)


@dataclass(frozen=True)
class _HandOver:
    """A parallel step before it is a statement: ``task`` (core 1's function) runs
    beside ``core0`` (core 0's call, a :func:`_call`; None while a side-by-side group
    waits for the step before it)."""

    task: PrimFunc
    core0: LetStmt | None

    def stmt(self, task: str, bindings: _Bindings) -> Stmt:
        """Queue the function ``task`` on core 1 with the workspace as its argument,
        run core 0's call, join core 1 (the placement's barrier), then return core 0's
        status unless 0: core 1 is never left running when the entry function returns."""
        status = self.core0.var
        submit = _call("aot_core_submit", [const(WORKER_CORE), FuncRef(task),
                                           Address(bindings.workspace, 0, "uint8", "rw")])
        join = Evaluate(call_extern("int32", "aot_core_join", const(WORKER_CORE)))
        return seq(submit, LetStmt(status, self.core0.value,
                                   seq(join, IfThenElse(status.not_equal(0), Return(status)))))


def _task(what: str, k, args, bindings: _Bindings, lay: Layout) -> PrimFunc:
    """Core 1's task: call ``k`` with ``args`` (``(param, _Ptr, offset)``), each a
    place in the workspace, the task's one argument.  Its status is dropped: the
    kernels placed on several cores are aot's loop-IR kernels (no external codegen,
    the placement's rule), which always return 0."""
    ws = decl_buffer((max(lay.workspace_bytes, 1),), "uint8", "ws")
    if k.scratch_bytes:
        raise CodegenError(f"kernel {k.name} ({what}) asks for {k.scratch_bytes} bytes of "
                           "shared scratch, which core 0's kernels use at the same time")
    addresses = []
    for p, ptr, offset in args:
        if ptr.buffer is not bindings.workspace:
            raise CodegenError(f"{what}: {k.name} takes {p.tensor!r} from "
                               f"{'the caller' if ptr.caller else ptr.buffer.name}, but the "
                               "hand-over gives core 1 the workspace only: plan the inputs "
                               "and outputs in the workspace and no buffer in other regions")
        addresses.append(Address(ws, ptr.offset + offset, ptr.dtype,
                                 "rw" if ptr.writable else "r"))
    return PrimFunc("", [ws], Evaluate(call_extern("int32", k.name, *addresses)),
                    {"static": True, "task": True})


def _split(g, split, tensors, bindings: _Bindings, lay: Layout) -> _HandOver:
    """A split group's hand-over: core 0's part called here, core 1's part a task; each
    argument is its whole tensor's place plus the part's byte offset."""
    if len(split) != 2 or [p.core for p in split] != [0, WORKER_CORE]:
        raise CodegenError(f"{g.name} is split across cores {[p.core for p in split]}: the "
                           f"entry function hands work to core {WORKER_CORE} only")
    placed = []
    for part in split:
        k = part.kernel
        placed.append([(p, bindings.ptr(tensors[a.tensor], writable=p.role == "output"),
                        a.offset) for p, a in zip(k.params, part.args)])
    core0, core1 = split
    if core0.kernel.scratch_bytes:
        raise CodegenError(f"kernel {core0.kernel.name} ({g.name} on core 0) asks for shared "
                           "scratch, which the split's other part would use at the same time")
    call = _call(core0.kernel.name, [ptr.at(offset) for _, ptr, offset in placed[0]])
    return _HandOver(_task(f"{g.name}'s part on core {WORKER_CORE}", core1.kernel,
                           placed[1], bindings, lay), call)


def _side_by_side(steps):
    """Pair each group placed on core 1 with the core-0 call before it: one parallel step
    (the placement puts such a group right after the one it runs beside)."""
    out = []
    for comment, stmt, alone in steps:
        if isinstance(stmt, _HandOver) and stmt.core0 is None:
            if not out or not isinstance(out[-1][1], LetStmt):
                raise CodegenError(f"{comment}: no call on core 0 before it to run beside")
            before, call, first = out.pop()
            out.append((f"{before}; beside {comment}", _HandOver(stmt.task, call),
                        first + alone))
        else:
            out.append((comment, stmt, alone))
    return out


def _alone(k, call: Stmt, inputs, outputs, bindings: _Bindings, graph: Graph,
           plan) -> Stmt:
    """The body of one kernel run alone (``P_run_kernel``): with inputs and outputs in
    the workspace, the graph inputs it reads are copied in first (their bytes may hold
    other activations since the last full run) and the graph outputs it writes out
    after; the kernel's status is returned.  ``call`` is a :func:`_call`, or a split
    group's hand-over (which returns a status other than 0 itself)."""
    before, after = [], []
    if plan.io_in_workspace:
        tensors = _tensor_map(graph)
        planned = [(p.role, plan.buffer_of(tensors[p.tensor])) for p in k.params
                   if tensors[p.tensor].kind in ("input", "activation")]  # not state
        reads = {id(b) for role, b in planned if role == "input"}
        writes = {id(b) for role, b in planned if role == "output"}
        before = [_copy(bindings.ptr(p.tensor, writable=True), bindings.port(p), p.nbytes,
                        unless_same=True)
                  for p in inputs if id(plan.buffer_of(p.tensor)) in reads]
        after = [_copy(bindings.port(p), bindings.ptr(p.tensor, writable=False), p.nbytes,
                       unless_same=True)
                 for p in outputs if id(plan.buffer_of(p.tensor)) in writes]
    if not isinstance(call, LetStmt):
        return seq(*before, call, *after)
    status = call.var
    return seq(*before, LetStmt(status, call.value, seq(*after, Return(status))))


def lower_entry(name: str, graph: Graph, groups, kernels, plan,
                patches: PatchCode | StreamCode | None = None,
                region_owner: str = "", parts=None) -> Entry:
    """The model's entry functions as loop IR (:class:`Entry`, the module docstring);
    refuses a call that would bind two restrict arguments to one address.
    ``region_owner`` names whose board region arrays they use (a model group's);
    ``parts`` (group name -> its parts' kernels) the split groups of a graph placed
    on two cores: their parts run in the hand-over to core 1 (:class:`_HandOver`)."""
    check_name(name)
    inputs, outputs = ports(name, graph, plan)
    lay = layout(plan, kernels)
    bindings = _Bindings(name, plan, inputs, outputs, region_owner or name, lay)
    steps, tasks, replaced = [], [], []
    for comment, stmt, alone in _steps(graph, groups, kernels, plan, bindings, lay, patches,
                                       parts):
        replaced += [(k.name, parts[g.name]) for call, k, g in alone if call is None]
        if isinstance(stmt, _HandOver):
            task = PrimFunc(f"{name}_core{WORKER_CORE}_step_{len(tasks)}", stmt.task.params,
                            stmt.task.body, stmt.task.attrs)
            tasks.append(task)
            stmt = stmt.stmt(task.name, bindings)
        steps.append((comment, stmt, [(call or seq(_start_cores(), stmt), k, g)
                                      for call, k, g in alone]))
    prologue, epilogue = [_start_cores()] if tasks else [], []
    if plan.io_in_workspace:  # copy in before and out after, unless in place
        prologue += [_copy(bindings.ptr(p.tensor, writable=True), bindings.port(p), p.nbytes,
                          unless_same=True) for p in inputs]
        epilogue = [_copy(bindings.port(p), bindings.ptr(p.tensor, writable=False), p.nbytes,
                          unless_same=True) for p in outputs]
    for t in graph.variables():  # state no kernel names still belongs to the model
        bindings.ptr(t, writable=True)
    params = bindings.params()
    buffers = [p.buffer for p in params]
    # No restrict: a caller's buffer may be the workspace's own bytes.
    attrs = {"static": True, "may_alias": frozenset(id(b.data) for b in buffers)}
    run = PrimFunc(f"{name}_entry", buffers,
                   seq(*prologue, *(seq(Comment(c), s) for c, s, _ in steps), *epilogue), attrs)
    alone = [one for _, _, calls in steps for one in calls]
    return Entry(
        run, tuple(PrimFunc(f"{name}_kernel_{i}", buffers,
                            _alone(k, s, inputs, outputs, bindings, graph, plan), attrs)
                   for i, (s, k, _) in enumerate(alone)),
        tuple(g.name[:_MAX_RPC_NAME] for _, _, g in alone), params, inputs, outputs, lay,
        tuple(a for a, _ in bindings.states.values()),
        tuple(a for a, _ in bindings.constants.values()), tuple(tasks),
        tuple(p.kernel for split in (parts or {}).values() for p in split),
        dict(replaced))


def _start_cores() -> Stmt:
    """Start core 1 (``aot_cores_start()``: the first call starts it, later ones only
    count the cores running); :data:`STATUS_CORES_NOT_STARTED` if it does not run."""
    started = call_extern("int32", "aot_cores_start")
    return IfThenElse(started < WORKER_CORE + 1,
                      Return(STATUS_CORES_NOT_STARTED))


@dataclass(frozen=True)
class Generated:
    """The generated files (artifact path -> C text) and the sizes they fix."""

    files: dict[str, str]
    layout: Layout
    constant_bytes: int  # the kernels' constants plus constant arguments in the entry file
    state_bytes: int
    cores: int = 1       # 2: the entry function hands work to core 1 (links src/cores.c)


def generate(name: str, graph: Graph, groups, kernels, plan, *, target: str,
             board: str | None, version: str, target_hash: str,
             shared_workspace: str | None = None, shared_regions: str | None = None,
             patches: PatchCode | StreamCode | None = None, parts=None) -> Generated:
    """All generated C of the artifact (see the module docstring).

    ``shared_workspace`` (a C symbol) makes the static workspace one that
    several models share (a model group, :func:`aot.compile.group_models`):
    ``P_run`` and ``P_input_<x>()`` use that array, which the group's own
    file defines, instead of an array of the model's; ``shared_regions`` (the
    group's name) does the same for the arrays of the other memory regions
    (``<group>_region_<r>``).
    For an ``llvm`` target (objects for a microcontroller) the kernels are
    not C: the files are the entry function, header and RPC descriptor,
    which call the kernels' symbols, and the caller adds the objects."""
    kind = canonical_target(target)[1].kind
    if kind not in ("c", "llvm"):
        raise CodegenError(f"the entry function is C, and target {target!r} is neither a C "
                           "nor an llvm target")
    entry = lower_entry(name, graph, groups, kernels, plan, patches, shared_regions or "", parts)
    inputs, outputs, lay = entry.inputs, entry.outputs, entry.layout
    states = list(entry.states)
    functions = print_functions([*entry.tasks, entry.run, *entry.kernels])
    linked = linked_kernels(kernels, entry)
    kernels = [k for _, k in linked]
    constant_bytes = sum(k.constant_bytes for k in kernels) + entry.constant_arg_bytes
    common = dict(
        name=name, NAME=name.upper(), model_name=_comment(graph.name), version=version,
        target=_comment(target), board=board, inputs=inputs, outputs=outputs,
        workspace_bytes=lay.workspace_bytes, alignment=lay.alignment,
        scratch_bytes=lay.scratch_bytes, scratch_offset=lay.scratch_offset,
        state_bytes=sum(s.nbytes for s in states), constant_bytes=constant_bytes,
        # Static arrays start at zero; state with another zero point is set
        # by the first run (or by P_reset).
        lazy_reset=any(s.zero != 0 or s.start for s in states),
        io_in_workspace=plan.io_in_workspace, plan_algorithm=plan.algorithm,
        target_hash=target_hash, num_kernels=len(entry.kernels),
        rpc_kernels=list(entry.rpc_kernels), shared_workspace=shared_workspace,
        regions=[{"name": r, "array": region_array(shared_regions or name, r), "bytes": n,
                  "section": f".aot_region.{r}", "speed": plan.region_speeds.get(r),
                  "shared": bool(shared_regions)}
                 for r, n in plan.regions.items()],
        const_copies=[{"region": r, "bytes": n, "symbol": f"__aot_{name}_const_{r}",
                       "section": constant_section(name, r), "mark": f"{name}_const_{r}_mark"}
                      for r, n in plan.region_constants.items() if r != "ram"],
        ram_constant_bytes=plan.region_constants.get("ram", 0),
        status_no_kernel=STATUS_NO_KERNEL, cores=WORKER_CORE + 1 if entry.tasks else 1,
        status_constants_not_copied=STATUS_CONSTANTS_NOT_COPIED)
    rpc_tensors = [RpcTensor(p.rpc_name, p.tensor.dtype, p.role, p.role == "input",
                             tuple(p.dims), p.nbytes, f"{name}_rpc_{p.role}_{p.index}")
                   for p in inputs + outputs]
    rpc_kernel_table = [(k, f"{name}_rpc_kernel_{i}") for i, k in enumerate(entry.rpc_kernels)]
    files = {
        f"include/{name}.h": _template("model.h.j2").render(**common),
        f"codegen/{name}.c": _template("model.c.j2").render(
            **common, kernels=kernels, states=states, constants=list(entry.constants),
            functions=functions, entry=entry.run.name,
            kernel_entries=[f.name for f in entry.kernels],
            params=[{"kind": p.kind, "name": p.name} for p in entry.params],
            workspace_array=max(lay.workspace_bytes, 1)),
        f"codegen/{name}_rpc.c": _template("model_rpc.c.j2").render(
            **common, rpc_tensors=rpc_tensors, rpc_kernel_table=rpc_kernel_table),
    }
    if kind == "c":
        for i, k in linked:
            files[kernel_file(name, i)] = k.source
    return Generated(files, lay, constant_bytes, common["state_bytes"], common["cores"])


def group_files(name: str, members, *, alignment: int, target: str, board: str | None,
                version: str, regions=None) -> dict[str, str]:
    """The files a model group adds to its models' (:func:`aot.compile.group_models`):
    ``include/<name>.h`` (every model's header, the shared workspace's size and
    alignment) and ``codegen/<name>.c``, the one workspace array
    ``<name>_workspace`` whose symbol each model's entry file was generated
    with (``generate(..., shared_workspace=...)``), and one array
    ``<name>_region_<r>`` per other memory region (``regions``: ``{region:
    (bytes, speed)}``, the largest model's bytes there), in its section.
    ``members`` are ``(model name, graph name, workspace bytes)``."""
    rows = [{"name": m, "model_name": _comment(g), "workspace_bytes": w} for m, g, w in members]
    biggest = max(r["workspace_bytes"] for r in rows)
    shared = [{"name": r, "array": region_array(name, r), "bytes": n, "speed": speed,
               "section": f".aot_region.{r}"} for r, (n, speed) in (regions or {}).items()]
    common = dict(name=name, NAME=name.upper(), members=rows, workspace_bytes=biggest,
                  workspace_array=max(biggest, 1), alignment=alignment,
                  target=_comment(target), board=board, version=version, regions=shared)
    return {f"include/{name}.h": _template("group.h.j2").render(**common),
            f"codegen/{name}.c": _template("group.c.j2").render(**common)}


def host_main(name: str, graph: Graph, plan, *, version: str) -> str:
    """The C of a host program that runs N invocations from a file (for ``aot run``)."""
    inputs, outputs = ports(name, graph, plan)
    return _template("host_main.c.j2").render(
        name=name, inputs=inputs, outputs=outputs, version=version)
