"""TFLite data-movement operators, most of them lowered at import into
strided_slice, reshape, transpose, pad, expand_dims and concatenate (MIRROR_PAD,
BROADCAST_TO and RESIZE_NEAREST_NEIGHBOR have IR operators of their own): each
model runs bit for bit as TFLM runs it, through the reference interpreter and
compiled to C on the host; bad attributes are refused at import naming the
operator."""

from __future__ import annotations

import numpy as np
import pytest

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.frontend.errors import ModelError
from aot.frontend.tflite import BUILTIN_CODES, lowering
from aot.reference import run as reference_run
from support.models import MODELS_DIR
from support.tflite_builder import ModelBuilder

Q = {"scale": 0.05, "zero_point": -3}


def _model(op: str, in_shape, out_shapes, consts=(), first_const=False, dtype="int8",
           **options) -> bytes:
    """One operator: the input ``x`` (after the constant inputs when
    ``first_const``), then ``consts``; outputs y0, y1, ..."""
    mb = ModelBuilder()
    x = mb.input("x", list(in_shape), dtype, **Q)
    cs = [mb.const(f"c{i}", np.asarray(c), "int32") for i, c in enumerate(consts)]
    ys = [mb.output(f"y{i}", list(s), dtype, **Q) for i, s in enumerate(out_shapes)]
    mb.op(op, (cs + [x]) if first_const else ([x] + cs), ys, **options)
    return mb.finish()


def _pack_model(n: int, shape, axis: int) -> bytes:
    mb = ModelBuilder()
    xs = [mb.input(f"x{i}", list(shape), "int8", **Q) for i in range(n)]
    out = list(shape)
    out.insert(axis % (len(shape) + 1), n)
    y = mb.output("y0", out, "int8", **Q)
    mb.op("PACK", xs, [y], values_count=n, axis=axis)
    return mb.finish()


