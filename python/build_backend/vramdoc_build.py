"""vramdoc's PEP 517 build backend: standard library only (docs/python.md).

`pip install .` calls prepare_metadata_for_build_wheel() (a moment: the metadata needs no build),
then build_wheel(): it builds the vramdoc binary with CMake (Release, no tests; CUDA AUTO, or as
`--config-settings cuda=OFF` / $VRAMDOC_CUDA says), its progress written to the terminal (pip
hides the backend's output), unless VRAMDOC_PREBUILT_DIR names a folder that already holds a
built `vramdoc` (and, optionally, `libvramdoc-tracer.so`), then writes a wheel of the Python
package with the binary inside it (vramdoc/_bin/). Nothing is downloaded: the backend needs no setuptools, no wheel package and no
index, so `pip install --no-build-isolation --no-index .` works in a fresh virtual environment.
"""
from __future__ import annotations

import base64
import hashlib
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "vramdoc"
NAME = "vramdoc"
SUMMARY = "Will it fit, is it a leak, what is my GPU's memory really like: GPU memory tools for PyTorch users"


def _version() -> str:
    """The version of CMakeLists.txt's project(), the one source of the version number."""
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    match = re.search(r"project\(vramdoc\s+VERSION\s+([0-9][0-9.]*)", text)
    if not match:
        raise RuntimeError("vramdoc build: no 'project(vramdoc VERSION x.y.z)' in CMakeLists.txt")
    return match.group(1)


def _platform_tag() -> str:
    """The wheel's platform: the binary is native code for this machine's Linux and processor."""
    if not sys.platform.startswith("linux"):
        raise RuntimeError("vramdoc build: vramdoc builds on Linux only")
    machine = platform.machine().lower().replace("-", "_") or "x86_64"
    return "linux_" + machine


def _log(message: str) -> None:
    print("vramdoc build: " + message, file=sys.stderr, flush=True)


def _progress_stream():
    """Where build progress goes: the terminal itself when there is one (pip captures the backend's
    stdout and stderr and shows them only with -v or on failure), else nothing."""
    if os.environ.get("VRAMDOC_BUILD_PROGRESS", "1") == "0":
        return None
    try:
        return open("/dev/tty", "w", encoding="utf-8")
    except OSError:
        return None


_NINJA_STEP = re.compile(r"^\[(\d+)/(\d+)\] (.*)$")


def progress_line(line: str, seconds: float) -> Optional[str]:
    """A ninja or make status line ("[37/150] Building CXX object .../estimate.cpp.o") as one line
    of progress ("vramdoc build: 37/150 (25 %), 2 min 5 s: estimate.cpp"); None for other lines."""
    m = _NINJA_STEP.match(line.strip())
    if not m:
        return None
    done, total, what = int(m.group(1)), int(m.group(2)), m.group(3)
    name = what.split("/")[-1].split(" ")[0]
    for suffix in (".o", ".obj"):
        name = name[: -len(suffix)] if name.endswith(suffix) else name
    elapsed = f"{int(seconds) // 60} min {int(seconds) % 60} s" if seconds >= 60 else f"{int(seconds)} s"
    percent = 100 * done // max(total, 1)
    return f"vramdoc build: {done}/{total} ({percent} %), {elapsed}: {name}"


def _run_build_step(command: list, tty) -> None:
    """Runs one CMake step, its output to stderr (pip's log) and its progress to the terminal."""
    started = time.monotonic()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stderr.write(line)
            shown = progress_line(line, time.monotonic() - started)
            if tty is not None and shown:
                tty.write("\r\033[K" + shown[:150])
                tty.flush()
    if tty is not None:
        tty.write("\n")
        tty.flush()
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, command)


def _cuda_setting(config_settings: Optional[dict]) -> str:
    """AUTO (the CUDA kernels and the tracer when nvcc is found), ON or OFF: from pip's
    --config-settings cuda=OFF, else $VRAMDOC_CUDA, else AUTO."""
    value = str((config_settings or {}).get("cuda") or os.environ.get("VRAMDOC_CUDA") or "AUTO").upper()
    if value not in ("AUTO", "ON", "OFF"):
        raise RuntimeError(f"vramdoc build: cuda must be AUTO, ON or OFF, got '{value}'")
    return value


def _build_binary(config_settings: Optional[dict] = None) -> Path:
    """The folder with the built vramdoc: VRAMDOC_PREBUILT_DIR, or a fresh CMake Release build."""
    prebuilt = os.environ.get("VRAMDOC_PREBUILT_DIR")
    if prebuilt:
        folder = Path(prebuilt).resolve()
        if not (folder / "vramdoc").is_file():
            raise RuntimeError(f"vramdoc build: VRAMDOC_PREBUILT_DIR={prebuilt} holds no 'vramdoc' binary")
        _log(f"using the binary in {folder}")
        return folder
    cmake = shutil.which("cmake")
    if not cmake:
        raise RuntimeError("vramdoc build: cmake is missing; run scripts/deps.sh (Debian/Ubuntu) first")
    build = ROOT / "build-pip"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    cuda = _cuda_setting(config_settings)
    tty = _progress_stream()
    if tty is not None:
        tty.write(f"vramdoc build: compiling the binary in {build} (CUDA {cuda}; a few minutes on 2 cores, "
                  "more with the CUDA kernels: --config-settings cuda=OFF skips them)\n")
    _log(f"building the binary with CMake in {build} (CUDA {cuda})")
    try:
        _run_build_step([cmake, "-S", str(ROOT), "-B", str(build), *generator, "-DCMAKE_BUILD_TYPE=Release",
                         "-DVRAMDOC_TESTS=OFF", f"-DVRAMDOC_CUDA={cuda}"], None)
        _run_build_step([cmake, "--build", str(build), "--parallel", str(os.cpu_count() or 2)], tty)
    finally:
        if tty is not None:
            tty.close()
    return build


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


