"""The Python API: each function runs the vramdoc binary with --json and returns its document."""
from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

PathLike = Union[str, "os.PathLike[str]"]

# The exit codes of every vramdoc command (docs/cli.md): 0 yes, 1 the answer is "no" (does not
# fit, leak found): both still print the JSON document; 2 a usage or input error.
_ANSWERED = (0, 1)


class VramdocError(RuntimeError):
    """A vramdoc command failed: `message` says what went wrong in Python's words (keyword arguments,
    not command-line options), `cli_message` is what the binary said on stderr, `exit_code` its status."""

    def __init__(self, message: str, exit_code: Optional[int] = None, argv: Sequence[str] = (),
                 cli_message: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.argv = list(argv)
        self.cli_message = message if cli_message is None else cli_message


class VramdocArgumentError(VramdocError, TypeError):
    """A keyword argument the command does not take (a TypeError, as Python raises for any call)."""


class VramdocValueError(VramdocError, ValueError):
    """A keyword argument with a value the command refuses, or an input it cannot read."""


# --batch-size -> batch_size, the way the keyword is spelt in Python.
_OPTION = re.compile(r"--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")
_UNKNOWN = re.compile(r"unknown option '--([^']+)'(?:; did you mean '--([^']+)'\?)?")


def _keyword(option: str) -> str:
    return option.replace("-", "_")


def _python_error(function: str, stderr: str, exit_code: int, argv: Sequence[str]) -> VramdocError:
    """The binary's error (its first line, "vramdoc estimate: unknown option '--bach'; did you mean
    '--batch'?") said as Python says it: "vramdoc.estimate() got an unexpected keyword argument
    'bach'; did you mean 'batch'?"."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    first = lines[0] if lines else f"vramdoc exited with status {exit_code}"
    text = re.sub(r"^vramdoc(?: [a-z-]+)?: ", "", first)
    unknown = _UNKNOWN.search(text)
    if unknown:
        message = f"vramdoc.{function}() got an unexpected keyword argument '{_keyword(unknown.group(1))}'"
        if unknown.group(2):
            message += f"; did you mean '{_keyword(unknown.group(2))}'?"
        return VramdocArgumentError(message, exit_code, argv, stderr.strip())
    message = f"vramdoc.{function}(): " + _OPTION.sub(lambda m: _keyword(m.group(1)), text)
    if exit_code == 2:
        return VramdocValueError(message, exit_code, argv, stderr.strip())
    return VramdocError(message, exit_code, argv, stderr.strip())


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


def run_json(argv: Sequence[str], timeout: Optional[float] = None, function: Optional[str] = None) -> Dict[str, Any]:
    """Runs `vramdoc ARGV` (which must print JSON) and returns the parsed document.

    Raises VramdocError on a usage or input error (exit 2), or when the output is not JSON: with
    `function` (the Python function that ran it), in that function's words (VramdocArgumentError for
    an unknown keyword, VramdocValueError for a refused value), else with vramdoc's own message."""
    command = [binary_path(), *argv]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if result.returncode in _ANSWERED:
        try:
            return json.loads(result.stdout)
        except json.JSONDecodeError:
            pass
    if function:
        raise _python_error(function, result.stderr, result.returncode, command)
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
        return run_json(argv, function="estimate")


def _snapshot_file(snapshot: Mapping[str, Any], folder: str, index: int) -> str:
    """A PyTorch memory snapshot dict (torch.cuda.memory._snapshot()) pickled into `folder`, as
    torch.cuda.memory._dump_snapshot() would write it."""
    if "segments" not in snapshot:
        raise VramdocValueError("vramdoc.analyze(): a dict must be a PyTorch memory snapshot "
                                "(torch.cuda.memory._snapshot()), and this one has no 'segments'")
    path = os.path.join(folder, f"snapshot-{index}.pickle")
    with open(path, "wb") as f:
        pickle.dump(dict(snapshot), f)
    return path


def analyze(path: Union[PathLike, Mapping[str, Any], Iterable[Union[PathLike, Mapping[str, Any]]]],
            **job_options: Any) -> Dict[str, Any]:
    """What `vramdoc analyze --json PATH...` returns: the verdict ("leak", "insufficient", ...),
    the evidence and the remedies. path: a timeline (or several, one per node), a PyTorch memory
    snapshot file, or the snapshot itself as torch gives it (`torch.cuda.memory._snapshot()`, a
    dict); a list may mix them. job_options: config=..., batch=..., seq=... as analyze takes them."""
    given = [path] if isinstance(path, (str, os.PathLike, Mapping)) else list(path)
    if not given:
        raise VramdocValueError("vramdoc.analyze() needs at least one file or snapshot")
    with tempfile.TemporaryDirectory(prefix="vramdoc-snapshot-") as tmp:
        files = [_snapshot_file(p, tmp, i) if isinstance(p, Mapping) else os.fspath(p) for i, p in enumerate(given)]
        report = run_json(["analyze", "--json", *files, *options_to_argv(job_options)], function="analyze")
    # A dict has no file: the report names it as it was given, not by a temporary file now deleted.
    given_names = {f: _DICT_NAME for f, p in zip(files, given) if isinstance(p, Mapping)}
    if report.get("name") in given_names:
        report["name"] = given_names[report["name"]]
    if isinstance(report.get("snapshot"), dict) and report["snapshot"].get("source") in given_names:
        report["snapshot"]["source"] = given_names[report["snapshot"]["source"]]
    return report


_DICT_NAME = "the snapshot dict (torch.cuda.memory._snapshot())"


def version() -> str:
    """The binary's version line, e.g. 'vramdoc 0.1.0 (CUDA kernels: yes, CUPTI tracer: yes)'."""
    result = subprocess.run([binary_path(), "--version"], stdout=subprocess.PIPE, text=True)
    return result.stdout.strip()