CASES = {
    "split": lambda: _model("SPLIT", (1, 4, 6, 3), [(1, 4, 2, 3)] * 3, [[2]], first_const=True,
                            num_splits=3),
    "split_v": lambda: _model("SPLIT_V", (2, 7, 3), [(2, 2, 3), (2, 4, 3), (2, 1, 3)],
                              [[2, -1, 1], [1]], num_splits=3),
    "slice": lambda: _model("SLICE", (1, 5, 6, 4), [(1, 3, 4, 2)], [[0, 1, 2, 1], [1, 3, -1, 2]]),
    "unpack": lambda: _model("UNPACK", (2, 3, 4), [(2, 4)] * 3, num=3, axis=1),
    "pack": lambda: _pack_model(3, (2, 5), axis=1),
    "reverse_v2": lambda: _model("REVERSE_V2", (2, 3, 5), [(2, 3, 5)], [[1]]),
    "space_to_depth": lambda: _model("SPACE_TO_DEPTH", (1, 4, 6, 3), [(1, 2, 3, 12)],
                                     block_size=2),
    "depth_to_space": lambda: _model("DEPTH_TO_SPACE", (1, 2, 3, 8), [(1, 4, 6, 2)],
                                     block_size=2),
    # Unpadded: TFLM leaves the padding value undefined (see the next test).
    "space_to_batch_nd": lambda: _model("SPACE_TO_BATCH_ND", (2, 4, 6, 2), [(12, 2, 2, 2)],
                                        [[2, 3], [[0, 0], [0, 0]]]),
    "mirror_pad_reflect": lambda: _model("MIRROR_PAD", (1, 4, 5, 2), [(1, 7, 7, 2)],
                                         [[[0, 0], [2, 1], [1, 1], [0, 0]]], mode=0),
    "mirror_pad_symmetric": lambda: _model("MIRROR_PAD", (2, 3, 4), [(2, 8, 6)],
                                           [[[0, 0], [3, 2], [0, 2]]], mode=1),
    "broadcast_to": lambda: _model("BROADCAST_TO", (3, 1, 4), [(2, 3, 5, 4)], [[2, 3, 5, 4]]),
    "resize_nearest_neighbor": lambda: _model("RESIZE_NEAREST_NEIGHBOR", (1, 3, 4, 2),
                                              [(1, 6, 12, 2)], [[6, 12]]),
    "resize_nearest_neighbor_half_pixel": lambda: _model(
        "RESIZE_NEAREST_NEIGHBOR", (1, 5, 4, 3), [(1, 3, 7, 3)], [[3, 7]],
        half_pixel_centers=True),
    # 2 -> 82 and 2 -> 41 (half pixel): float32 rounding differs from the
    # integer formula at a few positions, which the kernel fixes one by one.
    "resize_nearest_neighbor_float_rounding": lambda: _model(
        "RESIZE_NEAREST_NEIGHBOR", (1, 2, 2, 1), [(1, 82, 41, 1)], [[82, 41]]),
    "resize_nearest_neighbor_half_pixel_float_rounding": lambda: _model(
        "RESIZE_NEAREST_NEIGHBOR", (1, 2, 2, 1), [(1, 41, 82, 1)], [[41, 82]],
        half_pixel_centers=True),
    "resize_nearest_neighbor_align_corners": lambda: _model(
        "RESIZE_NEAREST_NEIGHBOR", (1, 4, 3, 1), [(1, 7, 5, 1)], [[7, 5]], align_corners=True),
    "batch_to_space_nd": lambda: _model("BATCH_TO_SPACE_ND", (6, 3, 2, 2), [(1, 5, 4, 2)],
                                        [[2, 3], [[1, 0], [1, 1]]]),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.one_fast
def test_lowered_operator_matches_tflm(case, tflm, tmp_path):  # noqa: F811
    model = CASES[case]()
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(model)
    graph = load_model(path)
    rng = np.random.default_rng(5)
    xs = [rng.integers(-128, 128, t.shape).astype(np.int8) for t in graph.inputs]
    want = tflm.run(model, [xs])[0]
    got = reference_run(graph, xs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    host = run_on_host(compiled, [x[None] for x in xs], workdir=tmp_path)
    for k, w in enumerate(want):
        np.testing.assert_array_equal(host[k][0], w)


def test_space_to_batch_pads_with_the_zero_point(tmp_path):
    """TFLite's kernel pads with the zero point; TFLM's reads a pad value it
    never sets, so the padded case is checked against numpy."""
    path = tmp_path / "m.tflite"
    path.write_bytes(_model("SPACE_TO_BATCH_ND", (1, 5, 4, 2), [(6, 3, 2, 2)],
                            [[2, 3], [[1, 0], [1, 1]]]))
    x = np.random.default_rng(2).integers(-128, 128, (1, 5, 4, 2)).astype(np.int8)
    padded = np.pad(x, ((0, 0), (1, 0), (1, 1), (0, 0)), constant_values=Q["zero_point"])
    want = padded.reshape(1, 3, 2, 2, 3, 2).transpose(2, 4, 0, 1, 3, 5).reshape(6, 3, 2, 2)
    np.testing.assert_array_equal(reference_run(load_model(path), [x])[0], want)
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    np.testing.assert_array_equal(run_on_host(compiled, [x[None]], workdir=tmp_path)[0][0], want)


@pytest.mark.parametrize("build, message", [
    (lambda: _model("SPLIT", (1, 4, 6, 3), [(1, 4, 2, 3)] * 3, [[2]], first_const=True,
                    num_splits=2),
     "operator 0 (SPLIT): splits into 2 pieces but has 3 outputs"),
    (lambda: _model("SPLIT_V", (2, 7, 3), [(2, 2, 3), (2, 4, 3)], [[2, 4], [1]], num_splits=2),
     "operator 0 (SPLIT_V): size_splits [2, 4] do not add up to axis 1's size 7"),
    (lambda: _model("SLICE", (1, 5, 6, 4), [(1, 3, 4, 2)], [[0, 4, 2, 1], [1, 3, -1, 2]]),
     "operator 0 (SLICE): begin 4 and size 3 do not fit axis 1 of size 5"),
    (lambda: _model("SPACE_TO_DEPTH", (1, 5, 6, 3), [(1, 2, 3, 12)], block_size=2),
     "operator 0 (SPACE_TO_DEPTH): height 5 and width 6 must be multiples of block_size 2"),
    (lambda: _model("SPACE_TO_BATCH_ND", (1, 5, 4), [(6, 3, 2)], [[2, 3], [[1, 0], [1, 1]]]),
     "operator 0 (SPACE_TO_BATCH_ND): supported: 4-D NHWC data with a 2-D block_shape"),
])
def test_bad_attributes_are_refused_at_import(build, message, tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(build())
    with pytest.raises(ModelError, match=None) as err:
        load_model(path)
    assert message in str(err.value)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_lowered_builtin_becomes_the_operators_it_declares(case, tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(CASES[case]())
    ops = {n.op for n in load_model(path).nodes}
    builtin = next(b for b in sorted(BUILTIN_CODES, key=len, reverse=True)
                   if case.upper().startswith(b))
    assert ops and ops <= set(lowering(builtin))


@pytest.mark.parametrize("model", sorted(p.name for p in MODELS_DIR.glob("*.tflite")))
def test_every_imported_node_is_in_its_builtins_declared_lowering(model):
    for node in load_model(MODELS_DIR / model).nodes:
        builtin = node.name.split(":", 1)[1].split(".")[0].upper()
        assert node.op in lowering(builtin), node.name