class _Wheel:
    """A wheel being written: every file goes through add() so RECORD lists them all."""

    def __init__(self, path: Path):
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records: list[str] = []

    def add(self, arcname: str, data: bytes, executable: bool = False) -> None:
        info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
        mode = 0o755 if executable else 0o644
        info.external_attr = (stat.S_IFREG | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        self.records.append(_record_line(arcname, data))

    def close(self, record_name: str) -> None:
        lines = self.records + [f"{record_name},,"]
        info = zipfile.ZipInfo(record_name, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        self.zip.writestr(info, "\n".join(lines) + "\n")
        self.zip.close()


def _metadata(version: str) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8") if (ROOT / "README.md").exists() else ""
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\nSummary: {SUMMARY}\n"
            "Requires-Python: >=3.9\nDescription-Content-Type: text/markdown\n\n" + readme)


def _dist_info_files(version: str, tag: str) -> dict[str, str]:
    return {
        "METADATA": _metadata(version),
        "WHEEL": f"Wheel-Version: 1.0\nGenerator: vramdoc_build {version}\nRoot-Is-Purelib: false\nTag: {tag}\n",
        "entry_points.txt": "[console_scripts]\nvramdoc = vramdoc._cli:main\n",
        "top_level.txt": "vramdoc\n",
    }


def _package_files():
    """(arcname, path) of the Python package's sources, without caches."""
    for path in sorted(PACKAGE.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".typed"):
            yield "vramdoc/" + path.relative_to(PACKAGE).as_posix(), path


def _strip_copy(source: Path) -> bytes:
    """The binary's bytes, stripped of debug information when `strip` is there (94 MB -> ~9 MB)."""
    strip = shutil.which("strip")
    if not strip:
        return source.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / source.name
        result = subprocess.run([strip, "--strip-unneeded", "-o", str(target), str(source)], stderr=subprocess.PIPE)
        return (target if result.returncode == 0 else source).read_bytes()


def _write_dist_info(folder: Path, version: str, tag: str) -> str:
    """The wheel's .dist-info folder (without RECORD) written into `folder`; its name."""
    dist_info = f"{NAME}-{version}.dist-info"
    (folder / dist_info).mkdir(parents=True, exist_ok=True)
    for filename, text in _dist_info_files(version, tag).items():
        (folder / dist_info / filename).write_text(text, encoding="utf-8")
    return dist_info


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """PEP 517: the wheel's metadata without building it, so that pip's "Preparing metadata" step
    takes a moment instead of a whole CMake build."""
    return _write_dist_info(Path(metadata_directory), _version(), "py3-none-" + _platform_tag())


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 517: builds vramdoc-VERSION-py3-none-PLATFORM.whl into wheel_directory."""
    version, tag = _version(), "py3-none-" + _platform_tag()
    binaries = _build_binary(config_settings)
    name = f"{NAME}-{version}-{tag}.whl"
    dist_info = f"{NAME}-{version}.dist-info"
    wheel = _Wheel(Path(wheel_directory) / name)
    for arcname, path in _package_files():
        wheel.add(arcname, path.read_bytes())
    wheel.add("vramdoc/_bin/vramdoc", _strip_copy(binaries / "vramdoc"), executable=True)
    tracer = binaries / "libvramdoc-tracer.so"
    if tracer.is_file():
        wheel.add("vramdoc/_bin/libvramdoc-tracer.so", _strip_copy(tracer), executable=True)
    for filename, text in _dist_info_files(version, tag).items():
        wheel.add(f"{dist_info}/{filename}", text.encode())
    wheel.close(f"{dist_info}/RECORD")
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    """PEP 517: the tracked sources (git ls-files, else the tree without build folders) as .tar.gz."""
    version = _version()
    base = f"{NAME}-{version}"
    try:
        listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], check=True, capture_output=True).stdout
        files = [f for f in listed.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        skip = ("build", ".git", ".device")
        files = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
                 if p.is_file() and not p.relative_to(ROOT).parts[0].startswith(skip)]
    name = base + ".tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz") as tar:
        for f in files:
            if (ROOT / f).is_file():
                tar.add(ROOT / f, arcname=f"{base}/{f}", recursive=False)
        pkg_info = _metadata(version).encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        import io
        tar.addfile(info, io.BytesIO(pkg_info))
    return name
