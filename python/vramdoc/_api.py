"""The Python API: each function runs the vramdoc binary with --json and returns its document."""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

PathLike = Union[str, "os.PathLike[str]"]

# The exit codes of every vramdoc command (docs/cli.md): 0 yes, 1 the answer is "no" (does not
# fit, leak found): both still print the JSON document; 2 a usage or input error.
_ANSWERED = (0, 1)


class VramdocError(RuntimeError):
    """A vramdoc command failed: `message` is what it said on stderr, `exit_code` its status."""

    def __init__(self, message: str, exit_code: Optional[int] = None, argv: Sequence[str] = ()):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.argv = list(argv)


def _is_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def binary_path() -> str:
    """The vramdoc binary: $VRAMDOC_BINARY, the one installed with this package, or one on PATH."""
    candidates: List[Path] = []
    if os.environ.get("VRAMDOC_BINARY"):
        candidates.append(Path(os.environ["VRAMDOC_BINARY"]))
    candidates.append(Path(__file__).resolve().parent / "_bin" / "vramdoc")
    # Every `vramdoc` on PATH, in order: the first may be this package's own Python launcher.
    candidates += [Path(d) / "vramdoc" for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    for candidate in candidates:  # only a native executable will do
        if candidate.is_file() and os.access(candidate, os.X_OK) and _is_elf(candidate):
            return str(candidate)
    raise VramdocError("the vramdoc binary was not found (set VRAMDOC_BINARY, or reinstall: pip install .)")


def _option_name(key: str) -> str:
    return "--" + key.replace("_", "-")


def options_to_argv(options: Mapping[str, Any]) -> List[str]:
    """Keyword arguments as CLI options: batch=4 -> --batch 4, grad_checkpointing=True -> the flag,
    None and False -> left out, a list -> the option once per item."""
    argv: List[str] = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        name = _option_name(key)
        if value is True:
            argv.append(name)
        elif isinstance(value, (list, tuple)):
            for item in value:
                argv += [name, str(item)]
        else:
            argv += [name, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return argv


def run_json(argv: Sequence[str], timeout: Optional[float] = None) -> Dict[str, Any]:
    """Runs `vramdoc ARGV` (which must print JSON) and returns the parsed document.

    Raises VramdocError with vramdoc's own message on a usage or input error (exit 2), or when the
    output is not JSON."""
    command = [binary_path(), *argv]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if result.returncode in _ANSWERED:
        try:
            return json.loads(result.stdout)
        except json.JSONDecodeError:
            pass
    message = result.stderr.strip() or f"vramdoc exited with status {result.returncode}"
    raise VramdocError(message, result.returncode, command)


def _config_object_dict(config: Any) -> Optional[Dict[str, Any]]:
    """A transformers PretrainedConfig (anything with to_dict()) or a dict, as a plain dict."""
    if isinstance(config, Mapping):
        return dict(config)
    to_dict = getattr(config, "to_dict", None)
    if callable(to_dict):
        data = dict(to_dict())
        model_type = getattr(config, "model_type", None)
        if model_type and not data.get("model_type"):
            data["model_type"] = model_type
        return data
    return None


def estimate(config: Any = None, *, model: Optional[str] = None, mode: Optional[str] = None,
             precision: Optional[str] = None, batch: Optional[int] = None, seq: Optional[int] = None,
             **options: Any) -> Dict[str, Any]:
    """What `vramdoc estimate --json` returns for these options.

    config: a config.json or model directory path, a model id ("org/name") found in the local
    Hugging Face cache, a transformers config object, or a dict of config.json's fields.
    model: a built-in preset (`vramdoc estimate --list-models`).
    Other keyword arguments are estimate's options with '_' for '-': gpu="RTX 4090",
    grad_checkpointing=True, max_batch=True, lora_rank=8, ..."""
    named = {"mode": mode, "precision": precision, "batch": batch, "seq": seq}
    argv = ["estimate", "--json"]
    if model is not None:
        argv += ["--model", model]
    data = _config_object_dict(config) if config is not None else None
    with tempfile.TemporaryDirectory(prefix="vramdoc-config-") as tmp:
        if data is not None:
            path = Path(tmp) / "config.json"
            path.write_text(json.dumps(data, default=str), encoding="utf-8")
            argv += ["--config", str(path)]
        elif config is not None:
            argv += ["--config", os.fspath(config)]
        argv += options_to_argv({**named, **options})
        return run_json(argv)


def analyze(path: Union[PathLike, Iterable[PathLike]], **job_options: Any) -> Dict[str, Any]:
    """What `vramdoc analyze --json PATH...` returns: the verdict ("leak", "insufficient", ...),
    the evidence and the remedies. path: a timeline (or several, one per node), or a PyTorch
    memory snapshot. job_options: config=..., batch=..., seq=... as analyze takes them."""
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    if not paths:
        raise VramdocError("analyze: give at least one file")
    return run_json(["analyze", "--json", *[os.fspath(p) for p in paths], *options_to_argv(job_options)])


def version() -> str:
    """The binary's version line, e.g. 'vramdoc 0.1.0 (CUDA kernels: yes, CUPTI tracer: yes)'."""
    result = subprocess.run([binary_path(), "--version"], stdout=subprocess.PIPE, text=True)
    return result.stdout.strip()
