"""Schedules: how the loops of each tensor-expression stage run.

A :class:`Schedule` has one :class:`Stage` per operation, in producer-
before-consumer order.  A stage starts with one loop per axis of its op
(data-parallel axes, then reduction axes, outermost first); primitives
rewrite that list of *leaf* loops and record *relations* from which
lowering recovers every original index:

* ``split``: ``parent = outer * factor + inner``
* ``fuse``:  ``outer = fused // extent(inner)``, ``inner = fused % extent(inner)``

Loops iterate from 0; an axis whose range starts elsewhere (a stage
computed inside another one's loop) adds its start to the recovered index.
"""

from __future__ import annotations

from aot.errors import AotError
from aot.te.intrin import TensorIntrin
from aot.te.tensor import ComputeOp, IterVar, Operation, PlaceholderOp, Range, Tensor
from aot.tir import expr as E
from aot.tir.functor import Mutator, substitute


class ScheduleError(AotError):
    """A schedule primitive was used in a way that breaks one of its rules."""


class Split:
    def __init__(self, parent, outer, inner, factor, nparts):
        self.parent, self.outer, self.inner = parent, outer, inner
        self.factor, self.nparts = factor, nparts


class Fuse:
    def __init__(self, outer, inner, fused):
        self.outer, self.inner, self.fused = outer, inner, fused


def _const_int(x, what):
    if isinstance(x, E.IntImm):
        x = x.value
    if not isinstance(x, int) or isinstance(x, bool) or x < 1:
        raise ScheduleError(f"{what} must be a positive integer, got {x!r}")
    return x


