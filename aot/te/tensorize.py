"""Tensorize: replace a stage's innermost loops by a tensor intrinsic.

Matching, for loops ``leaf[t:]`` of a stage and an intrinsic ``c = f(a, b)``:

1. the loops split into output loops and reduction loops; their numbers,
   order and extents must equal the intrinsic's axes and reduce axes;
2. each loop must add directly (coefficient 1) to exactly one original
   index, so the stage's index is ``start + intrinsic_var``;
3. with the loops renamed to the intrinsic's variables, the stage's
   expression must equal the intrinsic's, operator for operator, tensors
   mapped one to one; each tensor index may differ from the intrinsic's
   only by a term that does not depend on the intrinsic variables: that
   term is the region's start.  The intrinsic's tensors line up with the
   *trailing* dimensions of the stage's tensors; leading ones must be
   fixed (extent 1).

Each region then becomes a buffer view sharing the tensor's data with
``elem_offset = sum(start_d * stride_d)`` and the tensor's strides for the
covered dimensions; declared strides/offsets that are variables are bound
to those values, constants must agree.
"""

from __future__ import annotations

from aot.te.schedule import ScheduleError
from aot.te.tensor import PlaceholderOp
from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import children, free_vars, substitute
from aot.tir.simplify import linear


def _err(st, iv, msg):
    return ScheduleError(f"stage {st.name}: cannot tensorize at axis {iv.name}: {msg}")


def tensorize(low, st, t, p):
    """Return ``(whole, reset, update)`` statements for stage ``st``
    tensorized from leaf position ``t`` (``p`` = first reduction loop)."""
    info = low.info[st]
    iv0 = st.leaf_iter_vars[t]
    intrin = st.iter_attrs[iv0]["tensorize"]
    iop = intrin.op
    region = st.leaf_iter_vars[t:]
    dp = [iv for iv in region if iv.iter_type != "reduce"]
    red = [iv for iv in region if iv.iter_type == "reduce"]
    if len(dp) != len(iop.axis) or len(red) != len(iop.reduce_axis):
        raise _err(st, iv0, f"the loops from here in ({', '.join(v.name for v in region)}) have "
                            f"{len(dp)} output and {len(red)} reduction axes, intrinsic "
                            f"{intrin.name} has {len(iop.axis)} and {len(iop.reduce_axis)}")
    vmap = {}
    for mine, theirs in zip(dp + red, list(iop.axis) + list(iop.reduce_axis)):
        want = theirs.dom.extent
        if not (isinstance(want, E.IntImm) and want.value == info.ext[mine]):
            raise _err(st, iv0, f"loop {mine.name} has extent {info.ext[mine]}, the intrinsic's "
                                f"axis {theirs.name} has {want}")
        vmap[mine.var] = theirs.var
    for g in info.guards:
        if any(v in vmap for v in g.vars):
            raise _err(st, iv0, f"the loops carry the guard {g.cond} (a split that does not "
                                "divide its axis); choose factors that divide the extents")
    for iv in region:
        if low.attached_at(st, iv):
            raise _err(st, iv0, f"a stage is computed at {iv.name}, inside the tensorized loops")
    region_vars = set(vmap)
    values = {}
    for root, value in info.value.items():
        lf = linear(value)
        used = [(a, c) for a, c in lf.terms.values() if isinstance(a, E.Var) and a in region_vars]
        if any(v in region_vars for v in free_vars(value)) and (len(used) != 1 or used[0][1] != 1
                                                                or _nonlinear_use(lf, region_vars)):
            raise _err(st, iv0, f"axis {root.name} = {value} is not 'start + loop' for a single "
                                "tensorized loop (fused or scaled loops cannot be tensorized)")
        values[root.var] = substitute(value, vmap)
    mine_body = substitute(low.body_of[st], values)
    tmap: dict[int, object] = {}
    pairs: list[tuple] = []
    if not _match(mine_body, iop.body, tmap, pairs):
        raise _err(st, iv0, f"the stage computes {low.body_of[st]}, which does not match "
                            f"intrinsic {intrin.name}: {iop.body}")
    ivars = {iv.var for iv in list(iop.axis) + list(iop.reduce_axis)}
    starts: dict[int, list] = {}
    tensors: dict[int, tuple] = {}
    for mine, theirs in pairs:
        start = _region_start(low, st, iv0, mine.tensor, mine.indices, theirs.indices, ivars)
        key = id(theirs.tensor.op)
        if key in starts and [str(a) for a in starts[key]] != [str(b) for b in start]:
            raise _err(st, iv0, f"tensor {mine.tensor.name} is read at two different regions")
        starts[key] = start
        tensors[key] = (mine.tensor, theirs.tensor)
    out_idx = [values[iv.var] for iv in st.op.axis]
    out_start = _region_start(low, st, iv0, st.op.output(0), out_idx,
                              [iv.var for iv in iop.axis], ivars)
    ins = []
    bind_vars = {}
    for theirs in iop.input_tensors:
        mine, _ = tensors[id(theirs.op)]
        ins.append(_view(low, st, iv0, intrin, mine, theirs, starts[id(theirs.op)], bind_vars))
    outs = [_view(low, st, iv0, intrin, st.op.output(0), iop.output(0), out_start, bind_vars)]
    result = intrin.intrin_func(ins, outs)
    if isinstance(result, tuple):
        if len(result) != 3:
            raise _err(st, iv0, f"intrinsic {intrin.name} must return a statement or "
                                "(body, reset, update)")
        whole, reset, update = (_as_stmt(r, bind_vars) for r in result)
    else:
        whole, reset, update = _as_stmt(result, bind_vars), None, None
    if p < t and (reset is None or update is None):
        raise _err(st, iv0, f"part of the reduction runs outside the tensorized loops, so "
                            f"intrinsic {intrin.name} must return (body, reset, update)")
    if whole is None:
        whole = S.seq(reset, update)
    return whole, reset, update


