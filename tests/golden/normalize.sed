# The volatile fields of vramdoc's output, normalised for the golden files (tests/golden/README.md).
# Applied to every case, after the case's folder, the source and build trees and vramdoc's private
# temporary folders became <work>, <src>, <build> and <tmp>.
# The machine: the host line of `info` and its JSON fields.
s/^Host: .*/Host: <host>/
s/"\(cpu_model\|logical_cpus\|ram_total_bytes\|ram_available_bytes\)": [^,]*\(,\?\)$/"\1": "<host>"\2/
# The wall clock: Unix times in JSON and timelines, watch's clock, default file names' stamps.
s/"\(t_unix_s\|start_unix_s\)": *[0-9.e+]*/"\1": "<time>"/g
s/-20[0-9]\{6\}-[0-9]\{6\}\(-[0-9]*\)\?\.jsonl/-<stamp>.jsonl/g
# The node's name (watch's dcgm labels, a timeline's host).
s/Hostname="[^"]*"/Hostname="<node>"/g
# `info`: the host's RAM in the hierarchy table and the VRAM vs RAM table (the last column).
s/^\(  host RAM  *[0-9.]* [KMGT]iB\|  host RAM  *n\/a\)\(.*\)$/  host RAM  <host>/
s/^\(  \(capacity\|free now\)  .*  \)[0-9.]* [KMGT]iB$/\1<host>/
# The H200 snapshots' frames name the folder they were recorded in (/work/main/.gpuq/... on the
# recording machine): the same text whether or not this checkout happens to be that folder.
s#<src>/\.gpuq/#<recorded>/.gpuq/#g
s#/[^" ]*/\.gpuq/#<recorded>/.gpuq/#g
