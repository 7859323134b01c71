"""``west aot`` in a real west workspace made without network.

The fixture makes a git repository holding this repository's module files
(zephyr/, west-commands.yml, aot/west_commands.py), a manifest repository whose
west.yml lists it by a file:// URL with ``west-commands: west-commands.yml``,
then runs ``west init -l`` and ``west update``: west clones the module and loads
the command from the clone, as it would from a remote.  west runs in this
Python with this checkout's aot first on the path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.models import MODELS_DIR

from aot.cli import main
from aot.west_commands import with_workspace_defaults

ROOT = Path(__file__).resolve().parents[2]
MODULE_FILES = ("zephyr", "west-commands.yml", "aot/west_commands.py", "aot/__init__.py")
AUTOENCODER = MODELS_DIR / "mlperf_ad_fc_autoencoder.tflite"


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ZEPHYR_BASE"}
    env.update(PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
               WEST_CONFIG_GLOBAL=str(tmp / "west-global"),
               WEST_CONFIG_SYSTEM=str(tmp / "west-system"),
               GIT_CONFIG_GLOBAL=str(tmp / "gitconfig"), GIT_CONFIG_NOSYSTEM="1",
               AOT_CACHE_DIR=str(tmp / "cache"))
    return env


def _git_repo(path: Path, env) -> None:
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=aot tests", "-c", "user.email=tests@aot.invalid",
                  "commit", "-q", "-m", "snapshot"]):
        subprocess.run(["git", *argv], cwd=path, env=env, check=True)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("west")
    env = _env(tmp)
    source = tmp / "remote" / "aot"
    for name in MODULE_FILES:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name)
        else:
            shutil.copy(ROOT / name, source / name)
    _git_repo(source, env)
    manifest = tmp / "ws" / "manifest"
    manifest.mkdir(parents=True)
    (manifest / "west.yml").write_text(f"""\
manifest:
  projects:
    - name: aot
      url: {source.as_uri()}
      revision: main
      path: modules/lib/aot
      west-commands: west-commands.yml
  self:
    path: manifest
