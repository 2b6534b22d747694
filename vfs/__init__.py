"""The virtual filesystem of SPEC §4: markdown views of one patient, rendered on each read.

    from vfs import read, list_dir, search
    read(store, scope, "/conditions/active/", format="compact", token_budget=2000)

`read` returns a `VfsFile` (path, media_type, content, etag...) or, for a directory, a
`VfsDir`; `list_dir` (also exported as `list`) only lists; `search` ranks hits.
"""

from vfs.models import Format, SearchHit, VfsDir, VfsEntry, VfsFile, VfsNotFound
from vfs.paths import VfsInvalidPath, list_dir, read
from vfs.search import search

list = list_dir  # noqa: A001 - the API the brief names: vfs.list(store, scope, path)

__all__ = [
    "Format",
    "SearchHit",
    "VfsDir",
    "VfsEntry",
    "VfsFile",
    "VfsInvalidPath",
    "VfsNotFound",
    "list",
    "list_dir",
    "read",
    "search",
]
