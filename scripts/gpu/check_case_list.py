#!/usr/bin/env python3
"""Checks a new round's case list for issue 28 before it is committed: every model of the round's NEW_MODELS whose
model_type and config fields equal a model of an earlier round (the same model measured again, not a new size), and
every name an earlier round already used (the round's entry replaces the earlier one in the shared table).

Round 9's list named nine such repeats as new sizes (docs/estimator.md, "Round 9's measurement"); this is the check
that would have caught them. It needs no GPU and no transformers (a stub stands in for the import).

Usage: python3 scripts/gpu/check_case_list.py measure_estimator_kinds_h   (the round's module, beside this file)
Exit status 1 when a repeat or a reused name is found."""
import importlib
import os
import sys
import types



def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if "transformers" not in sys.modules:
        try:
            import transformers  # noqa: F401
        except ImportError:  # the scripts import it at module level; the check reads only their tables
            stub = types.ModuleType("transformers")
            stub.__getattr__ = lambda name: None
            sys.modules["transformers"] = stub
    import measure_estimator_kinds as k
    before = dict(k.MODELS)
    rounds = sorted(n[:-3] for n in os.listdir(os.path.dirname(os.path.abspath(__file__)))
                    if n.startswith("measure_estimator_kinds_") and n.endswith(".py"))
    for name in rounds:  # the earlier rounds, in order (each updates k.MODELS on import)
        if name >= argv[1]:
            break
        importlib.import_module(name)
        before = dict(k.MODELS)
    new = importlib.import_module(argv[1]).NEW_MODELS
    found = 0
    for model, (kind, kw) in sorted(new.items()):
        if model in before:
            print(f"{model}: the name is an earlier round's ({before[model][0]})")
            found += 1
        same = [m for m, (t, w) in before.items() if t == kind and w == kw and m != model]
        if same:
            print(f"{model}: the same {kind} config as {', '.join(sorted(same))}")
            found += 1
    print(f"{len(new)} models checked, {found} finding(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
