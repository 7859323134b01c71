"""Virtual devices: "label" or "label:id", labels being tags or registered targets."""

import pytest

from aot.target import Target, TargetError, TargetLabels, VirtualDevice


@pytest.fixture
def labels():
    reg = TargetLabels()
    reg.register("dsp", "c -mcpu=cortex-m4 -mfloat-abi=hard")
    reg.register("host", Target("c -mtriple=x86_64-linux-gnu"))
    return reg


@pytest.mark.parametrize(
    "text, label, device_id",
    [
        ("qemu/mps2-an386", "qemu/mps2-an386", 0),
        ("qemu/mps2-an386:3", "qemu/mps2-an386", 3),
        ("qemu/mps2-an386:v1", "qemu/mps2-an386:v1", 0),
        ("qemu/mps2-an386:v1:2", "qemu/mps2-an386:v1", 2),
        ("qemu/an386:1", "qemu/mps2-an386", 1),
        ("dsp", "dsp", 0),
        ("dsp:7", "dsp", 7),
    ],
)
def test_parse_and_print(labels, text, label, device_id):
    vd = VirtualDevice.parse(text, labels)
    assert (vd.label, vd.device_id) == (label, device_id)
    assert VirtualDevice.parse(str(vd), labels) == vd
    assert str(VirtualDevice.parse(str(vd), labels)) == str(vd)


def test_targets_behind_labels(labels):
    assert VirtualDevice.parse("dsp", labels).target == Target("c -mcpu=cortex-m4 -mfloat-abi=hard")
    assert VirtualDevice.parse("qemu/mps2-an386:1", labels).target == Target("qemu/mps2-an386")


def test_equality(labels):
    assert VirtualDevice.parse("dsp", labels) == VirtualDevice.parse("dsp:0", labels)
    assert VirtualDevice.parse("dsp:1", labels) != VirtualDevice.parse("dsp:2", labels)
    assert VirtualDevice.parse("dsp", labels) != VirtualDevice.parse("host", labels)
    # an alias names the same device
    assert VirtualDevice.parse("qemu/an386:2") == VirtualDevice.parse("qemu/mps2-an386:2")
    assert len({VirtualDevice.parse("dsp", labels), VirtualDevice.parse("dsp:0", labels)}) == 1


def test_built_from_a_tagged_target():
    vd = VirtualDevice(Target("qemu/mps3-an547"), 1)
    assert str(vd) == "qemu/mps3-an547:1"
    with pytest.raises(TargetError, match="needs a label"):
        VirtualDevice(Target("c"))


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "dps",
            r"unknown target label 'dps' \(did you mean 'dsp'\?\); registered labels: dsp, host",
        ),
        ("dsp:x", r"the device id after ':' must be a number"),
        ("qemu/mps2-an368:1", r"unknown board tag 'qemu/mps2-an368' \(did you mean"),
    ],
)
def test_errors(labels, text, message):
    with pytest.raises(TargetError, match=message):
        VirtualDevice.parse(text, labels)


def test_labels_refuse_duplicates_and_bad_names(labels):
    with pytest.raises(TargetError, match="already registered"):
        labels.register("dsp", "c")
    with pytest.raises(TargetError, match="is not a target label"):
        labels.register("qemu/x", "c")
    assert labels.labels() == ["dsp", "host"]
