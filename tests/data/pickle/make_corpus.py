#!/usr/bin/env python3
"""Writes corpus.json: small pickles of plain data, every protocol from 2 to 5, from both of
Python's picklers (the C one pickle.dumps uses, and the pure-Python pickle._Pickler), with the
rendering the reader's test handler must produce (tests/unit/test_pickle_reader.cpp), and a few
pickles the reader must refuse. Run with any Python 3.8+: python3 make_corpus.py > corpus.json, then
tar -cJf corpus.json.tar.xz corpus.json (tests/CMakeLists.txt unpacks it; the JSON itself is not committed)
"""
import collections
import io
import json
import math
import pickle


def render(o):
    """The test handler's rendering: containers expanded (shared ones too), scalars typed."""
    if o is None:
        return "N"
    if isinstance(o, bool):
        return "T" if o else "F"
    if isinstance(o, int):
        return str(o) if -2**63 <= o < 2**63 else "big"
    if isinstance(o, float):
        return "f" + ("nan" if math.isnan(o) else repr(o))
    if isinstance(o, str):
        return "s" + o.encode("utf-8", "surrogatepass").hex()
    if isinstance(o, (bytes, bytearray)):
        return "b" + bytes(o).hex()
    if isinstance(o, dict):
        return "{" + ",".join(render(k) + ":" + render(v) for k, v in o.items()) + "}"
    if isinstance(o, list):
        return "[" + ",".join(render(v) for v in o) + "]"
    if isinstance(o, tuple):
        return "(" + ",".join(render(v) for v in o) + ")"
    raise TypeError(type(o))


def cases(protocol):
    shared_frame = {"filename": "train.py", "line": 12, "name": "step"}
    stack = [shared_frame, {"filename": "main.py", "line": 3, "name": "<module>"}]
    empty = []
    snapshot_like = {
        "segments": [{"address": 2**45, "total_size": 2 << 20, "segment_pool_id": (0, 0), "frames": empty,
                      "blocks": [{"size": 512, "state": "active_allocated", "frames": stack},
                                 {"size": 1024, "state": "inactive", "frames": empty}]}],
        "device_traces": [[], [{"action": "alloc", "addr": 2**45, "size": 512, "frames": stack},
                               {"action": "free_requested", "addr": 2**45, "size": 512, "frames": stack}]],
        "allocator_settings": {}, "external_annotations": []}
    single = {"k": 1}
    yield "scalars", [None, True, False, 0, 1, -1, 255, 256, 65535, 65536, 2**31 - 1, -2**31, 2**31, -2**31 - 1,
                      2**63 - 1, -2**63, 2**63, -2**63 - 1, 2**200, 0.5, -1e300, float("inf"), float("nan"),
                      "", "a", "\u00e9t\u00e9", "x" * 300]
    if protocol >= 3:  # protocol 2 writes bytes through codecs.encode (a GLOBAL)
        yield "bytes", [b"", b"\x00\xff", b"y" * 300]
    if protocol >= 5:  # earlier protocols write bytearray through a GLOBAL
        yield "bytearray", [bytearray(b"ab")]
    yield "top_int", 7
    yield "top_str", "hello"
    yield "top_tuple", (1, 2)
    yield "top_empty_list", []
    yield "empties", [[], {}, (), [[]], [{}], {"a": []}, {"a": {}}]
    yield "empty_then_list", [[], [1]]
    yield "empty_then_nested", [[], [[1, 2]]]
    yield "single_nested", [[[1, 2]]]
    yield "single_nested_in_batch", [[[1, 2]], 5]
    yield "empty_then_long", [[], list(range(300))]
    yield "single_long_in_batch", [[list(range(300))], 5]
    yield "singletons_of_dicts", [[{"a": 1}], [{"b": 2}], [{"c": 3}]]
    yield "dict_empty_then_key", {"a": {}, "b": [1, 2]}
    yield "dict_single_in_batch", {"a": {"b": [1, 2]}, "c": 1}
    yield "dict_single_chain", {"a": {"b": {"c": [1]}}}
    yield "list_of_1000", list(range(1000))
    yield "list_of_1001", list(range(1001))
    yield "list_of_1001_dicts", [{"i": i} for i in range(1001)]
    yield "dict_of_1001", {str(i): i for i in range(1001)}
    yield "tuples", [(), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4), ("a", None, 1.5, True)]
    yield "tuple_values", {"p": (0, 0), "q": (1, "x", 2, 3), "r": ()}
    yield "list_of_pairs", [(i, str(i)) for i in range(5)]
    yield "single_tuple_item", [(1, 2, 3, 4, 5)]
    yield "shared_strings", ["abc", "abc", "abc"]
    yield "shared_dict", [single, single, [single], {"x": single}]
    yield "shared_empty", {"a": empty, "b": empty, "c": [empty, empty]}
    yield "shared_in_batch", [empty, empty]
    yield "snapshot_like", snapshot_like
    yield "deep", [[[[[[[[[[1]]]]]]]]]]
    yield "keys", {1: "int", None: "none", 1.5: "float", True: "bool"}


def refused(protocol):
    yield "ordered_dict", collections.OrderedDict(a=1), "would import or call"
    yield "a_set", {1, 2}, "EMPTY_SET" if protocol >= 4 else "would import or call"
    yield "a_function", [math.sqrt], "would import or call"
    recursive = []
    recursive.append(recursive)
    yield "recursive", recursive, "holds itself"
    yield "tuple_of_lists", ([1], [2]), "tuple holding"



def dumps(obj, protocol, which):
    if which == "c":
        return pickle.dumps(obj, protocol=protocol)
    f = io.BytesIO()
    pickle._Pickler(f, protocol=protocol).dump(obj)
    return f.getvalue()


def main():
    out = []
    for protocol in (2, 3, 4, 5):
        for which in ("c", "py"):
            for name, obj in cases(protocol):
                out.append({"name": name, "protocol": protocol, "pickler": which,
                            "hex": dumps(obj, protocol, which).hex(), "expected": render(obj)})
            for name, obj, error in refused(protocol):
                try:
                    data = dumps(obj, protocol, which)
                except Exception:
                    continue
                out.append({"name": name, "protocol": protocol, "pickler": which, "hex": data.hex(), "error": error})
    print(json.dumps(out, indent=0))


if __name__ == "__main__":
    main()
