"""From a schedule to a PrimFunc: inlining, bound inference, loop nests.

``schedule_to_primfunc`` is the ``schedule_ops`` step:

1. *inline*: readers of ``compute_inline`` stages get the stage's
   expression substituted;
2. *bound inference* (consumers first): a root stage covers its whole
   shape; a stage computed at loop ``iv`` of a consumer covers the union of
   the regions its readers touch while the loops enclosing ``iv`` stay fixed
   and every other loop runs over its range (interval arithmetic on the
   index expressions).  Every reader of such a stage must run inside
   ``iv`` (the stage's buffer exists only there), else ScheduleError.
   Extents then flow through split/fuse relations to the leaf loops, and
   indices flow back (see aot.te.schedule);
3. *loop nests*: one nest per stage, the reduction's initialization nest
   placed before its first reduction loop, attached stages (with their
   scratch buffers) at the top of their loop's body, split guards at the
   innermost loop that binds all their variables, tensorized loops replaced
   by the intrinsic;
4. *flatten*: tensor reads become loads of flat buffers.

``lower`` then runs the loop passes (aot.tir.passes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aot.te.schedule import Fuse, Schedule, ScheduleError, Split, Stage
from aot.te.tensor import ComputeOp, PlaceholderOp, Tensor
from aot.te.tensorize import tensorize
from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import Mutator, free_vars, substitute, walk
from aot.tir.passes import run_pipeline
from aot.tir.simplify import Analyzer, symbolic_bound


@dataclass
class Guard:
    cond: E.PrimExpr
    vars: frozenset
    reduce: bool


@dataclass
class StageInfo:
    root_min: dict = field(default_factory=dict)
    ext: dict = field(default_factory=dict)      # IterVar -> int
    offset: dict = field(default_factory=dict)   # IterVar -> PrimExpr
    value: dict = field(default_factory=dict)    # root IterVar -> PrimExpr
    guards: list = field(default_factory=list)
    enclosing: list = field(default_factory=list)  # loop Vars around the stage
    buffer: S.Buffer | None = None
    buf_min: list | None = None                  # region start per dim (local buffers)


class _Inliner(Mutator):
    def __init__(self, sch: Schedule):
        self.sch = sch

    def visit_ProducerLoad(self, e):
        idx = [self.expr(i) for i in e.indices]
        st = self.sch[e.tensor.op]
        if st.attach_type == "inline":
            body = substitute(st.op.body, {iv.var: i for iv, i in zip(st.op.axis, idx)})
            return self.expr(body)
        return E.ProducerLoad(e.tensor, idx)


class _Flatten(Mutator):
    """Tensor reads become loads of the flat buffers of a lowering."""

    def __init__(self, low: _Lowering):
        self.low = low

    def visit_ProducerLoad(self, e):
        low = self.low
        idx = [self.expr(i) for i in e.indices]
        st = low.sch[e.tensor.op]
        if isinstance(st.op, PlaceholderOp):
            buf = low.placeholder_buf.get(id(st))
            if buf is None:
                raise ScheduleError(
                    f"input {st.name} is read but missing from the argument list: "
                    f"pass it to lower/build")
            return E.Load(e.dtype, buf, low.buffer_index(buf, idx))
        return E.Load(e.dtype, low.info[st].buffer, low.buffer_index(st, idx))


def _const(x, what) -> int:
    if isinstance(x, E.IntImm):
        return x.value
    raise ScheduleError(f"{what} must be a constant, got {x}")


class _Lowering:
    def __init__(self, sch: Schedule, args, name: str):
        self.sch, self.name = sch, name
        self.args = [a for a in args]
        self.an = Analyzer()
        self.info: dict[Stage, StageInfo] = {}
        self.imports: list[str] = []
        self.stages = [st for st in sch.stages
                       if isinstance(st.op, ComputeOp) and st.attach_type != "inline"]
        inliner = _Inliner(sch)
        self.body_of = {st: inliner.expr(st.op.body) for st in self.stages}
        self.params: list[S.Buffer] = []
        self.arg_stage: dict[Stage, S.Buffer] = {}
        self.placeholder_buf: dict[int, S.Buffer] = {}
        for a in self.args:
            if not isinstance(a, Tensor):
                raise ScheduleError(f"lower: arguments must be tensors, got {a!r}")
            buf = S.Buffer(a.name, a.dtype, a.shape)
            self.params.append(buf)
            if isinstance(a.op, PlaceholderOp) and id(a.op) not in sch._by_op:
                continue  # an input the kernel does not read: still a parameter
            st = sch[a.op]
            if isinstance(st.op, PlaceholderOp):
                self.placeholder_buf[id(st)] = buf
            else:
                if st.attach_type == "inline":
                    raise ScheduleError(f"stage {st.name}: an argument of the function "
                                        "cannot be computed inline")
                self.arg_stage[st] = buf

    # -- helpers -----------------------------------------------------------
    def readers(self, st: Stage) -> list[Stage]:
        out = []
        for r in self.stages:
            if any(isinstance(n, E.ProducerLoad) and self.sch[n.tensor.op] is st
                   for n in walk(self.body_of[r])):
                out.append(r)
        return out

    def loads_of(self, st: Stage, expr) -> list[E.ProducerLoad]:
        return [n for n in walk(expr)
                if isinstance(n, E.ProducerLoad) and self.sch[n.tensor.op] is st]

    def bind_range(self, var, ext):
        self.an.bind(var, 0, ext - 1)

    # -- bound inference -------------------------------------------------
    def infer_bounds(self) -> None:
        for st in reversed(self.stages):
            info = StageInfo()
            self.info[st] = info
            op = st.op
            if st.attach_type == "scope":
                parent = st.attach_stage
                if parent not in self.info:
                    raise ScheduleError(f"stage {st.name}: compute_at target {parent.name} is "
                                        "not computed (is it inlined?)")
                self.check_attach_encloses_readers(st)
                pinfo = self.info[parent]
                pos = parent.leaf_iter_vars.index(st.attach_ivar)
                info.enclosing = pinfo.enclosing + [
                    iv.var for iv in parent.leaf_iter_vars[:pos + 1]]
                region = self.region(st, set(info.enclosing))
            else:
                region = [(E.const(0), _const(d, f"stage {st.name}: shape")) for d in op.shape]
            for iv, (mn, ext) in zip(op.axis, region):
                info.root_min[iv], info.ext[iv] = mn, ext
            for iv in op.reduce_axis:
                info.root_min[iv] = iv.dom.min
                info.ext[iv] = _const(iv.dom.extent, f"reduction axis {iv.name} extent")
            self.propagate(st, info)
            if st.attach_type == "scope":
                self.bound_checks(st, info, region)

    def check_attach_encloses_readers(self, st: Stage) -> None:
        """Every reader of ``st`` must run inside its attach loop.

        ``st``'s scratch buffer lives in the body of loop ``iv`` of its
        attach stage P, and holds only the region read during one iteration
        of ``iv``.  A reader qualifies when it is P itself or when its chain
        of attach points reaches P at ``iv`` or at a loop inside ``iv``; any
        other reader (P's own consumer, a stage attached at a loop outside
        ``iv``) would read the buffer out of scope or before it is computed.
        """
        parent, iv = st.attach_stage, st.attach_ivar
        leaf = parent.leaf_iter_vars
        if iv not in leaf:
            raise ScheduleError(f"stage {st.name}: compute_at axis {iv.name} of {parent.name} "
                                "no longer exists (it was split or fused afterwards)")
        pos = leaf.index(iv)
        for r in self.readers(st):
            if not self.runs_inside(r, parent, pos):
                raise ScheduleError(
                    f"stage {st.name}: computed at {parent.name}.{iv.name}, but its reader "
                    f"{r.name} runs outside that loop (a compute_at point must enclose every "
                    f"reader of the stage); attach {st.name} at a loop that encloses both "
                    f"{parent.name} and {r.name}, or compute_root it")

    @staticmethod
    def runs_inside(st: Stage, parent: Stage, pos: int) -> bool:
        """Does ``st`` run inside leaf loop ``pos`` of ``parent``?"""
        if st is parent:
            return True
        while st.attach_type == "scope":
            if st.attach_stage is parent:
                return parent.leaf_iter_vars.index(st.attach_ivar) >= pos
            st = st.attach_stage
        return False

    def region(self, st: Stage, fixed: set):
        ndim = len(st.op.shape)
        lo = [None] * ndim
        hi = [None] * ndim
        for r in self.readers(st):
            rinfo = self.info[r]
            vmap = {iv.var: rinfo.value[iv] for iv in rinfo.value}
            relax = {}
            for v in list(rinfo.offset.values()) + list(rinfo.value.values()):
                for fv in free_vars(v):
                    if fv not in fixed and fv in self.an.ranges:
                        lo_r, hi_r = self.an.ranges[fv]
                        relax[fv] = (E.const(lo_r), E.const(hi_r))
            for load in self.loads_of(st, self.body_of[r]):
                for d, idx in enumerate(load.indices):
                    b = symbolic_bound(substitute(idx, vmap), relax, self.an)
                    if b is None:
                        b = (E.const(0), E.const(_const(st.op.shape[d], "shape") - 1))
                    lo[d] = b[0] if lo[d] is None else self.an.simplify(E.min_(lo[d], b[0]))
                    hi[d] = b[1] if hi[d] is None else self.an.simplify(E.max_(hi[d], b[1]))
        out = []
        for d in range(ndim):
            if lo[d] is None:  # not read inside the attach scope: compute nothing
                out.append((E.const(0), 1))
                continue
            ext = self.an.simplify(hi[d] - lo[d] + 1)
            if not isinstance(ext, E.IntImm):
                _, upper = self.an.bound(ext)
                if upper is None:
                    raise ScheduleError(
                        f"stage {st.name}: cannot bound the region of dimension {d} computed "
                        f"at {st.attach_stage.name}.{st.attach_ivar.name} (extent {ext})")
                ext = E.const(upper)
            out.append((lo[d], ext.value))
        return out

    def propagate(self, st: Stage, info: StageInfo) -> None:
        for rel in st.relations:
            if isinstance(rel, Split):
                n = info.ext[rel.parent]
                if rel.factor is not None:
                    inner, outer = rel.factor, -(-n // rel.factor)
                else:
                    outer, inner = rel.nparts, -(-n // rel.nparts)
                info.ext[rel.outer], info.ext[rel.inner] = outer, inner
            else:
                info.ext[rel.fused] = info.ext[rel.outer] * info.ext[rel.inner]
        for iv in st.leaf_iter_vars:
            info.offset[iv] = iv.var
            self.bind_range(iv.var, info.ext[iv])
        for rel in reversed(st.relations):
            if isinstance(rel, Split):
                inner_ext = info.ext[rel.inner]
                info.offset[rel.parent] = self.an.simplify(
                    info.offset[rel.outer] * inner_ext + info.offset[rel.inner])
            elif isinstance(rel, Fuse):
                f, n = info.offset[rel.fused], info.ext[rel.inner]
                info.offset[rel.outer] = self.an.simplify(E.floordiv(f, n))
                info.offset[rel.inner] = self.an.simplify(E.floormod(f, n))
        for rel in st.relations:
            if isinstance(rel, Split) and \
                    info.ext[rel.outer] * info.ext[rel.inner] != info.ext[rel.parent]:
                self.add_guard(st, info, info.offset[rel.parent] < info.ext[rel.parent])
        op = st.op
        for iv in list(op.axis) + list(op.reduce_axis):
            info.value[iv] = self.an.simplify(info.root_min[iv] + info.offset[iv])

    def add_guard(self, st, info, cond):
        cond = self.an.simplify(cond)
        if isinstance(cond, E.IntImm):
            if cond.value:
                return
        leaf_vars = {iv.var: iv for iv in st.leaf_iter_vars}
        used = frozenset(v for v in free_vars(cond) if v in leaf_vars)
        red = any(leaf_vars[v].iter_type == "reduce" for v in used)
        info.guards.append(Guard(cond, used, red))

    def bound_checks(self, st, info, region):
        for iv, (mn, ext), dim in zip(st.op.axis, region, st.op.shape):
            if not self.an.can_prove(mn >= 0):
                self.add_guard(st, info, info.value[iv] >= 0)
            if not self.an.can_prove(mn + ext <= dim):
                self.add_guard(st, info, info.value[iv] < dim)

    # -- buffers -------------------------------------------------------------
    def make_buffers(self) -> None:
        for st in self.stages:
            info = self.info[st]
            if st in self.arg_stage:
                info.buffer = self.arg_stage[st]
            elif st.attach_type == "scope":
                shape = [info.ext[iv] for iv in st.op.axis]
                info.buffer = S.Buffer(st.name, st.op.dtype, shape, scope="local")
                info.buf_min = [info.root_min[iv] for iv in st.op.axis]
            else:
                info.buffer = S.Buffer(st.name, st.op.dtype, st.op.shape, scope="local")

    def buffer_index(self, st_or_buf, indices):
        if isinstance(st_or_buf, S.Buffer):
            return self.an.simplify(st_or_buf.offset_of(indices))
        info = self.info[st_or_buf]
        if info.buf_min is not None:
            indices = [i - m for i, m in zip(indices, info.buf_min)]
        return self.an.simplify(info.buffer.offset_of(indices))

    def flatten(self, expr):
        return self.an.simplify(_Flatten(self).expr(expr))

    # -- loop nests ------------------------------------------------------------
    def attached_at(self, st, iv):
        return [t for t in self.stages
                if t.attach_type == "scope" and t.attach_stage is st and t.attach_ivar is iv]

    def with_producers(self, producers, body):
        """Producers' nests before ``body``, inside their scratch buffers."""
        stmts = [self.make_stage(p) for p in producers]
        out = S.seq(*stmts, body)
        for p in reversed(producers):
            if p not in self.arg_stage:
                out = S.Allocate(self.info[p].buffer, out)
        return out

    def loops(self, st, ivs, inner, outside: set, guards, attach: bool):
        info = self.info[st]
        pending = [g for g in guards if not g.vars <= outside]

        def rec(k, bound):
            if k == len(ivs):
                return inner
            iv = ivs[k]
            nb = bound | {iv.var}
            body = rec(k + 1, nb)
            if attach:
                producers = self.attached_at(st, iv)
                if producers:
                    body = self.with_producers(producers, body)
            ready = [g.cond for g in pending if g.vars <= nb and not g.vars <= bound]
            if ready:
                cond = ready[0]
                for c in ready[1:]:
                    cond = E.binary("and", cond, c)
                body = S.IfThenElse(E.likely(cond), body)
            attrs = st.iter_attrs.get(iv, {})
            pragmas = attrs.get("pragmas", [])
            for key, value in pragmas:
                if key == "import_c" and value not in self.imports:
                    self.imports.append(value)
            return S.For(iv.var, 0, info.ext[iv], attrs.get("kind", "serial"), body,
                         [p for p in pragmas if p[0] != "import_c"])

        return rec(0, set(outside))

    def make_stage(self, st: Stage) -> S.Stmt:
        info, op = self.info[st], st.op
        leaf = st.leaf_iter_vars
        n = len(leaf)
        vmap = {iv.var: info.value[iv] for iv in info.value}
        idx = [info.value[iv] for iv in op.axis]
        store_index = self.buffer_index(st, idx)
        body = self.body_of[st]
        buf = info.buffer
        init = None
        if isinstance(body, E.Reduce):
            src = self.flatten(substitute(body.source, vmap))
            acc = E.Load(buf.dtype, buf, store_index)
            update = S.Store(buf, self.an.simplify(body.combiner.combine(acc, src)), store_index)
            if body.condition is not None:
                update = S.IfThenElse(self.flatten(substitute(body.condition, vmap)), update)
            init_value = body.init if body.init is not None else body.combiner.identity(buf.dtype)
            init = S.Store(buf, init_value, store_index)
        else:
            update = S.Store(buf, self.flatten(substitute(body, vmap)), store_index)
        p = next((k for k, iv in enumerate(leaf) if iv.iter_type == "reduce"), n)
        t = next((k for k, iv in enumerate(leaf) if "tensorize" in st.iter_attrs.get(iv, {})), n)
        if t < n:
            whole, reset, upd = tensorize(self, st, t, p)
            if p >= t:
                update = whole
            else:
                init, update = reset, upd
        q = min(p, t)
        common = leaf[:q]
        outside = {iv.var for iv in common} | set(info.enclosing)
        if p < t:
            dp = [iv for iv in leaf[p:t] if iv.iter_type != "reduce"]
            init_nest = self.loops(st, dp, init, outside,
                                   [g for g in info.guards if not g.reduce], attach=False)
            main = self.loops(st, leaf[p:t], update, outside, info.guards, attach=True)
            at_q = S.seq(init_nest, main)
        else:
            at_q = update
        return self.loops(st, common, at_q, set(info.enclosing), info.guards, attach=True)

    def run(self) -> S.PrimFunc:
        for st in self.stages:
            if st.attach_type == "scope" and st.attach_stage not in self.stages:
                raise ScheduleError(f"stage {st.name}: compute_at target "
                                    f"{st.attach_stage.name} is inlined")
        for st in self.sch.stages:
            if isinstance(st.op, PlaceholderOp) and st.attach_type != "root":
                raise ScheduleError(f"stage {st.name}: a placeholder cannot be scheduled")
        self.infer_bounds()
        self.make_buffers()
        roots = [st for st in self.stages if st.attach_type == "root"]
        body = None
        for st in reversed(roots):
            nest = self.make_stage(st)
            body = S.seq(nest, body)
            if st not in self.arg_stage:
                body = S.Allocate(self.info[st].buffer, body)
        if body is None:
            body = S.Evaluate(E.const(0))
        return S.PrimFunc(self.name, self.params, body, {"imports": list(self.imports)})


def schedule_to_primfunc(sch: Schedule, args, name: str = "default_function") -> S.PrimFunc:
    """Lower a schedule to a loop nest (no loop passes applied)."""
    return _Lowering(sch, args, name).run()


def lower(sch: Schedule, args, name: str = "default_function", passes=None, disabled=(),
          dump=None) -> S.PrimFunc:
    """Lower a schedule and run the loop passes.

    ``passes`` is a list of pass names (default: all of
    :data:`aot.tir.passes.DEFAULT_PIPELINE`); ``disabled`` names passes to
    skip; ``dump(name, func)`` sees the function after ``schedule_ops`` and
    after each pass, then after each of the schedule's rewrites
    (:meth:`Schedule.rewrite`).
    """
    func = schedule_to_primfunc(sch, args, name)
    if dump is not None:
        dump("schedule_ops", func)
    func = run_pipeline(func, passes, disabled, dump)
    for rname, fn in sch.rewrites:
        func = fn(func)
        if dump is not None:
            dump(rname, func)
    return func