def _nonlinear_use(lf, region_vars):
    for atom, _ in lf.terms.values():
        if not isinstance(atom, E.Var) and any(v in region_vars for v in free_vars(atom)):
            return True
    return False


def _as_stmt(r, bind_vars):
    if r is None:
        return None
    if isinstance(r, E.PrimExpr):
        r = S.Evaluate(r)
    return substitute(r, bind_vars)


def _match(a, b, tmap, pairs) -> bool:
    """Structural equality with tensors mapped one to one (indices skipped)."""
    if type(a) is not type(b) or a.dtype != b.dtype:
        return False
    if isinstance(a, E.ProducerLoad):
        ka = id(a.tensor.op)
        if tmap.get(ka, b.tensor.op) is not b.tensor.op:
            return False
        if any(v is a.tensor.op for k, v in tmap.items() if k != ka and v is b.tensor.op):
            return False
        tmap[ka] = b.tensor.op
        pairs.append((a, b))
        return True
    if isinstance(a, (E.IntImm, E.FloatImm)):
        return a.value == b.value
    if isinstance(a, E.Var):
        return a is b
    if isinstance(a, E.Binary) and a.op != b.op:
        return False
    if isinstance(a, E.Call) and (a.name != b.name or len(a.args) != len(b.args)):
        return False
    if isinstance(a, E.Reduce):
        if a.combiner.name != b.combiner.name or (a.condition is None) != (b.condition is None):
            return False
        if (a.init is None) != (b.init is None):
            return False
    ca, cb = children(a), children(b)
    return len(ca) == len(cb) and all(_match(x, y, tmap, pairs) for x, y in zip(ca, cb))


def _region_start(low, st, iv0, tensor, mine_idx, their_idx, ivars):
    n, m = len(mine_idx), len(their_idx)
    if m > n:
        raise _err(st, iv0, f"the intrinsic's operand has {m} dimensions, {tensor.name} has {n}")
    start = []
    for d in range(n):
        mi = low.an.simplify(mine_idx[d])
        if d < n - m:
            if any(v in ivars for v in free_vars(mi)):
                raise _err(st, iv0, f"dimension {d} of {tensor.name} varies inside the "
                                    "tensorized loops but the intrinsic's operand has no such "
                                    "dimension")
            start.append(mi)
            continue
        diff = low.an.simplify(mi - their_idx[d - (n - m)])
        if any(v in ivars for v in free_vars(diff)):
            raise _err(st, iv0, f"{tensor.name} is indexed with {mine_idx[d]} in dimension {d}, "
                                f"which is not the intrinsic's index {their_idx[d - (n - m)]} "
                                "plus a fixed start")
        start.append(diff)
    return start


def _view(low, st, iv0, intrin, mine, theirs, start, bind_vars):
    """A buffer view of ``mine``'s region for the intrinsic operand ``theirs``."""
    sst = low.sch[mine.op]
    if isinstance(sst.op, PlaceholderOp):
        buf, mins = low.placeholder_buf.get(id(sst)), None
        if buf is None:
            raise ScheduleError(f"input {mine.name} is missing from the argument list")
    else:
        buf, mins = low.info[sst].buffer, low.info[sst].buf_min
    rel = start if mins is None else [s - m for s, m in zip(start, mins)]
    offset = low.an.simplify(buf.elem_offset + buf.offset_of(rel))
    m = len(theirs.shape)
    strides = [low.an.simplify(s) for s in buf.strides[len(buf.shape) - m:]]
    decl = intrin.binds.get(theirs)
    name = decl.name if decl is not None else theirs.name
    if decl is not None:
        if decl.declared_strides is not None:
            for d, (want, have) in enumerate(zip(decl.declared_strides, strides)):
                _bind(st, iv0, intrin, name, f"stride {d}", want, have, bind_vars)
        else:
            compact = S.Buffer("c", theirs.dtype, theirs.shape).strides
            for want, have in zip(compact, strides):
                if not (isinstance(have, E.IntImm) and have.value == want.value):
                    raise _err(st, iv0, f"buffer {name} of intrinsic {intrin.name} is declared "
                                        f"compact but {mine.name}'s region has strides "
                                        f"{[str(s) for s in strides]}: declare strides with "
                                        "variables")
        if not E.is_const_int(decl.elem_offset, 0) or isinstance(decl.elem_offset, E.Var):
            _bind(st, iv0, intrin, name, "elem_offset", decl.elem_offset, offset, bind_vars)
        factor = decl.offset_factor or 1
        if factor > 1:
            lf = linear(offset)
            if lf.const % factor or any(c % factor for _, c in lf.terms.values()):
                raise _err(st, iv0, f"the region of {mine.name} starts at {offset}, not a "
                                    f"multiple of offset_factor={factor} of buffer {name}")
    return S.Buffer(name, buf.dtype, theirs.shape, strides, offset, buf.scope, data=buf.data)


def _bind(st, iv0, intrin, name, what, want, have, bind_vars):
    if isinstance(want, E.Var):
        if want in bind_vars and str(bind_vars[want]) != str(have):
            raise _err(st, iv0, f"{what} of buffer {name} is bound to both "
                                f"{bind_vars[want]} and {have}")
        bind_vars[want] = have
        return
    if isinstance(want, E.IntImm) and isinstance(have, E.IntImm) and want.value == have.value:
        return
    raise _err(st, iv0, f"{what} of buffer {name} of intrinsic {intrin.name} is declared {want} "
                        f"but the region has {have}")