class Stage:
    """The schedule of one operation; obtained with ``s[T]``."""

    def __init__(self, op: Operation, schedule):
        self.op = op
        self.origin_op = op
        self.schedule = schedule
        roots = list(op.axis) + list(op.reduce_axis) if isinstance(op, ComputeOp) else []
        self.all_iter_vars: list[IterVar] = list(roots)
        self.leaf_iter_vars: list[IterVar] = list(roots)
        self.relations: list = []
        self.iter_attrs: dict[IterVar, dict] = {}
        self.attach_type = "root"
        self.attach_stage: Stage | None = None
        self.attach_ivar: IterVar | None = None
        self.scope = "global"

    @property
    def name(self) -> str:
        return self.op.name

    def __repr__(self):
        return f"stage({self.name})"

    # -- checks ----------------------------------------------------------
    def _need_compute(self, what):
        if not isinstance(self.op, ComputeOp):
            raise ScheduleError(f"stage {self.name}: {what} needs a compute stage, "
                                f"{self.name} is a placeholder (an input)")

    def _check_leaf(self, iv, primitive):
        if not isinstance(iv, IterVar):
            raise ScheduleError(f"stage {self.name}: {primitive} takes an axis (IterVar), "
                                f"got {type(iv).__name__}")
        if iv in self.leaf_iter_vars:
            return self.leaf_iter_vars.index(iv)
        if iv in self.all_iter_vars:
            raise ScheduleError(
                f"stage {self.name}: cannot {primitive} axis {iv.name}: it no longer exists "
                f"as a loop (it was already split or fused); use the axes that replaced it: "
                f"{', '.join(v.name for v in self.leaf_iter_vars)}")
        owner = self.schedule._owner_of(iv)
        where = f"it belongs to stage {owner.name}" if owner else "it is not an axis of this stage"
        raise ScheduleError(f"stage {self.name}: cannot {primitive} axis {iv.name}: {where}")

    def _attr(self, iv) -> dict:
        return self.iter_attrs.setdefault(iv, {})

    # -- loop transformations -------------------------------------------
    def split(self, parent: IterVar, factor=None, nparts=None):
        """Split ``parent`` (extent E) into ``outer, inner`` loops with
        ``parent = outer * factor + inner``.

        With ``factor=f``: ``inner`` runs over ``[0, f)`` and ``outer`` over
        ``[0, ceil(E / f))``.  With ``nparts=n``: ``outer`` runs over
        ``[0, n)`` and ``inner`` over ``[0, ceil(E / n))``.  When the product
        of the two extents exceeds E, the body is guarded by
        ``likely(outer * factor + inner < E)`` and the ``loop_partition``
        pass peels the last iterations off into a tail without the guard in
        the main part.  Returns ``(outer, inner)``.
        """
        self._need_compute("split")
        pos = self._check_leaf(parent, "split")
        if (factor is None) == (nparts is None):
            raise ScheduleError(f"stage {self.name}: split {parent.name} needs exactly one "
                                "of factor= or nparts=")
        if factor is not None:
            factor = _const_int(factor, f"stage {self.name}: split factor of {parent.name}")
        else:
            nparts = _const_int(nparts, f"stage {self.name}: split nparts of {parent.name}")
        outer = IterVar(None, parent.name + ".outer", parent.iter_type)
        inner = IterVar(None, parent.name + ".inner", parent.iter_type)
        self.relations.append(Split(parent, outer, inner, factor, nparts))
        self.all_iter_vars += [outer, inner]
        self.leaf_iter_vars[pos:pos + 1] = [outer, inner]
        return outer, inner

    def fuse(self, *ivs: IterVar) -> IterVar:
        """Fuse adjacent loops (outermost first) into one: for two loops,
        ``fused`` runs over ``[0, E_outer * E_inner)`` with
        ``outer = fused // E_inner`` and ``inner = fused % E_inner``.  No
        guard is needed.  More than two loops fuse pairwise from the left.
        """
        self._need_compute("fuse")
        if len(ivs) == 1 and isinstance(ivs[0], (list, tuple)):
            ivs = tuple(ivs[0])
        if len(ivs) < 2:
            raise ScheduleError(f"stage {self.name}: fuse needs at least two axes")
        fused = ivs[0]
        for iv in ivs[1:]:
            fused = self._fuse2(fused, iv)
        return fused

    def _fuse2(self, outer, inner):
        po, pi = self._check_leaf(outer, "fuse"), self._check_leaf(inner, "fuse")
        if pi != po + 1:
            raise ScheduleError(
                f"stage {self.name}: cannot fuse {outer.name} and {inner.name}: fused axes "
                f"must be adjacent loops, outer first (current order: "
                f"{', '.join(v.name for v in self.leaf_iter_vars)}); reorder them first")
        if outer.iter_type != inner.iter_type:
            raise ScheduleError(
                f"stage {self.name}: cannot fuse {outer.name} ({outer.iter_type}) with "
                f"{inner.name} ({inner.iter_type}): a loop cannot mix output and reduction axes")
        fused = IterVar(None, f"{outer.name}.{inner.name}.fused", outer.iter_type)
        self.relations.append(Fuse(outer, inner, fused))
        self.all_iter_vars.append(fused)
        self.leaf_iter_vars[po:po + 2] = [fused]
        return fused

    def reorder(self, *ivs: IterVar) -> None:
        """Put the given loops in this order, in the positions they occupy
        together; other loops keep their positions.  Indices are unchanged."""
        self._need_compute("reorder")
        if len(ivs) == 1 and isinstance(ivs[0], (list, tuple)):
            ivs = tuple(ivs[0])
        positions = [self._check_leaf(iv, "reorder") for iv in ivs]
        if len(set(positions)) != len(positions):
            raise ScheduleError(f"stage {self.name}: reorder got the same axis twice")
        for pos, iv in zip(sorted(positions), ivs):
            self.leaf_iter_vars[pos] = iv

    def tile(self, x_parent, y_parent, x_factor, y_factor):
        """Split ``x`` and ``y`` by the factors and reorder to
        ``x.outer, y.outer, x.inner, y.inner`` (see :meth:`split` for the
        index arithmetic and tails).  Returns those four axes."""
        xo, xi = self.split(x_parent, factor=x_factor)
        yo, yi = self.split(y_parent, factor=y_factor)
        self.reorder(xo, yo, xi, yi)
        return xo, yo, xi, yi

    def _set_kind(self, iv, kind, primitive):
        self._need_compute(primitive)
        self._check_leaf(iv, primitive)
        attr = self._attr(iv)
        if attr.get("kind", kind) != kind:
            raise ScheduleError(f"stage {self.name}: axis {iv.name} is already marked "
                                f"{attr['kind']}, cannot also {primitive} it")
        attr["kind"] = kind

    def unroll(self, iv: IterVar) -> None:
        """Replicate the loop body once per iteration: the ``unroll`` pass
        substitutes ``iv = 0, 1, ..., extent-1`` into copies of the body.
        A split guard on ``iv`` stays in the copies unless ``loop_partition``
        peeled the tail first (it runs before ``unroll``)."""
        self._set_kind(iv, "unrolled", "unroll")

    def vectorize(self, iv: IterVar) -> None:
        """Compute the iterations of ``iv`` as one vector operation.  The
        ``vectorize`` pass turns ``iv`` into lanes (``ramp(base, 1, n)``)
        when the body is a store whose index moves by one element per
        iteration and every operation has a C vector form; otherwise the
        loop stays a scalar loop.  Non-divisible tails are peeled by
        ``loop_partition`` first."""
        self._set_kind(iv, "vectorized", "vectorize")

    def parallel(self, iv: IterVar) -> None:
        """Run iterations of ``iv`` on several threads (OpenMP).  Accepted
        for host targets only; reduction axes cannot be parallel."""
        if iv.iter_type == "reduce":
            raise ScheduleError(f"stage {self.name}: cannot parallelize the reduction axis "
                                f"{iv.name}: iterations would race on the accumulator")
        self._set_kind(iv, "parallel", "parallel")

    def pragma(self, iv: IterVar, key: str, value=None) -> None:
        """Annotate loop ``iv``.  ``import_c`` inserts ``value`` (C source:
        declarations or definitions of extern functions) before the kernel;
        ``unroll_hint`` emits ``#pragma GCC unroll value``; other keys are
        printed as comments."""
        self._need_compute("pragma")
        self._check_leaf(iv, "pragma")
        self._attr(iv).setdefault("pragmas", []).append((key, value))

    def tensorize(self, iv: IterVar, intrin: TensorIntrin) -> None:
        """Replace the loops from ``iv`` inward by ``intrin``.  The loops
        must match the intrinsic's compute: same number of output and
        reduction axes in the same order, equal extents, the same
        expression; each tensor region they cover becomes a buffer view
        with ``elem_offset = sum(start_d * stride_d)`` and the tensor's
        strides (see :func:`aot.te.decl_tensor_intrin`).  Loops carrying a
        split guard (a factor that does not divide its axis) cannot be
        tensorized.  Checked during lowering, which raises ScheduleError on
        a mismatch."""
        self._need_compute("tensorize")
        self._check_leaf(iv, "tensorize")
        if not isinstance(intrin, TensorIntrin):
            raise ScheduleError(f"stage {self.name}: tensorize needs an intrinsic from "
                                "decl_tensor_intrin")
        self._attr(iv)["tensorize"] = intrin

    # -- placement ---------------------------------------------------------
    def compute_at(self, parent: Stage, iv: IterVar) -> None:
        """Compute this stage inside loop ``iv`` of ``parent`` (a consumer).
        Each iteration of ``iv`` computes just the region the rest of the
        consumer's body reads (found by bound inference) into a local buffer
        indexed from the region's start; where that region might exceed the
        tensor's shape, the producer's body is guarded by its bounds.

        The buffer exists only inside ``iv``, so every reader of this stage
        must run there: ``parent`` itself, or a stage attached (directly or
        through other attached stages) to ``parent`` at ``iv`` or a loop
        inside it.  Lowering checks this once the whole schedule is known
        and raises ScheduleError naming the reader outside; a stage read by
        both ``parent`` and ``parent``'s consumer belongs at a loop of that
        consumer."""
        self._need_compute("compute_at")
        if not isinstance(parent, Stage):
            raise ScheduleError(f"stage {self.name}: compute_at takes a stage (s[T]), "
                                f"got {type(parent).__name__}")
        parent._check_leaf(iv, "attach to")
        if not self.schedule._reads(parent, self):
            raise ScheduleError(
                f"stage {self.name}: cannot compute_at stage {parent.name}: {parent.name} does "
                f"not read {self.name} (compute_at needs a consumer)")
        self.attach_type, self.attach_stage, self.attach_ivar = "scope", parent, iv

    def compute_inline(self) -> None:
        """Substitute this stage's expression into every reader; the stage
        gets no loops or buffer.  Reductions cannot be inlined."""
        self._need_compute("compute_inline")
        if self.op.reduce_axis:
            raise ScheduleError(f"stage {self.name}: cannot compute_inline a reduction")
        self.attach_type, self.attach_stage, self.attach_ivar = "inline", None, None

    def compute_root(self) -> None:
        """Compute the whole tensor before its readers (the default)."""
        self._need_compute("compute_root")
        self.attach_type, self.attach_stage, self.attach_ivar = "root", None, None

    def set_scope(self, scope: str) -> None:
        if scope not in ("global", "local"):
            raise ScheduleError(f"stage {self.name}: unknown storage scope {scope!r}: "
                                "use 'global' or 'local'")
        self.scope = scope


