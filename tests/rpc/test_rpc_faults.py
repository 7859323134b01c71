"""Robustness: a damaged link between the client and the device (host port).

The property under test, for every fault mix: each call either returns the
correct result or raises an RpcError within its time budget; a wrong result is
never returned as correct and nothing hangs.
"""

import time

import numpy as np
import pytest
from support.firmware import fw

from aot.rpc import (
    Client,
    DeviceResetError,
    FaultPlan,
    FaultyTransport,
    PipeTransport,
    RpcError,
    Session,
)

TIMEOUT, RETRIES = 0.05, 5
# A call makes at most RETRIES + 1 attempts of TIMEOUT each; the slack covers
# process start-up after a simulated reset and a loaded machine. This bounds
# hangs, it does not measure speed.
CALL_BUDGET = (RETRIES + 1) * TIMEOUT + 2.0

PLANS = {
    "clean": FaultPlan(),
    "drop": FaultPlan(drop=0.004),
    "corrupt": FaultPlan(corrupt=0.004),
    "duplicate": FaultPlan(duplicate=0.004),
    # Delays longer than TIMEOUT make replies arrive after the retry was sent.
    "delay": FaultPlan(delay=0.005, max_delay=0.08),
    "mixed": FaultPlan(drop=0.002, corrupt=0.002, duplicate=0.002, delay=0.002, max_delay=0.08),
    "reset": FaultPlan(reset_after=700),
    "reset+mixed": FaultPlan(drop=0.002, corrupt=0.002, reset_after=1500),
}


class Tracker:
    """Runs calls, timing each, and sorts outcomes into ok / failed."""

    def __init__(self, budget: float = CALL_BUDGET):
        self.budget = budget
        self.errors: list[str] = []

    def call(self, fn, *args):
        start = time.monotonic()
        try:
            return True, fn(*args)
        except RpcError as err:
            self.errors.append(type(err).__name__)
            return False, None
        finally:
            assert time.monotonic() - start < self.budget, f"{fn.__name__} hung"


FAST = {("mixed", 0), ("reset", 0), ("clean", 0)}
CASES = [
    pytest.param(name, seed, marks=() if (name, seed) in FAST else pytest.mark.slow)
    for name in PLANS
    for seed in range(4)
]


@pytest.mark.parametrize("plan_name, seed", CASES)
def test_every_call_is_correct_or_a_clear_error(host_firmware, plan_name, seed):
    plan = PLANS[plan_name].__class__(**{**PLANS[plan_name].__dict__, "seed": seed})
    link = FaultyTransport(PipeTransport([str(host_firmware)]), plan)
    client = Client(Session(link, timeout=TIMEOUT, retries=RETRIES))
    rng = np.random.default_rng(seed)
    t = Tracker()
    verified = 0
    try:
        for _ in range(8):
            x = rng.integers(-128, 128, (1, 64), dtype=np.int8)
            wrote, _ = t.call(client.write_tensor, "input", x)
            ran, result = t.call(client.run, 2)
            got, out = t.call(client.read_tensor, "output")
            if wrote and ran and got:
                assert len(result.timings) == 2
                np.testing.assert_array_equal(out, fw.reference(x)[1])
                verified += 1
            got, weight = t.call(client.read_tensor, "weight")
            if got:
                np.testing.assert_array_equal(weight, fw.WEIGHT.astype(np.int8))
            if "DeviceResetError" in t.errors[-4:]:
                t.call(client.reconnect)
    finally:
        link.close()
    if plan_name == "clean":
        assert verified == 8 and not t.errors
    if plan_name.startswith("reset"):
        assert link.resets == 1 and "DeviceResetError" in t.errors
    # Some cycles must get through, or the test would prove nothing.
    assert verified > 0, t.errors


def test_a_reset_is_reported_until_reconnect(host_firmware):
    link = PipeTransport([str(host_firmware)])
    client = Client(Session(link, timeout=1.0, retries=1))
    try:
        client.write_tensor("input", np.ones((1, 64), np.int8))
        link.reset_device()
        for _ in range(2):  # no silent reconnect: the inputs are gone
            with pytest.raises(DeviceResetError):
                client.run(1)
        client.reconnect()
        client.run(1)
    finally:
        link.close()


def test_a_silent_device_times_out_with_a_clear_message(host_firmware):
    link = FaultyTransport(PipeTransport([str(host_firmware)]), FaultPlan(drop=1.0))
    session = Session(link, timeout=0.1, retries=2)
    try:
        with pytest.raises(RpcError, match="no valid reply to HELLO after 3 attempts"):
            session.handshake()
    finally:
        link.close()


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.skipif(not fw.have("qemu-system-arm", "arm-none-eabi-gcc"), reason="no QEMU/arm gcc")
def test_damaged_qemu_serial_link_end_to_end(tmp_path):
    """The same property over the real QEMU serial link of mps2-an386."""
    import sys

    sys.path.insert(0, str(fw.ROOT))  # the flash package, see tests/flash/conftest.py
    from aot.rpc import SerialTransport
    from flash.qemu import QemuConfig, QemuRunner

    elf = fw.build_board(tmp_path, "qemu/mps2-an386")
    plan = FaultPlan(seed=7, drop=0.002, corrupt=0.002, duplicate=0.002, delay=0.002,
                     max_delay=0.3)
    rng = np.random.default_rng(7)
    verified, t = 0, Tracker(budget=(RETRIES + 1) * 0.25 + 2.0)
    with QemuRunner(QemuConfig(elf=elf, machine="mps2-an386")) as url:
        link = FaultyTransport(SerialTransport(url), plan)
        client = Client(Session(link, timeout=0.25, retries=RETRIES))
        try:
            for _ in range(10):
                x = rng.integers(-128, 128, (1, 64), dtype=np.int8)
                wrote, _ = t.call(client.write_tensor, "input", x)
                ran, result = t.call(client.run, 4)
                got, out = t.call(client.read_tensor, "output")
                if wrote and ran and got:
                    # Exact counts, even with retried bytes arriving mid-run.
                    assert len(set(result.timings)) == 1
                    np.testing.assert_array_equal(out, fw.reference(x)[1])
                    verified += 1
        finally:
            link.close()
    assert verified > 0, t.errors
