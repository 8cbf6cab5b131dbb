"""Reader for Daisen's CSV trace (akita v3 ``CSVTraceWriter``).

Header ``ID, ParentID, Kind, What, Where, Start, End``; times in seconds. akita writes
``", "`` separators without quoting, so spaces after commas are skipped; quoted fields
(as our exporter writes them) are accepted too. Times are parsed as exact decimals.
akita's writer repeats some rows word for word; the loader drops those repeats (and
counts them), while a repeated ID with other fields stays an error.
"""
import csv

from .loader import ForeignTask, TraceFormatError, seconds_to_ps

HEADER = ("ID", "ParentID", "Kind", "What", "Where", "Start", "End")


def read(stream, path, loader, progress=None):
    """Stage every data row into ``loader``; ``progress(n)`` is called now and then."""
    reader = csv.reader(stream, skipinitialspace=True)
    try:
        header = next(reader)
    except StopIteration:
        raise TraceFormatError(f"{path}:1: empty file, expected the header {', '.join(HEADER)}") from None
    header = tuple(h.strip() for h in header)
    if header != HEADER:
        raise TraceFormatError(f"{path}:1: header is {', '.join(header)}; expected {', '.join(HEADER)}")
    add = loader.add
    for row in reader:
        if len(row) != 7:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            raise TraceFormatError(f"{path}:{reader.line_num}: expected {len(HEADER)} fields,"
                                   f" found {len(row)}")
        tid, parent, kind, what, location, start, end = (f.strip() for f in row)
        where = f"{path}:{reader.line_num}"
        add(ForeignTask(ext_id=tid, parent_ext=parent or None, category=kind, action=what,
                        location=location, start_ps=seconds_to_ps(start, where, "Start"),
                        end_ps=seconds_to_ps(end, where, "End"), where=where))
        if progress and not loader.count % 4096:
            progress(0)