class _ReplaceTensor(Mutator):
    def __init__(self, old_op, new_tensor):
        self.old_op, self.new_tensor = old_op, new_tensor

    def visit_ProducerLoad(self, e):
        idx = [self.expr(i) for i in e.indices]
        if e.tensor.op is self.old_op:
            return E.ProducerLoad(self.new_tensor, idx)
        return E.ProducerLoad(e.tensor, idx)


class Schedule:
    """The stages of a set of output operations, producers first."""

    def __init__(self, outputs: list[Operation]):
        self.outputs = outputs
        # id(placeholder op) -> (placeholder, pack): see store_constant_as
        self.constant_layouts: dict[int, tuple] = {}
        self.stages: list[Stage] = []
        self._by_op: dict[int, Stage] = {}
        #: (name, fn) rewrites of the lowered function, run after the loop passes
        self.rewrites: list[tuple[str, object]] = []
        for op in _post_order(outputs):
            st = Stage(op, self)
            self.stages.append(st)
            self._by_op[id(op)] = st

    def store_constant_as(self, tensor: Tensor, pack) -> None:
        """Store the compile-time constant ``tensor`` (a placeholder the kernel
        builder fills) as ``pack(data)``: an array of the same dtype in the
        layout a tensor intrinsic reads (e.g. weights pre-widened to int16 pairs,
        as bytes), of any length.  Only tensor intrinsics may then read it,
        through pointers: :class:`aot.kernels.KernelBuilder` refuses a loop nest
        that still loads it element by element."""
        if not isinstance(tensor.op, PlaceholderOp):
            raise ScheduleError(f"store_constant_as: {tensor.name} is computed, not a constant")
        if id(tensor.op) in self.constant_layouts:
            raise ScheduleError(f"store_constant_as: {tensor.name} already has a layout")
        self.constant_layouts[id(tensor.op)] = (tensor, pack)

    def __getitem__(self, key) -> Stage:
        op = key.op if isinstance(key, Tensor) else key
        st = self._by_op.get(id(op))
        if st is None:
            name = getattr(op, "name", repr(op))
            raise ScheduleError(f"{name} is not part of this schedule; stages: "
                                f"{', '.join(s.name for s in self.stages)}")
        return st

    def stage_of(self, op) -> Stage:
        return self[op]

    def rewrite(self, name: str, fn) -> None:
        """Run ``fn(PrimFunc) -> PrimFunc`` on the lowered function after the
        loop passes (``lower`` dumps it under ``name``): for what only the
        flat loop IR shows, such as two adjacent helper calls of tensorized
        stages that one helper computes without their intermediate buffer.
        ``fn`` must keep the function's meaning."""
        if any(n == name for n, _ in self.rewrites):
            raise ScheduleError(f"the schedule already has a rewrite named {name!r}")
        self.rewrites.append((name, fn))

    def _owner_of(self, iv):
        for st in self.stages:
            if iv in st.all_iter_vars:
                return st
        return None

    def _reads(self, reader: Stage, producer: Stage) -> bool:
        """Does ``reader`` read ``producer``, directly or through inlined stages?"""
        for t in reader.op.input_tensors:
            st = self[t.op]
            if st is producer or (st.attach_type == "inline" and self._reads(st, producer)):
                return True
        return False

    def cache_read(self, tensor: Tensor, scope: str, readers) -> Tensor:
        """Copy ``tensor`` into a new stage ``<name>.<scope>`` that ``readers``
        read instead: ``T.local[i] = T[i]`` (full shape while computed at the
        root; place it with ``compute_at`` to copy only the region used).
        Returns the copy."""
        readers = readers if isinstance(readers, (list, tuple)) else [readers]
        src = self[tensor]
        names = [iv.name for iv in src.op.axis] if isinstance(src.op, ComputeOp) else \
            [f"ax{n}" for n in range(len(tensor.shape))]
        axis = [IterVar(Range(0, d), n) for n, d in zip(names, tensor.shape)]
        copy = ComputeOp(f"{tensor.name}.{scope}", axis,
                         E.ProducerLoad(tensor, [iv.var for iv in axis])).output(0)
        for r in readers:
            st = self[r]
            if not any(t.op is tensor.op or self[t.op] is src for t in st.op.input_tensors):
                raise ScheduleError(f"cache_read: stage {st.name} does not read {tensor.name}")
            st.op = st.op.with_body(_ReplaceTensor(tensor.op, copy).expr(st.op.body))
            self._by_op[id(st.op)] = st
        new = Stage(copy.op, self)
        new.scope = scope
        self.stages.insert(self.stages.index(src) + 1, new)
        self._by_op[id(copy.op)] = new
        return copy

    def cache_write(self, tensor: Tensor, scope: str) -> Tensor:
        """Compute ``tensor`` into a new stage ``<name>.<scope>`` and make the
        original stage a copy of it: ``T[i] = T.local[i]``.  Must come before
        any other primitive on ``tensor``'s stage.  Returns the new tensor,
        whose stage owns the original reduction axes."""
        st = self[tensor]
        st._need_compute("cache_write")
        if st.relations or st.iter_attrs:
            raise ScheduleError(f"stage {st.name}: cache_write must be called before "
                                "other primitives on this stage")
        old = st.op
        axis = [IterVar(iv.dom, iv.name + ".c") for iv in old.axis]
        body = substitute(old.body, {a.var: b.var for a, b in zip(old.axis, axis)})
        cache_op = ComputeOp(f"{old.name}.{scope}", axis, body, old.reduce_axis)
        cache = cache_op.output(0)
        st.op = ComputeOp(old.name, old.axis, cache[tuple(iv.var for iv in old.axis)])
        st.all_iter_vars = list(old.axis)
        st.leaf_iter_vars = list(old.axis)
        self._by_op[id(st.op)] = st
        new = Stage(cache_op, self)
        new.scope = scope
        self.stages.insert(self.stages.index(st), new)
        self._by_op[id(cache_op)] = new
        return cache


def _post_order(outputs):
    seen, order = set(), []

    def visit(op):
        if id(op) in seen:
            return
        seen.add(id(op))
        if isinstance(op, ComputeOp):
            for t in op.input_tensors:
                visit(t.op)
        order.append(op)

    for op in outputs:
        visit(op)
    return order


def create_schedule(ops) -> Schedule:
    """A schedule with default loops for ``ops`` (an op, a tensor or a list)."""
    ops = ops if isinstance(ops, (list, tuple)) else [ops]
    out = []
    for op in ops:
        op = op.op if isinstance(op, Tensor) else op
        if not isinstance(op, (ComputeOp, PlaceholderOp)):
            raise ScheduleError(f"create_schedule takes operations (T.op), got {op!r}")
        out.append(op)
    return Schedule(out)
