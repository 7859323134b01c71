"""The repository as a Zephyr module: zephyr/module.yml, zephyr/Kconfig,
zephyr/CMakeLists.txt and west-commands.yml say what they must and name files
that exist.  No Zephyr build runs here (Zephyr cannot be fetched): the Kconfig
is parsed by kconfiglib, the module and command files are checked against
what Zephyr and west read, and an application's aot_add_model is configured
through zephyr/CMakeLists.txt with a stand-in for the rest of Zephyr's build."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import kconfiglib
import pykwalify.core
import pytest
import west
import yaml
from west.commands import WestCommand

ROOT = Path(__file__).resolve().parents[2]
ZEPHYR = ROOT / "zephyr"

#: Zephyr's own symbols the module depends on (defined by Zephyr's Kconfig tree).
ZEPHYR_SYMBOLS = ("SERIAL", "CORTEX_M_SYSTICK", "TIMER_HAS_64BIT_CYCLE_COUNTER")


def test_module_yml_names_the_build_files_that_exist():
    meta = yaml.safe_load((ZEPHYR / "module.yml").read_text())
    # Zephyr reads only name and build; west-commands belongs in the west
    # manifest (older Zephyr releases reject keys their schema lacks).
    assert meta == {"name": "aot", "build": {"cmake": "zephyr", "kconfig": "zephyr/Kconfig"}}
    assert (ROOT / meta["build"]["cmake"] / "CMakeLists.txt").is_file()
    assert (ROOT / meta["build"]["kconfig"]).is_file()


def test_west_commands_yml_passes_wests_schema_and_names_the_command_class():
    spec = yaml.safe_load((ROOT / "west-commands.yml").read_text())
    schema = Path(west.__file__).parent / "west-commands-schema.yml"
    pykwalify.core.Core(source_data=spec, schema_files=[str(schema)]).validate()
    (entry,) = spec["west-commands"]
    assert (ROOT / entry["file"]).is_file()
    assert entry["file"] == "aot/west_commands.py"  # also importable as aot.west_commands
    import aot.west_commands as module
    (command,) = entry["commands"]
    cls = getattr(module, command["class"])
    assert issubclass(cls, WestCommand) and cls().name == command["name"] == "aot"


def _kconfig(tmp_path) -> kconfiglib.Kconfig:
    """zephyr/Kconfig under a stand-in top level that defines the Zephyr symbols it uses."""
    top = tmp_path / "Kconfig"
    top.write_text("".join(f'config {s}\n\tbool "{s}"\n\n' for s in ZEPHYR_SYMBOLS)
                   + f'source "{ZEPHYR / "Kconfig"}"\n')
    kconf = kconfiglib.Kconfig(str(top), warn_to_stderr=False)
    assert kconf.warnings == []
    return kconf


def _config(kconf: kconfiglib.Kconfig, tmp_path, **values) -> dict[str, str]:
    for name, value in values.items():
        assert kconf.syms[name].set_value(value), name
    out = tmp_path / ".config"
    kconf.write_config(str(out))
    return dict(re.findall(r"^CONFIG_(AOT\w*)=(.*)$", out.read_text(), re.M))


def test_kconfig_defaults_of_the_rpc_server(tmp_path):
    kconf = _kconfig(tmp_path)
    assert _config(kconf, tmp_path) == {}  # off unless asked for
    config = _config(kconf, tmp_path, SERIAL="y", AOT="y", AOT_RPC_SERVER="y")
    assert config == {"AOT": "y", "AOT_RPC_SERVER": "y", "AOT_RPC_UART_CONSOLE": "y",
                      "AOT_RPC_MAIN": "y", "AOT_MAX_FRAME": "512", "AOT_BOARD_TAG": '""'}


def test_kconfig_rpc_needs_serial_and_the_thread_has_its_own_options(tmp_path):
    kconf = _kconfig(tmp_path)
    assert "AOT_RPC_SERVER" not in _config(kconf, tmp_path, AOT="y", AOT_RPC_SERVER="y")
    config = _config(kconf, tmp_path, SERIAL="y", CORTEX_M_SYSTICK="y", AOT="y",
                     AOT_RPC_SERVER="y", AOT_RPC_THREAD="y", AOT_RPC_UART_CHOSEN="y")
    assert config["AOT_RPC_THREAD"] == "y" and "AOT_RPC_MAIN" not in config
    assert config["AOT_RPC_THREAD_STACK_SIZE"] == "4096"
    assert config["AOT_RPC_THREAD_PRIORITY"] == "14"
    assert config["AOT_RPC_UART_CHOSEN"] == "y" and "AOT_RPC_UART_CONSOLE" not in config
    assert config["AOT_TIMER_HW_CYCLES"] == "y"  # SysTick counts CPU cycles


def test_kconfig_frame_size_outside_the_runtimes_limits_is_refused(tmp_path):
    kconf = _kconfig(tmp_path)
    config = _config(kconf, tmp_path, SERIAL="y", AOT="y", AOT_RPC_SERVER="y",
                     AOT_MAX_FRAME="1024")
    assert config["AOT_MAX_FRAME"] == "1024"
    kconf.syms["AOT_MAX_FRAME"].set_value("100")  # below what carries the INFO reply
    assert kconf.syms["AOT_MAX_FRAME"].str_value == "512"  # ignored: back to the default
    (warning,) = [w for w in kconf.warnings if "AOT_MAX_FRAME" in w]
    assert "outside the active range ([320, 65535])" in warning


def test_module_sources_and_config_symbols_exist():
    cmake = (ZEPHYR / "CMakeLists.txt").read_text()
    rt = "runtime_c"
    paths = set(re.findall(r"\$\{ZEPHYR_CURRENT_MODULE_DIR\}/([\w./-]+)", cmake))
    paths |= {f"{rt}/{p}" for p in re.findall(r"\$\{_aot_rt\}/([\w./-]+)", cmake)}
    assert f"{rt}/ports/zephyr/port.c" in paths and f"{rt}/src/rpc_main.c" in paths
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    # aot.cmake (aot_add_model) is the CMake package's, written beside this work.
    assert set(missing) <= {"aot/cmake/aot.cmake"}, missing
    kconfig = (ZEPHYR / "Kconfig").read_text()
    defined = set(re.findall(r"^config (\w+)", kconfig, re.M)) | set(ZEPHYR_SYMBOLS)
    used = set(re.findall(r"CONFIG_(\w+)", cmake))
    for src in (ROOT / rt / "ports" / "zephyr").glob("*.c"):
        used |= set(re.findall(r"CONFIG_(\w+)", src.read_text()))
    assert used - defined == set()


#: A stand-in for what Zephyr's build gives the module and the application:
#: Zephyr's toolchain (here the file aot ships), the Kconfig symbols as CMake
#: variables, ZEPHYR_CURRENT_MODULE_DIR, the `app` library and Zephyr's own
#: compile options (the CPU and CONFIG_SIZE_OPTIMIZATIONS' -Os); then
#: zephyr/CMakeLists.txt added as Zephyr adds a module's, and the application's
#: aot_add_model call of docs/integration.md ("The application").
ZEPHYR_STANDIN = """\
cmake_minimum_required(VERSION 3.20)
project(kws_app C)
set(CONFIG_AOT y)
set(ZEPHYR_CURRENT_MODULE_DIR {root})
add_library(app STATIC src/main.c)
target_compile_options(app PRIVATE -mcpu=cortex-m7 -mthumb -Os)
add_subdirectory({root}/zephyr modules/aot)
aot_add_model(app MODEL {model} BOARD st/nucleo-f746zg NAME hello NO_CPU_FLAGS)
"""


@pytest.mark.skipif(any(shutil.which(t) is None for t in ("cmake", "arm-none-eabi-gcc")),
                    reason="needs cmake and arm-none-eabi-gcc")
@pytest.mark.slow
def test_an_application_through_the_module_gets_the_records_flags_but_zephyrs_cpu(tmp_path):
    from aot.commands.config import cmake_dir, toolchain_file
    from aot.target import load_board
    from support.models import MODELS_DIR
    from support.net_firmware import aot_program

    src = tmp_path / "app"
    (src / "src").mkdir(parents=True)
    (src / "src" / "main.c").write_text('#include "hello.h"\nint app_main(void) { return 0; }\n')
    (src / "CMakeLists.txt").write_text(ZEPHYR_STANDIN.format(
        root=ROOT, model=MODELS_DIR / "tflm_hello_world_int8.tflite"))
    build = tmp_path / "build"
    done = subprocess.run(["cmake", "-S", str(src), "-B", str(build), "-G", "Unix Makefiles",
                           f"-DAOT_EXECUTABLE={aot_program(tmp_path)}",
                           f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file(load_board('qemu/mps2-an386'))}",
                           "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert str(cmake_dir()) in (build / "CMakeCache.txt").read_text()
    commands = {Path(c["file"]).name: c["command"]
                for c in json.loads((build / "compile_commands.json").read_text())}
    model = [cmd for name, cmd in commands.items() if name.startswith("hello")]
    assert model
    for command in model:
        # The record's optimisation after Zephyr's, and its cflags; Zephyr's CPU only.
        assert command.index(" -O2") > command.index(" -Os"), command
        assert " -ffunction-sections" in command, command
        assert "-mfpu=" not in command and "-mfloat-abi=" not in command, command
    assert " -O2" not in commands["main.c"]


def test_the_tests_the_module_and_the_integration_docs_name_exist():
    """zephyr/Kconfig once named a test file that never existed."""
    named = set()
    for path in [*ZEPHYR.iterdir(), ROOT / "west-commands.yml", ROOT / "docs" / "integration.md"]:
        named |= {(path, p) for p in re.findall(r"\b(tests/[\w./-]*\w)",
                                                  path.read_text())}
    assert named
    missing = sorted(f"{path.name}: {p}" for path, p in named if not (ROOT / p).exists())
    assert missing == []
