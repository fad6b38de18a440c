"""The caching allocator's history (torch.cuda.memory._snapshot()["device_traces"][device]) as
vramdoc's text trace, one event a line (the GPU measurement scripts write it; tests and the docs read
it):
  a SIZE ID STREAM [FRAMES]   a block allocated (STREAM numbers the CUDA streams in order of first
                              use, 0 the first; FRAMES, for blocks of 1 MiB and more when asked for,
                              the innermost Python frames `file:line:function` joined by `<`)
  r ID                        freed by its owner (free_requested)
  f ID                        free completed: the block is reusable
  s/S SIZE STREAM             segment allocated / freed (m/M: mapped / unmapped, o: out of memory)
  # phase NAME                after the phase's last allocation (`cuts`: allocation count -> names)
Readers that know version 1 (`a SIZE ID`, `f ID`, `s/S SIZE`) read it unchanged: the extra fields
and `r` lines are ignored."""
import gzip
import os

MiB = 1 << 20
SEGMENT = {"segment_alloc": "s", "segment_free": "S", "segment_map": "m", "segment_unmap": "M", "oom": "o"}


def _frames(event, size, frames):
    if not frames or size < MiB:
        return ""
    return " " + "<".join(f"{os.path.basename(fr.get('filename', '?'))}:{fr.get('line', 0)}:{fr.get('name', '?')}"
                          for fr in (event.get("frames") or [])[:frames])


def write(path, events, cuts, frames=0):
    """Writes `events` to the gzip file `path`; `frames`: how many Python frames per large block."""
    ids, streams, allocs = {}, {}, 0
    stream = lambda e: streams.setdefault(e.get("stream", 0), len(streams))
    with gzip.open(path, "wt") as f:
        f.write("# vramdoc allocator trace 2: a SIZE ID STREAM [FRAMES] | r ID | f ID | s/S SIZE STREAM\n")
        for name in cuts.get(0, []):
            f.write(f"# phase {name}\n")
        for e in events:
            act, size, addr = e.get("action"), int(e.get("size", 0)), e.get("addr", 0)
            if act == "alloc":
                ids[addr] = allocs
                f.write(f"a {size} {allocs} {stream(e)}{_frames(e, size, frames)}\n")
                allocs += 1
                for name in cuts.get(allocs, []):
                    f.write(f"# phase {name}\n")
            elif act == "free_requested":
                f.write(f"r {ids.get(addr, -1)}\n")
            elif act == "free_completed":
                f.write(f"f {ids.pop(addr, -1)}\n")
            elif act in SEGMENT:
                f.write(f"{SEGMENT[act]} {size} {stream(e)}\n")
    return len(events)
