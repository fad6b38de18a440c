"""The PEP 517 backend (python/build_backend/vramdoc_build.py) without compiling anything: pip's
metadata step needs no build, and a build's progress reaches the terminal (issue 32, point 5)."""
import io
import re
import sys
import time
import zipfile
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SRC / "python" / "build_backend"))
import vramdoc_build  # noqa: E402


# Regression: without prepare_metadata_for_build_wheel, pip's "Preparing metadata" ran the whole
# CMake build (11 minutes under "still running").
def test_metadata_needs_no_build(tmp_path, monkeypatch):
    def no_build(*args, **kwargs):
        raise AssertionError("the metadata step must not build the binary")

    monkeypatch.setattr(vramdoc_build, "_build_binary", no_build)
    started = time.monotonic()
    name = vramdoc_build.prepare_metadata_for_build_wheel(str(tmp_path))
    assert time.monotonic() - started < 5
    version = re.search(r"project\(vramdoc\s+VERSION\s+([0-9.]+)", (SRC / "CMakeLists.txt").read_text()).group(1)
    assert name == f"vramdoc-{version}.dist-info"
    metadata = (tmp_path / name / "METADATA").read_text()
    assert metadata.startswith(f"Metadata-Version: 2.1\nName: vramdoc\nVersion: {version}\n")
    assert (tmp_path / name / "entry_points.txt").read_text() == "[console_scripts]\nvramdoc = vramdoc._cli:main\n"


def test_the_wheel_carries_the_same_metadata(tmp_path, monkeypatch):
    binaries = tmp_path / "bin"
    binaries.mkdir()
    (binaries / "vramdoc").write_bytes(b"\x7fELF stand-in")
    monkeypatch.setenv("VRAMDOC_PREBUILT_DIR", str(binaries))
    name = vramdoc_build.prepare_metadata_for_build_wheel(str(tmp_path / "meta"))
    wheel = vramdoc_build.build_wheel(str(tmp_path), metadata_directory=str(tmp_path / "meta"))
    with zipfile.ZipFile(tmp_path / wheel) as z:
        for f in ("METADATA", "WHEEL", "entry_points.txt"):
            assert z.read(f"{name}/{f}").decode() == (tmp_path / "meta" / name / f).read_text(), f


def test_progress_lines_from_ninja():
    line = "[37/150] Building CXX object CMakeFiles/vramdoc_core.dir/src/core/estimator/estimate.cpp.o"
    assert vramdoc_build.progress_line(line, 125.4) == "vramdoc build: 37/150 (24 %), 2 min 5 s: estimate.cpp"
    assert vramdoc_build.progress_line("[150/150] Linking CXX executable vramdoc", 3) == \
        "vramdoc build: 150/150 (100 %), 3 s: Linking"
    assert vramdoc_build.progress_line("-- Configuring done", 1) is None


# Regression: pip showed nothing for 11 minutes; the build's steps now reach the terminal.
def test_a_build_step_shows_its_progress_and_keeps_the_log(capsys):
    script = "import sys\nfor i in range(1, 4): print(f'[{i}/3] Building CXX object src/core/f{i}.cpp.o', flush=True)\n"
    tty = io.StringIO()
    vramdoc_build._run_build_step([sys.executable, "-c", script], tty)
    shown = tty.getvalue()
    assert "vramdoc build: 1/3 (33 %)" in shown and "vramdoc build: 3/3 (100 %)" in shown and shown.endswith("\n")
    assert "[2/3] Building CXX object src/core/f2.cpp.o" in capsys.readouterr().err  # pip's log keeps every line
    with pytest.raises(Exception):
        vramdoc_build._run_build_step([sys.executable, "-c", "raise SystemExit(3)"], None)


def test_cuda_setting():
    assert vramdoc_build._cuda_setting({"cuda": "off"}) == "OFF"
    assert vramdoc_build._cuda_setting(None) in ("AUTO", "ON", "OFF")
    with pytest.raises(RuntimeError, match="cuda must be AUTO, ON or OFF"):
        vramdoc_build._cuda_setting({"cuda": "maybe"})
