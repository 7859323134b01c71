"""AOT executor code generation: the entry function, the header and the RPC descriptor.

Input: the optimized graph, its fused groups in execution order, one
:class:`aot.kernels.Kernel` per group that is not a view, and the memory
plan.  Output: C text per file of the artifact (:func:`generate`):

* ``include/P.h``: input/output structs, ``P_run``, ``P_run_with_workspace``,
  ``P_reset`` and every size as a macro;
* ``codegen/P.c``: the entry function, one plain call per kernel in order,
  each argument a caller pointer or ``workspace + planned offset`` (a view
  is its source's bytes, so it costs no code); state tensors as static
  zero-initialized arrays;
* ``codegen/P_kernels_<i>.c``: the kernels' own translation units (for a
  ``c`` target; an ``llvm`` target's kernels are objects, :mod:`aot.compile`);
* ``codegen/P_rpc.c``: the ``aot_rpc_model`` descriptor for RPC firmware,
  with the whole model and each kernel alone (``P_run_kernel``: the same
  call as in the entry function, for timing kernels one by one).

What the entry function does is decided once, as data: :func:`entry_program`
gives the sequence of kernel calls and copies with every argument a
:class:`Ref` (a workspace offset, a caller port, a state or constant array).
The C entry function is that program printed; the LLVM backend's host JIT
(:mod:`aot.executor.jit`) runs the same program from Python.

A patch stage (a group of kind ``"patches"``, :mod:`aot.executor.patches`)
is one :class:`PatchLoop` step: a C loop over the tiles calling the stage's
kernels (lowered once for the patch shapes, :class:`PatchCode`) between a
copy-in, fills and a copy-out.  A stream stage (the same kind of group with a
:class:`StreamCode`, :mod:`aot.executor.streams`) is one :class:`StreamLoop`: a
loop over bands of rows that slides each window, copies the input's new rows in,
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

from aot.codegen.c import C_TYPES, c_identifier, canonical_target
from aot.codegen.jinja import templates
from aot.errors import AotError
from aot.executor.regions import constant_section
from aot.ir import Graph, Tensor


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
RUN_STATUSES = {
    STATUS_NO_KERNEL: "there is no kernel with that index (P_run_kernel)",
    STATUS_CONSTANTS_NOT_COPIED: "the start-up code did not copy the model's constants into "
        "their fast memory (--memory-regions ...+const): it must process the .aot_copy_table",
}


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


@dataclass
class _Step:
    comment: str
    lines: list[str] = field(default_factory=list)
    call: str = ""       # the kernel call expression, for a kernel step
    group: str = ""      # the fused group's name


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
class Ref:
    """Where the entry function finds a tensor's bytes: ``space`` is
    ``workspace`` (``index`` is the byte offset), ``input``/``output`` (the
    caller's port ``index``), ``state`` or ``constant`` (the entry file's
    array ``index``)."""

    space: str
    index: int
    region: str = ""   # with space "workspace": a board region's array, "" the workspace


@dataclass(frozen=True)
class Arg:
    """One pointer the entry function passes or copies: where, as which dtype."""

    ref: Ref
    dtype: str
    writable: bool


@dataclass(frozen=True)
class KernelCall:
    """Call kernel number ``kernel`` (in execution order) with ``args``."""

    kernel: int
    args: tuple[Arg, ...]
    group: str
    comment: str


@dataclass(frozen=True)
class Copy:
    """Copy ``nbytes`` from ``src`` to ``dst`` (``unless_same``: skip when the
    caller passed the workspace's own address)."""

    dst: Arg
    src: Arg
    nbytes: int
    comment: str = ""
    unless_same: bool = False


@dataclass(frozen=True)
class Note:
    """A step without code (a view sharing its source's bytes)."""

    comment: str


@dataclass(frozen=True)
class PatchWindow:
    """Patch ``p`` (output tile at row ``a_p``, column ``b_p``) holds rows
    ``a_p * rows[0] + rows[1]`` onwards (``rows[2]`` of them) and columns alike of an
    ``image`` (height, width) with ``channel_bytes`` per position; positions outside
    the image hold ``fill`` (the bytes of one element) when it is not None."""

    image: tuple[int, int]
    channel_bytes: int
    rows: tuple[int, int, int]
    cols: tuple[int, int, int]
    fill: bytes | None


@dataclass(frozen=True)
class PatchFill:
    """Set the positions of patch ``dst`` outside the image to the window's fill."""

    dst: Arg
    window: PatchWindow


@dataclass(frozen=True)
class PatchLoop:
    """A patch stage (:mod:`aot.executor.patches`): for each output tile at ``corners``,
    copy the stage input's window into ``patch_in`` (filling outside the image), run
    ``body`` (the kernels, lowered once for the patch shapes, and the fills between
    them), and copy ``tile`` rows and columns of ``patch_out`` (from ``offset`` in it)
    into the stage output."""

    corners: tuple[tuple[int, int], ...]
    src: Arg
    patch_in: Arg
    window: PatchWindow
    body: tuple[KernelCall | PatchFill, ...]
    patch_out: Arg
    out_shape: tuple[int, int, int]   # patch height, width, channel bytes
    offset: tuple[int, int]
    dst: Arg
    out_width: int
    tile: tuple[int, int]
    comment: str


@dataclass(frozen=True)
class BandRows:
    """The ``new`` rows at ``dst`` are rows ``[j * new + phase, ... + new)`` of an image of
    ``height`` rows of ``row_bytes`` at band ``j``: copied from ``src`` (the whole image)
    when it is given and the row is inside, set to ``fill`` (one element's bytes) when
    the row is outside and ``fill`` is not None."""

    dst: Arg
    src: Arg | None
    new: int
    phase: int
    height: int
    row_bytes: int
    fill: bytes | None


@dataclass(frozen=True)
class StreamCall:
    """A kernel call of a stream stage: made only at bands whose new rows of the layer's
    output (``rows``: new, phase, height) touch the image; argument ``i``'s pointer moves
    ``band_bytes[i]`` bytes per band (the stage output's rows, else 0)."""

    call: KernelCall
    band_bytes: tuple[int, ...]
    rows: tuple[int, int, int]


@dataclass(frozen=True)
class StreamLoop:
    """A stream stage (:mod:`aot.executor.streams`): fill every window (``windows``:
    start, bytes, fill element), then for bands ``first_band .. bands - 1`` slide each
    window (``slides``: start, kept bytes, new bytes; the kept bytes move from
    ``start + new`` to ``start``), copy the stage input's new rows in (``copy_in``) and
    run ``body`` (the kernel calls and the fills of their out-of-image rows)."""

    first_band: int
    bands: int
    windows: tuple[tuple[Arg, int, bytes], ...]
    slides: tuple[tuple[Arg, int, int], ...]
    copy_in: BandRows
    body: tuple[StreamCall | BandRows, ...]
    comment: str


@dataclass(frozen=True)
class EntryProgram:
    """What the entry function does, as data (see the module docstring)."""

    inputs: list[Port]
    outputs: list[Port]
    layout: Layout
    prologue: tuple[Copy, ...]
    steps: tuple[KernelCall | Copy | Note | PatchLoop | StreamLoop, ...]
    epilogue: tuple[Copy, ...]
    states: tuple[_Array, ...]
    constants: tuple[_Array, ...]

    @property
    def constant_arg_bytes(self) -> int:
        return sum(c.nbytes for c in self.constants)

    @property
    def state_bytes(self) -> int:
        return sum(s.nbytes for s in self.states)


class _Bindings:
    """How the entry function reaches each tensor: a :class:`Ref`."""

    def __init__(self, name: str, plan, inputs: list[Port], outputs: list[Port]) -> None:
        self.name = name
        self.plan = plan
        self.caller: dict[int, Port] = {id(p.tensor): p for p in inputs + outputs}
        self.states: dict[int, _Array] = {}
        self.constants: dict[int, _Array] = {}

    def arg(self, t: Tensor, *, writable: bool) -> Arg:
        return Arg(self.ref(t, writable=writable), t.dtype, writable)

    def ref(self, t: Tensor, *, writable: bool) -> Ref:
        if t.kind == "variable":
            if id(t) not in self.states:
                ident = f"{self.name}_state_{len(self.states)}"
                self.states[id(t)] = _Array(t, ident)
            return Ref("state", list(self.states).index(id(t)))
        if t.kind == "constant":
            if writable:
                raise CodegenError(f"a kernel writes the constant tensor {t.name!r}")
            if id(t) not in self.constants:
                ident = f"{self.name}_const_{len(self.constants)}"
                self.constants[id(t)] = _Array(t, ident, _c_values(t))
            return Ref("constant", list(self.constants).index(id(t)))
        b = self.plan.buffer_of(t)
        if not b.external:
            return Ref("workspace", b.offset, b.region)
        # A caller buffer holds exactly one graph input or output; views of it share it.
        owner = next(self.caller[id(m)] for m in b.tensors if id(m) in self.caller)
        if owner.role == "input" and writable:
            raise CodegenError(f"the plan writes {t.name!r} over the caller's input "
                               f"{owner.tensor.name!r}")
        return Ref(owner.role, owner.index)


class _CPrinter:
    """The C pointer expression of an :class:`Arg` in the entry function."""

    def __init__(self, program: EntryProgram, inputs, outputs, name: str = "",
                 region_owner: str = "") -> None:
        self.program = program
        self.ports = {"input": inputs, "output": outputs}
        self.name = name
        self.region_owner = region_owner or name  # whose region arrays (a group's)

    def pointer(self, arg: Arg) -> str:
        ref, ctype = arg.ref, C_TYPES[arg.dtype]
        qual = "" if arg.writable else "const "
        if ref.space == "state":
            return self.program.states[ref.index].ident
        if ref.space == "constant":
            return self.program.constants[ref.index].ident
        if ref.space == "workspace" and ref.region:
            return (f"({qual}{ctype} *)({region_array(self.region_owner, ref.region)} + "
                    f"{ref.index})")
        if ref.space == "workspace":
            return f"({qual}{ctype} *)(ws + {ref.index})"
        port = self.ports[ref.space][ref.index]
        field_ = f"{'in' if ref.space == 'input' else 'out'}->{port.ident}"
        if port.tensor.dtype == arg.dtype:
            return field_
        return f"({qual}{ctype} *){field_}"

    def copy(self, c: Copy) -> list[str]:
        dst, src = self.pointer(c.dst), self.pointer(c.src)
        if not c.unless_same:
            return [f"memcpy({dst}, {src}, {c.nbytes}u);"]
        caller, own = (src, dst) if c.src.ref.space == "input" else (dst, src)
        return [f"if ((const void *){caller} != (const void *){own}) {{",
                f"    memcpy({dst}, {src}, {c.nbytes}u);", "}"]

    def step(self, s, kernels) -> _Step:
        if isinstance(s, Note):
            return _Step(s.comment)
        if isinstance(s, Copy):
            return _Step(s.comment, self.copy(s))
        if isinstance(s, PatchLoop):
            return _Step(s.comment, self.patch_loop(s, kernels))
        if isinstance(s, StreamLoop):
            return _Step(s.comment, self.stream_loop(s, kernels))
        call = self.call(s, kernels)
        return _Step(s.comment, [f"status = {call};", "if (status != 0) {", "    return status;",
                                 "}"], call=call, group=s.group)

    def call(self, s: KernelCall, kernels) -> str:
        args = [self.pointer(a) for a in s.args]
        if kernels[s.kernel].scratch_bytes:
            args.append(f"(void *)(ws + {self.program.layout.scratch_offset})")
        return f"{kernels[s.kernel].name}({', '.join(args)})"

    def patch_loop(self, s: PatchLoop, kernels) -> list[str]:
        """A loop over the patches; the tiles' corners in two tables."""
        n = len(s.corners)
        lines = ["{",
                 f"    static const int32_t rows[{n}] = {{"
                 f"{', '.join(str(a) for a, _ in s.corners)}}};",
                 f"    static const int32_t cols[{n}] = {{"
                 f"{', '.join(str(b) for _, b in s.corners)}}};",
                 f"    for (uint32_t p = 0; p < {n}u; ++p) {{",
                 "        const int32_t a = rows[p];",
                 "        const int32_t b = cols[p];"]
        body = _window_lines(f"(uint8_t *){self.pointer(s.patch_in)}",
                             f"(const uint8_t *){self.pointer(s.src)}", s.window)
        for step in s.body:
            if isinstance(step, PatchFill):
                body += _window_lines(f"(uint8_t *){self.pointer(step.dst)}", None,
                                      step.window)
            else:
                body += [f"status = {self.call(step, kernels)};", "if (status != 0) {",
                         "    return status;", "}"]
        ph, pw, cb = s.out_shape
        th, tw = s.tile
        r, c = s.offset
        body += [f"for (int32_t i = 0; i < {th}; ++i) {{",
                 f"    memcpy((uint8_t *){self.pointer(s.dst)} + ((a + i) * {s.out_width} + b)"
                 f" * {cb},",
                 f"           (const uint8_t *){self.pointer(s.patch_out)} + ((i + {r}) * {pw}"
                 f" + {c}) * {cb}, {tw * cb}u);",
                 "}"]
        return lines + ["        " + line for line in body] + ["    }", "}"]

    def stream_loop(self, s: StreamLoop, kernels) -> list[str]:
        """The loop over bands: slides, copy-in, calls on fixed rows, fills."""
        lines = ["{"]
        for arg, nbytes, fill in s.windows:
            lines += ["    " + line for line in
                      _fill_lines(f"(uint8_t *){self.pointer(arg)}", str(nbytes), fill)]
        lines.append(f"    for (int32_t j = {s.first_band}; j < {s.bands}; ++j) {{")
        body = [f"memmove((uint8_t *){self.pointer(arg)}, (const uint8_t *){self.pointer(arg)}"
                f" + {new}, {kept}u);" for arg, kept, new in s.slides]
        body += self.band_rows(s.copy_in)
        for step in s.body:
            if isinstance(step, BandRows):
                body += self.band_rows(step)
                continue
            new, phase, height = step.rows
            args = [self.pointer(a) if not n else
                    f"({'' if a.writable else 'const '}{C_TYPES[a.dtype]} *)((uint8_t *)"
                    f"{self.pointer(a)} + j * {n})"
                    for a, n in zip(step.call.args, step.band_bytes, strict=True)]
            k = kernels[step.call.kernel]
            if k.scratch_bytes:
                args.append(f"(void *)(ws + {self.program.layout.scratch_offset})")
            body += [f"if (j * {new} + {phase} < {height} && j * {new} + {phase + new} > 0) {{",
                     f"    /* {_comment(step.call.comment)} */",
                     f"    status = {k.name}({', '.join(args)});",
                     "    if (status != 0) {", "        return status;", "    }", "}"]
        return lines + ["        " + line for line in body] + ["    }", "}"]

    def band_rows(self, b: BandRows) -> list[str]:
        """Copy (from ``b.src``) or fill one band's new rows, row by row."""
        if b.src is None and b.fill is None:
            return []
        dst = f"(uint8_t *){self.pointer(b.dst)} + i * {b.row_bytes}"
        lines = [f"for (int32_t i = 0; i < {b.new}; ++i) {{",
                 f"    const int32_t r = j * {b.new} + {b.phase} + i;"]
        fill = [] if b.fill is None else _fill_lines(dst, str(b.row_bytes), b.fill)
        if b.src is None:
            lines += [f"    if (r < 0 || r >= {b.height}) {{"] + ["        " + line
                                                                   for line in fill] + ["    }"]
            return lines + ["}"]
        lines += [f"    if (r >= 0 && r < {b.height}) {{",
                  f"        memcpy({dst}, (const uint8_t *){self.pointer(b.src)} + r * "
                  f"{b.row_bytes}, {b.row_bytes}u);", "    }"]
        if fill:
            lines += ["    else {"] + ["        " + line for line in fill] + ["    }"]
        return lines + ["}"]


def _fill_lines(dst: str, nbytes: str, fill: bytes) -> list[str]:
    """C setting ``nbytes`` bytes at ``dst`` to copies of the element ``fill``."""
    if len(set(fill)) == 1:
        return [f"memset({dst}, {fill[0]}, {nbytes}u);"]
    return ["{",
            f"    static const uint8_t fill[{len(fill)}] = "
            f"{{{', '.join(str(v) for v in fill)}}};",
            f"    uint8_t *d = {dst};",
            f"    for (uint32_t k = 0; k < {nbytes}u; k += {len(fill)}u) {{",
            f"        memcpy(d + k, fill, {len(fill)}u);",
            "    }", "}"]


def _window_lines(dst: str, src: str | None, w: PatchWindow) -> list[str]:
    """C filling (and with ``src`` copying) one patch's window: row by row, the
    positions inside the image copied, the others set to the fill element by element."""
    (rs, r0, h), (cs, c0, width), (ih, iw), cb = w.rows, w.cols, w.image, w.channel_bytes
    lines = ["{"]
    if w.fill is not None and len(w.fill) > 1:
        elem = len(w.fill)
        lines.append(f"    static const uint8_t fill[{elem}] = "
                     f"{{{', '.join(str(v) for v in w.fill)}}};")
    lines += [f"    uint8_t *d = {dst};",
              f"    for (int32_t i = 0; i < {h}; ++i) {{",
              f"        const int32_t r = a * {rs} + {r0} + i;",
              f"        const int32_t c = b * {cs} + {c0};",
              f"        const int32_t lo = r < 0 || r >= {ih} ? {width} : "
              f"(c < 0 ? (-c < {width} ? -c : {width}) : 0);",
              f"        const int32_t hi = r < 0 || r >= {ih} ? {width} : "
              f"(c + {width} > {iw} ? ({iw} - c > lo ? {iw} - c : lo) : {width});"]
    if src is not None:
        lines += ["        if (hi > lo) {",
                  f"            memcpy(d + (i * {width} + lo) * {cb}, {src} + (r * {iw} + c + lo)"
                  f" * {cb}, (uint32_t)(hi - lo) * {cb}u);",
                  "        }"]
    if w.fill is not None and len(w.fill) == 1:
        lines += [f"        memset(d + i * {width * cb}, {w.fill[0]}, (uint32_t)lo * {cb}u);",
                  f"        memset(d + (i * {width} + hi) * {cb}, {w.fill[0]}, "
                  f"(uint32_t)({width} - hi) * {cb}u);"]
    elif w.fill is not None:
        n = len(w.fill)
        lines += [f"        for (int32_t k = 0; k < lo * {cb}; k += {n}) {{",
                  f"            memcpy(d + i * {width * cb} + k, fill, {n}u);",
                  "        }",
                  f"        for (int32_t k = hi * {cb}; k < {width * cb}; k += {n}) {{",
                  f"            memcpy(d + i * {width * cb} + k, fill, {n}u);",
                  "        }"]
    return lines + ["    }", "}"]


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


def _window(pt, fill) -> PatchWindow:
    t = pt.tensor
    dtype = t.type.np_dtype
    return PatchWindow((t.shape[1], t.shape[2]), t.shape[3] * dtype.itemsize,
                       (pt.rows.scale, pt.rows.start, pt.rows.size),
                       (pt.cols.scale, pt.cols.start, pt.cols.size),
                       None if fill is None else np.array(fill, dtype).tobytes())


def _patch_loop(g, code: PatchCode, calls, plan, bindings: _Bindings) -> PatchLoop:
    """The patch stage's loop: the kernels of ``code.graph`` (taken from ``calls`` in
    order) bound to the patch buffers, which the model's plan put at one offset."""
    stage, pplan = code.stage, code.plan
    base = plan.buffer_of(code.buffer)
    if base.external or base.region:
        raise CodegenError("the patch buffers must be in the main workspace")
    by_name = {pt.tensor.name + "_patch": pt for pt in stage.tensors.values()}
    tensors = _tensor_map(code.graph)

    def arg(t: Tensor, writable: bool) -> Arg:
        return Arg(Ref("workspace", base.offset + pplan.buffer_of(t).offset), t.dtype, writable)

    body = []
    for group in code.graph.annotations.groups:
        if group.kind == "view":
            raise CodegenError("a view inside a patch stage is not supported yet")
        index, k = next(calls)
        args = tuple(arg(tensors[p.tensor], p.role == "output") if
                     tensors[p.tensor].kind in ("input", "activation")
                     else bindings.arg(tensors[p.tensor], writable=False) for p in k.params)
        _check_overlap(k, tensors, pplan)
        body.append(KernelCall(index, args, group.name, f"{group.name} on a patch"))
        for t in group.outputs(code.graph):
            pt = by_name.get(t.name)  # None: a window of a patch (its fills come along)
            if pt is not None and pt.fill is not None:
                body.append(PatchFill(arg(t, True), _window(pt, pt.fill)))
    x_in, y_out = stage.tensors[id(stage.input)], stage.tensors[id(stage.output)]
    px, py = code.graph.inputs[0], code.graph.outputs[0]
    item = stage.output.type.np_dtype.itemsize
    return PatchLoop(
        tuple(stage.patches()), bindings.arg(stage.input, writable=False), arg(px, True),
        _window(x_in, x_in.fill if x_in.fill is not None else 0), tuple(body), arg(py, False),
        (y_out.rows.size, y_out.cols.size, stage.output.shape[3] * item),
        (-y_out.rows.start, -y_out.cols.start), bindings.arg(stage.output, writable=True),
        stage.output.shape[2], stage.tile,
        f"{g.name}: {len(stage.nodes)} layers in {stage.grid[0]}x{stage.grid[1]} patches")


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


def _stream_loop(g, code: StreamCode, calls, plan, bindings: _Bindings) -> StreamLoop:
    """The stream stage's loop: the kernels of ``code.graph`` (taken from ``calls`` in
    order) bound to runs of rows of the windows, which the model's plan put at one
    offset, and the stage output's rows of each band."""
    stage = code.stage
    base = plan.buffer_of(code.buffer)
    if base.external or base.region:
        raise CodegenError("the stream windows must be in the main workspace")
    tensors = _tensor_map(code.graph)

    def window(st) -> int:
        return base.offset + code.offsets[st.tensor.name]

    def place(name: str, writable: bool) -> tuple[Arg, int, tuple[int, int]]:
        """The argument, its bytes per band and its byte range at band 0 (windows only)."""
        bt = code.where[name]
        st = bt.source
        if st.tensor is stage.output:
            return bindings.arg(stage.output, writable=writable), bt.rows * st.row_bytes, \
                (-1, -1)
        lo = window(st) + bt.offset * st.row_bytes
        return Arg(Ref("workspace", lo), st.tensor.dtype, writable), 0, \
            (lo, lo + bt.rows * st.row_bytes)

    body = []
    for group in code.graph.annotations.groups:
        if group.kind == "view":
            raise CodegenError("a view inside a stream stage is not supported yet")
        index, k = next(calls)
        args, moves, spans = [], [], []
        for p in k.params:
            t = tensors[p.tensor]
            if t.kind in ("input", "activation"):
                arg, move, span = place(t.name, p.role == "output")
                spans.append((p, span))
            else:
                arg, move = bindings.arg(t, writable=False), 0
            args.append(arg)
            moves.append(move)
        for i, (p, (lo, hi)) in enumerate(spans):
            for q, (lo2, hi2) in spans[:i]:
                if "output" in (p.role, q.role) and lo < hi2 and lo2 < hi:
                    raise CodegenError(f"kernel {k.name}: {p.tensor!r} and {q.tensor!r} share "
                                       "bytes of the stream windows")
        outs = [code.where[t.name].source for t in group.outputs(code.graph)]
        first = outs[0]
        body.append(StreamCall(KernelCall(index, tuple(args), group.name,
                                          f"{group.name} on a band"),
                               tuple(moves), (first.new, first.phase, first.height)))
        for st in outs:
            if st.fill is not None and st.tensor is not stage.output:
                body.append(BandRows(Arg(Ref("workspace", window(st) + st.kept * st.row_bytes),
                                         st.tensor.dtype, True), None, st.new, st.phase,
                                     st.height, st.row_bytes, _fill_bytes(st)))
    windows = [st for st in stage.windowed if st.tensor.name in code.offsets]
    xs = stage.tensors[id(stage.input)]
    return StreamLoop(
        stage.first_band, stage.bands,
        tuple((Arg(Ref("workspace", window(st)), st.tensor.dtype, True), st.window_bytes,
               _fill_bytes(st)) for st in windows),
        tuple((Arg(Ref("workspace", window(st)), st.tensor.dtype, True),
               st.kept * st.row_bytes, st.new * st.row_bytes) for st in windows if st.kept),
        BandRows(Arg(Ref("workspace", window(xs) + xs.kept * xs.row_bytes), xs.tensor.dtype,
                     True), bindings.arg(stage.input, writable=False), xs.new, xs.phase,
                 xs.height, xs.row_bytes, _fill_bytes(xs)),
        tuple(body), f"{g.name}: {stage.describe()}")


def _tensor_map(graph: Graph) -> dict[str, Tensor]:
    return {t.name: t for t in graph.tensors()}


def _entry_steps(graph: Graph, groups, kernels, plan, bindings: _Bindings,
                 patches: PatchCode | StreamCode | None = None) -> list:
    """One step per group: a kernel call, or for a view nothing (or a copy).

    A view whose input and output ended up in different buffers (for
    example a graph input reshaped straight into a graph output) is a
    ``memcpy``: the bytes are the same, only their place differs.
    """
    tensors = _tensor_map(graph)
    steps = []
    calls = iter(enumerate(kernels))
    for g in groups:
        ops = ", ".join(n.op for n in g.nodes)
        if g.kind == "view":
            x, y = g.nodes[0].inputs[0], g.nodes[-1].outputs[0]
            if plan.buffer_of(x) is plan.buffer_of(y):
                steps.append(Note(f"{g.name}: a view, no code"))
            else:
                steps.append(Copy(bindings.arg(y, writable=True), bindings.arg(x, writable=False),
                                  y.type.nbytes, f"{g.name}: a view into another buffer"))
            continue
        if g.kind == "patches":
            if patches is None:
                raise CodegenError(f"{g.name}: a patch stage without its patch code")
            loop = _stream_loop if isinstance(patches, StreamCode) else _patch_loop
            steps.append(loop(g, patches, calls, plan, bindings))
            continue
        index, k = next(calls)
        args = []
        for p in k.params:
            t = tensors.get(p.tensor)
            if t is None:
                raise CodegenError(f"kernel {k.name} binds unknown tensor {p.tensor!r}")
            args.append(bindings.arg(t, writable=p.role == "output"))
        _check_overlap(k, tensors, plan)
        steps.append(KernelCall(index, tuple(args), g.name, f"{g.name}: {ops}"))
    return steps


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


def _io_copies(inputs: list[Port], outputs: list[Port], bindings: _Bindings):
    """With inputs/outputs in the workspace: copy in before and out after, unless in place."""
    before = [Copy(bindings.arg(p.tensor, writable=True), Arg(Ref("input", p.index),
                                                               p.tensor.dtype, False),
                   p.nbytes, unless_same=True) for p in inputs]
    after = [Copy(Arg(Ref("output", p.index), p.tensor.dtype, True),
                  bindings.arg(p.tensor, writable=False), p.nbytes, unless_same=True)
             for p in outputs]
    return before, after


def entry_program(name: str, graph: Graph, groups, kernels, plan,
                  patches: PatchCode | StreamCode | None = None) -> EntryProgram:
    """The entry function of the model as data (see the module docstring);
    refuses a call that would bind two restrict arguments to one address."""
    check_name(name)
    inputs, outputs = ports(name, graph, plan)
    lay = layout(plan, kernels)
    bindings = _Bindings(name, plan, inputs, outputs)
    # With io_in_workspace the ports are bound to the workspace, not the structs.
    if plan.io_in_workspace:
        bindings.caller = {}
    steps = _entry_steps(graph, groups, kernels, plan, bindings, patches)
    prologue, epilogue = _io_copies(inputs, outputs, bindings) if plan.io_in_workspace \
        else ([], [])
    for t in graph.variables():  # state no kernel names still belongs to the model
        bindings.ref(t, writable=True)
    return EntryProgram(inputs, outputs, lay, tuple(prologue), tuple(steps), tuple(epilogue),
                        tuple(bindings.states.values()), tuple(bindings.constants.values()))


@dataclass(frozen=True)
class Generated:
    """The generated files (artifact path -> C text) and the sizes they fix."""

    files: dict[str, str]
    layout: Layout
    constant_bytes: int  # the kernels' constants plus constant arguments in the entry file
    state_bytes: int


def generate(name: str, graph: Graph, groups, kernels, plan, *, target: str,
             board: str | None, version: str, target_hash: str,
             shared_workspace: str | None = None, shared_regions: str | None = None,
             patches: PatchCode | StreamCode | None = None) -> Generated:
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
    program = entry_program(name, graph, groups, kernels, plan, patches)
    inputs, outputs, lay = program.inputs, program.outputs, program.layout
    printer = _CPrinter(program, inputs, outputs, name, shared_regions or "")
    steps = [printer.step(s, kernels) for s in program.steps]
    prologue = [line for c in program.prologue for line in printer.copy(c)]
    epilogue = [line for c in program.epilogue for line in printer.copy(c)]
    states = list(program.states)
    kernel_calls = [{"comment": s.comment, "expr": s.call,
                     **_port_copies(printer, program, kernels[c.kernel], graph, plan)}
                    for s, c in zip(steps, program.steps) if s.call]
    rpc_kernels = [s.group[:_MAX_RPC_NAME] for s in steps if s.call]
    constant_bytes = sum(k.constant_bytes for k in kernels) + program.constant_arg_bytes
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
        target_hash=target_hash, num_kernels=len(kernel_calls), rpc_kernels=rpc_kernels,
        shared_workspace=shared_workspace,
        regions=[{"name": r, "array": region_array(shared_regions or name, r), "bytes": n,
                  "section": f".aot_region.{r}", "speed": plan.region_speeds.get(r),
                  "shared": bool(shared_regions)}
                 for r, n in plan.regions.items()],
        const_copies=[{"region": r, "bytes": n, "symbol": f"__aot_{name}_const_{r}",
                       "section": constant_section(name, r), "mark": f"{name}_const_{r}_mark"}
                      for r, n in plan.region_constants.items() if r != "ram"],
        ram_constant_bytes=plan.region_constants.get("ram", 0),
        status_no_kernel=STATUS_NO_KERNEL,
        status_constants_not_copied=STATUS_CONSTANTS_NOT_COPIED)
    rpc_tensors = [RpcTensor(p.rpc_name, p.tensor.dtype, p.role, p.role == "input",
                             tuple(p.dims), p.nbytes, f"{name}_rpc_{p.role}_{p.index}")
                   for p in inputs + outputs]
    rpc_kernel_table = [(k, f"{name}_rpc_kernel_{i}") for i, k in enumerate(rpc_kernels)]
    files = {
        f"include/{name}.h": _template("model.h.j2").render(**common),
        f"codegen/{name}.c": _template("model.c.j2").render(
            **common, kernels=kernels, steps=steps, states=states,
            constants=list(program.constants), prologue=prologue,
            kernel_calls=kernel_calls,
            epilogue=epilogue, workspace_array=max(lay.workspace_bytes, 1)),
        f"codegen/{name}_rpc.c": _template("model_rpc.c.j2").render(
            **common, rpc_tensors=rpc_tensors, rpc_kernel_table=rpc_kernel_table),
    }
    if kind == "c":
        for i, k in enumerate(kernels):
            files[f"codegen/{name}_kernels_{i}.c"] = k.source
    return Generated(files, lay, constant_bytes, common["state_bytes"])


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


