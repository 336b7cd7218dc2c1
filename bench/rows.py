"""Row files of bench/data, plain or gzip-compressed (the large ones ship as NAME.jsonl.gz, gzip -9n:
the repository's data stays small enough to travel to the GPU machine; docs/ARCHITECTURE.md).

  rows.open_rows(path)   a text handle on path, or on path + ".gz" where only that exists
  rows.find(path)        the name that exists: path, else path + ".gz" (path when neither does)
  rows.glob_rows(pat)    the files matching pat or pat + ".gz", sorted, each name as it exists
"""
import glob
import gzip
import os


def find(path):
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        return path + ".gz"
    return path


def open_rows(path):
    path = find(path)
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def glob_rows(pattern):
    return sorted(set(glob.glob(pattern)) | set(glob.glob(pattern + ".gz")))
