"""One JSON reader for the plotting and table scripts: plain or gzip-compressed (.gz), as the
records under docs/perf/raw/ are kept."""
import gzip
import json


def load_json(path):
    """The JSON document in `path`; a name ending in .gz is read through gzip."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)
