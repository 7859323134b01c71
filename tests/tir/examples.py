"""The seed examples as schedules: name -> () -> (schedule, args, kernel name).

Shared by the golden printouts and the cross-compilation tests."""

from __future__ import annotations

from aot import te, tir


def vadd_split():
    A = te.placeholder((1024, 1024), "float32", "A")
    B = te.placeholder((1024, 1024), "float32", "B")
    C = te.compute((1024, 1024), lambda x, y: A[x, y] + B[x, y], name="C")
    s = te.create_schedule(C.op)
    s[C].split(C.op.axis[0], factor=20)
    return s, [A, B, C], "vadd_split"


def vadd_tile_vectorize():
    A = te.placeholder((1024, 1024), "float32", "A")
    B = te.placeholder((1024, 1024), "float32", "B")
    C = te.compute((1024, 1024), lambda x, y: A[x, y] + B[x, y], name="C")
    s = te.create_schedule(C.op)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 32, 32)
    s[C].vectorize(yi)
    return s, [A, B, C], "vadd_tile_vectorize"


def reduce_split_fuse():
    A = te.placeholder((1024,), "float32", "A")
    k = te.reduce_axis((0, 1024), "k")
    B = te.compute((1,), lambda i: te.sum(A[k], axis=k), name="B")
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(B.op.reduce_axis[0], factor=32)
    s[B].fuse(ko, ki)
    return s, [A, B], "reduce_split_fuse"


GEMV_UPDATE_C = """\
static int32_t gemv_update(float *cc, const float *aa, const float *bb,
                           int32_t m, int32_t l, int32_t stride) {
  for (int32_t i = 0; i < m; ++i) {
    cc[i] = 0.0f;  /* the whole reduction is tensorized: the body also resets */
    for (int32_t j = 0; j < l; ++j) cc[i] += aa[j] * bb[i * stride + j];
  }
  return 0;
}"""


def gemv_tensorize():
    N, M, L = 1024, 512, 64
    A = te.placeholder((N, L), "float32", "A")
    B = te.placeholder((M, L), "float32", "B")
    k = te.reduce_axis((0, L), "k")
    C = te.compute((N, M), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k), name="C")
    s = te.create_schedule(C.op)
    factor = 32
    x, y = C.op.axis
    yo, yi = s[C].split(y, factor=factor)

    a = te.placeholder((L,), "float32", "a")
    b = te.placeholder((factor, L), "float32", "b")
    kk = te.reduce_axis((0, L), "k")
    c = te.compute((factor,), lambda i: te.sum(a[kk] * b[i, kk], axis=kk), name="c")
    abuf = tir.decl_buffer(a.shape, a.dtype, "A", offset_factor=1, strides=[1])
    bbuf = tir.decl_buffer(b.shape, b.dtype, "B", offset_factor=1, strides=[te.var("s1"), 1])
    cbuf = tir.decl_buffer(c.shape, c.dtype, "C", offset_factor=1, strides=[1])

    def intrin_func(ins, outs):
        ib = tir.ir_builder.create()
        aa, bb = ins
        cc = outs[0]
        ib.emit(tir.call_extern("int32", "gemv_update", cc.access_ptr("w"), aa.access_ptr("r"),
                                bb.access_ptr("r"), factor, L, bb.strides[0]))
        return ib.get()

    gemv = te.decl_tensor_intrin(c.op, intrin_func, binds={a: abuf, b: bbuf, c: cbuf})
    s[C].tensorize(yi, gemv)
    s[C].pragma(x, "import_c", GEMV_UPDATE_C)
    return s, [A, B, C], "gemv"


def matmul_reorder_compute_at():
    A = te.placeholder((64, 48), "float32", "A")
    B = te.placeholder((48, 40), "float32", "B")
    k = te.reduce_axis((0, 48), "k")
    C = te.compute((64, 40), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((64, 40), lambda i, j: te.if_then_else(C[i, j] > 0.0, C[i, j], 0.0),
                   name="D")
    s = te.create_schedule(D.op)
    io, jo, ii, ji = s[D].tile(D.op.axis[0], D.op.axis[1], 8, 8)
    s[C].compute_at(s[D], jo)
    ci, cj = C.op.axis
    (ck,) = C.op.reduce_axis
    s[C].reorder(ck, ci, cj)
    s[C].vectorize(cj)
    return s, [A, B, D], "matmul_relu"


def conv2d_int8_nhwc(H=49, W=10, CI=64, CO=64, KH=3, KW=3, pad=1, in_zp=-3, w_zp=2):
    """int8 NHWC convolution with zero points, int32 accumulation."""
    data = te.placeholder((1, H, W, CI), "int8", "data")
    kernel = te.placeholder((KH, KW, CI, CO), "int8", "kernel")
    padded = te.compute(
        (1, H + 2 * pad, W + 2 * pad, CI),
        lambda n, h, w, c: te.if_then_else(
            te.all(h >= pad, h < H + pad, w >= pad, w < W + pad),
            data[n, h - pad, w - pad, c], te.const(in_zp, "int8")),
        name="pad")
    kh = te.reduce_axis((0, KH), "kh")
    kw = te.reduce_axis((0, KW), "kw")
    rc = te.reduce_axis((0, CI), "rc")
    conv = te.compute(
        (1, H, W, CO),
        lambda n, h, w, co: te.sum(
            (padded[n, h + kh, w + kw, rc].astype("int32") - in_zp)
            * (kernel[kh, kw, rc, co].astype("int32") - w_zp), axis=[kh, kw, rc]),
        name="conv")
    s = te.create_schedule(conv.op)
    n, h, w, co = conv.op.axis
    coo, coi = s[conv].split(co, factor=16)
    s[conv].reorder(n, h, w, coo, kh, kw, rc, coi)
    s[conv].vectorize(coi)
    s[padded].compute_at(s[conv], h)
    return s, [data, kernel, conv], "conv2d"


EXAMPLES = {f.__name__: f for f in (vadd_split, vadd_tile_vectorize, reduce_split_fuse,
                                    gemv_tensorize, matmul_reorder_compute_at, conv2d_int8_nhwc)}
