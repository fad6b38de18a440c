# A live case runs a real job (run, probe) under a real clock: what it measures varies from run to
# run, its layout and its words do not. Every number becomes N (a count of samples, seconds, bytes
# of a reading, a process id), so the golden file pins the report's form; the figures of a
# recording are pinned by the analyze cases on recorded files.
s/[0-9][0-9.]*\(e[-+][0-9]*\)\?/N/g
# A reading's size in any unit, and whether the job's memory ever levelled off, vary with the clock.
s/N \(B\|KiB\|MiB\|GiB\|TiB\)\b/N B/g
# A table's column widths follow its figures (a peak of 9.5 or 12.25 GiB), so a live table's runs of
# spaces are one space: the columns, their order and their words are pinned, not the widths
# (a probe case failed once on CI with a column 2 spaces wider).
s/  */ /g