""")
    _git_repo(manifest, env)
    top = tmp / "ws"
    subprocess.run([sys.executable, "-m", "west", "init", "-l", "manifest"], cwd=top, env=env,
                   check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "west", "update"], cwd=top, env=env, check=True,
                   capture_output=True)
    assert (top / "modules/lib/aot/aot/west_commands.py").is_file()
    return top, env


@pytest.fixture
def app(workspace, request) -> Path:
    """A fresh folder inside the workspace, where a test runs west."""
    path = workspace[0] / "apps" / request.node.name
    path.mkdir(parents=True)
    return path


def west(workspace, *args, cwd=None) -> subprocess.CompletedProcess:
    top, env = workspace
    return subprocess.run([sys.executable, "-m", "west", *args], cwd=cwd or top, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_west_aot_boards_prints_what_aot_boards_prints(workspace, capsys):
    assert main(["boards"]) == 0
    expected = capsys.readouterr().out
    done = west(workspace, "aot", "boards")
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
    assert "qemu/mps2-an386" in expected


def test_west_aot_boards_into_a_closed_pipe_exits_quietly(workspace):
    """``west aot boards | head -3`` ended in "internal error: BrokenPipeError"."""
    top, env = workspace
    read, write = os.pipe()
    os.close(read)   # the reader is gone before anything is written
    try:
        done = subprocess.run([sys.executable, "-m", "west", "aot", "boards"], cwd=top,
                              env=env, stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=600)
    finally:
        os.close(write)
    assert "BrokenPipe" not in done.stderr and "internal error" not in done.stderr
    assert done.returncode == 141, done.stderr


def test_west_lists_the_command_with_its_help(workspace):
    done = west(workspace, "help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # argparse wraps the help column
    assert "extension commands from project aot (path: modules/lib/aot):" in text
    assert "aot: compile, flash, verify and tune neural networks with aot" in text


@pytest.mark.slow
def test_west_aot_help_lists_the_forwarded_commands_and_the_workspace_settings(workspace):
    done = west(workspace, "aot", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: west aot [-h] [--version] [--debug] [--json] "
                                  "COMMAND ...")
    for name in ("compile", "flash", "verify", "tune", "boards", "aot.board", "aot.build-dir"):
        assert name in done.stdout
    assert "interpret" not in done.stdout


@pytest.mark.slow
def test_an_unknown_command_names_the_choices(workspace):
    done = west(workspace, "aot", "comple", "x.tflite")
    assert done.returncode == 1
    assert done.stderr.strip() == ("FATAL ERROR: unknown command 'comple' (did you mean "
                                   "'compile'?); one of: boards, compile, flash, tune, verify")
    done = west(workspace, "aot", "interpret", "x.tflite")
    assert done.stderr.strip() == ("FATAL ERROR: unknown command 'interpret'; one of: boards, "
                                   "compile, flash, tune, verify (run `aot interpret` outside "
                                   "west)")


@pytest.mark.slow
def test_aot_errors_keep_their_exit_status_under_west(workspace):
    done = west(workspace, "aot", "boards", "show", "qemu/mps2-an999")
    assert done.returncode == 2
    assert done.stderr.startswith("west aot boards: error: unknown board tag 'qemu/mps2-an999' "
                                  "(did you mean 'qemu/mps2-an")


@pytest.mark.slow
def test_without_a_board_the_error_says_how_to_set_the_workspace_default(workspace, app):
    done = west(workspace, "aot", "verify", str(AUTOENCODER), cwd=app)
    assert done.returncode == 2
    assert "west aot verify: error: the following arguments are required: --board" in done.stderr
    assert done.stdout == ("note: `west config aot.board TAG` gives this workspace a default "
                           "board\n")


@pytest.mark.slow
def test_compile_takes_the_workspace_board_and_build_folder(workspace, app):
    assert west(workspace, "config", "aot.board", "qemu/mps2-an385").returncode == 0
    try:
        done = west(workspace, "aot", "compile", str(AUTOENCODER), cwd=app)
        assert done.returncode == 0, done.stderr
        artifact = app / "build" / "aot" / "mlperf_ad_fc_autoencoder"
        assert done.stdout.startswith("compiled mlperf_ad_fc_autoencoder for qemu/mps2-an385 "
                                      "into build/aot/mlperf_ad_fc_autoencoder\n")
        metadata = json.loads((artifact / "metadata.json").read_text())
        assert metadata["board"] == "qemu/mps2-an385"
        # What the command line says wins over the workspace.
        done = west(workspace, "aot", "compile", str(AUTOENCODER), "--board=qemu/mps2-an386",
                    "-o", "elsewhere", cwd=app)
        assert done.returncode == 0, done.stderr
        assert json.loads((app / "elsewhere" / "metadata.json").read_text())["board"] \
            == "qemu/mps2-an386"
    finally:
        west(workspace, "config", "-d", "aot.board")


def test_west_aot_outside_a_workspace_says_so(workspace, tmp_path):
    _, env = workspace
    done = subprocess.run([sys.executable, "-m", "west", "aot", "boards"], cwd=tmp_path,
                          env=env, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        'west: unknown command "aot"; do you need to run this inside a workspace?')


@pytest.mark.parametrize("argv, expected", [
    (["verify", "m.tflite"], ["verify", "--board", "B", "m.tflite"]),
    (["verify", "m.tflite", "--board", "X"], ["verify", "m.tflite", "--board", "X"]),
    (["compile", "m.onnx", "--target=c"], ["compile", "-o", "out/m", "m.onnx", "--target=c"]),
    (["compile", "m.tflite", "-oD"], ["compile", "--board", "B", "m.tflite", "-oD"]),
    (["compile", "m.tflite", "--output", "D"],
     ["compile", "--board", "B", "m.tflite", "--output", "D"]),
    (["flash", "proj"], ["flash", "proj"]),
    (["boards"], ["boards"]),
])
def test_workspace_defaults_are_added_only_where_the_line_has_none(argv, expected):
    assert with_workspace_defaults(argv, "B", "out") == expected


def test_without_workspace_settings_nothing_but_the_build_folder_is_added():
    assert with_workspace_defaults(["verify", "m.tflite"], None, None) == ["verify", "m.tflite"]
    assert with_workspace_defaults(["compile", "m.tflite"], None, None) == \
        ["compile", "-o", str(Path("build/aot/m")), "m.tflite"]


@pytest.mark.slow
@pytest.mark.qemu
def test_west_aot_verify_runs_a_shared_model_on_qemu(workspace, app):
    report = app / "report.json"
    done = west(workspace, "aot", "verify", str(AUTOENCODER), "--board", "qemu/mps2-an386",
                "--report", str(report), "--json", cwd=app)
    assert done.returncode == 0, done.stderr
    data = json.loads(report.read_text())
    assert data == json.loads(done.stdout)
    assert data["passed"] and data["board"] == "qemu/mps2-an386"
    assert data["outputs"][0]["mismatches"] == 0
    assert data["instructions_per_inference"] > 0