def _port_copies(printer, program: EntryProgram, kernel, graph: Graph, plan) -> dict:
    """The copies one kernel run alone (``P_run_kernel``) needs with inputs and
    outputs in the workspace: in, the graph inputs it reads (their bytes may
    hold other activations since the last full run); out, the graph outputs it
    writes.  Empty with caller buffers, which the kernels read directly."""
    if not plan.io_in_workspace:
        return {"before": [], "after": []}
    tensors = _tensor_map(graph)
    planned = [(p.role, plan.buffer_of(tensors[p.tensor])) for p in kernel.params
               if tensors[p.tensor].kind in ("input", "activation")]  # not state
    reads = {id(b) for role, b in planned if role == "input"}
    writes = {id(b) for role, b in planned if role == "output"}

    def lines(ports, copies, wanted):
        return [line for port, c in zip(ports, copies)
                if id(plan.buffer_of(port.tensor)) in wanted for line in printer.copy(c)]
    return {"before": lines(program.inputs, program.prologue, reads),
            "after": lines(program.outputs, program.epilogue, writes)}


def host_main(name: str, graph: Graph, plan, *, version: str) -> str:
    """The C of a host program that runs N invocations from a file (for ``aot run``)."""
    inputs, outputs = ports(name, graph, plan)
    return _template("host_main.c.j2").render(
        name=name, inputs=inputs, outputs=outputs, version=version)

