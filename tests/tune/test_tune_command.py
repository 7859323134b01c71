"""`aot tune`: argument errors are one-line messages with exit code 2."""

from aot.cli import main


def test_trials_must_be_positive(models_dir, tmp_path, capsys):
    code = main(["tune", str(models_dir / "mlperf_kws_dscnn.tflite"), "--board",
                 "qemu/mps2-an386", "--trials", "0", "--log", str(tmp_path / "log")])
    assert code == 2
    assert "--trials, --batch and --repeats must be at least 1" in capsys.readouterr().err


def test_a_model_without_tunable_workloads_is_an_error(models_dir, tmp_path, capsys):
    code = main(["tune", str(models_dir / "tflm_magic_wand_float.tflite"), "--board",
                 "qemu/mps2-an386", "--trials", "2", "--log", str(tmp_path / "log"),
                 "--workload", "no-such-workload"])
    assert code == 2
    assert "no tunable workload" in capsys.readouterr().err


def test_unknown_tuner_is_refused(models_dir, tmp_path, capsys):
    try:
        main(["tune", "m.tflite", "--board", "qemu/mps2-an386", "--trials", "2", "--log",
              str(tmp_path / "log"), "--tuner", "annealing"])
    except SystemExit as err:
        assert err.code == 2
    assert "invalid choice: 'annealing'" in capsys.readouterr().err


def test_ram_loader_on_a_board_without_executable_ram_is_refused(models_dir, tmp_path, capsys):
    code = main(["tune", str(models_dir / "mlperf_kws_dscnn.tflite"), "--board", "host/native",
                 "--trials", "2", "--log", str(tmp_path / "log"), "--loader", "ram"])
    assert code == 2
    assert "does not declare executable RAM" in capsys.readouterr().err


def test_a_batch_larger_than_one_image_holds_is_refused(models_dir, tmp_path, capsys):
    from aot.tune.measure import max_batch

    code = main(["tune", str(models_dir / "mlperf_kws_dscnn.tflite"), "--board",
                 "qemu/mps2-an386", "--trials", "2", "--log", str(tmp_path / "log"),
                 "--batch", str(max_batch() + 1)])
    assert code == 2
    err = capsys.readouterr().err
    assert f"--batch must be 1 to {max_batch()}" in err and "AOT_MAX_KERNELS" in err
    assert not (tmp_path / "log").exists()


def test_a_trials_or_budget_limit_is_required(models_dir, tmp_path, capsys):
    code = main(["tune", str(models_dir / "mlperf_kws_dscnn.tflite"), "--board",
                 "qemu/mps2-an386", "--log", str(tmp_path / "log")])
    assert code == 2
    assert "give --trials" in capsys.readouterr().err


def test_a_budget_must_be_a_time(models_dir, tmp_path, capsys):
    for bad in ("20 minutes", "-5m", "0s"):
        code = main(["tune", str(models_dir / "mlperf_kws_dscnn.tflite"), "--board",
                     "qemu/mps2-an386", f"--budget={bad}", "--log", str(tmp_path / "log")])
        assert code == 2
        assert "--budget" in capsys.readouterr().err


def test_budgets_read_units():
    from aot.commands.tune import parse_budget

    assert [parse_budget(t) for t in ("90s", "20m", "1.5h", "30")] == [90, 1200, 5400, 30]


def test_cycles_on_a_board_without_qemu_or_cycle_counter_are_refused(models_dir, tmp_path,
                                                                     capsys):
    code = main(["tune", str(models_dir / "mlperf_kws_dscnn.tflite"), "--board",
                 "host/native", "--trials", "2", "--cost", "cycles", "--tuner", "auto",
                 "--log", str(tmp_path / "log")])
    assert code == 2
    err = capsys.readouterr().err
    assert "--cost cycles on host/native" in err and "not emulated" in err
    assert not (tmp_path / "log").exists()


def test_an_unknown_farm_is_refused_before_the_model_is_read(tmp_path, capsys):
    code = main(["tune", str(tmp_path / "missing.tflite"), "--board", "qemu/mps2-an386",
                 "--trials", "2", "--log", str(tmp_path / "log"), "--farm", "slurm"])
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown farm 'slurm'" in err and "ray://HOST:PORT" in err


def test_boards_must_be_positive(tmp_path, capsys):
    code = main(["tune", str(tmp_path / "missing.tflite"), "--board", "qemu/mps2-an386",
                 "--trials", "2", "--log", str(tmp_path / "log"), "--boards", "0"])
    assert code == 2
    assert "--boards must be at least 1, not 0" in capsys.readouterr().err


def test_real_boards_are_given_as_tag_at_port(tmp_path, capsys):
    code = main(["tune", str(tmp_path / "missing.tflite"), "--board", "st/nucleo-l4r5zi",
                 "--trials", "2", "--log", str(tmp_path / "log"), "--boards",
                 "st/nucleo-l4r5zi@/dev/ttyACM0,st/nucleo-l4r5zi"])
    assert code == 2
    assert "'st/nucleo-l4r5zi' is not TAG@PORT or TAG@PORT#PROBE" in capsys.readouterr().err
