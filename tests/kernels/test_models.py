"""Every kernel group of every shared model lowers, and each kernel alone matches the
reference interpreter on the group's real inputs (the reference's intermediate
tensors for seeded random model inputs)."""

from __future__ import annotations

import pytest
from kernel_checks import all_values, check_group, cross_compile, seeded_inputs

from aot.frontend import load_model
from aot.kernels import lower_group
from aot.passes import annotations, optimize
from support.models import MODELS

# Large enough that a run takes more than a few seconds.
SLOW = {"mlperf_vww_mobilenetv1_025", "mlperf_ic_resnet8", "mlperf_kws_dscnn"}


def _params():
    for entry in MODELS:
        marks = [pytest.mark.slow] if entry["name"] in SLOW else []
        yield pytest.param(entry, marks=marks, id=entry["name"])


@pytest.mark.parametrize("entry", list(_params()))
@pytest.mark.one_fast
def test_every_group_matches_the_reference(entry, models_dir):
    ag = optimize(load_model(models_dir / entry["file"]))
    values = all_values(ag, seeded_inputs(ag, 11))
    for i, group in enumerate(annotations(ag).groups):
        if group.kind == "view":
            continue
        kernel = lower_group(group, ag, "c", name=f"{entry['name']}_k{i}")
        check_group(kernel, group, ag, values)
        cross_compile(kernel)
