"""The VFS tree of SPEC §4: which names each directory holds, and what renders each file.

A directory is a `{name: node}` mapping built on demand from the patient's graph; a node is
`None` for a subdirectory or a `FileNode` that renders the file when asked.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from engine.models import FactKind, MemoryType
from vfs.doc import Doc
from vfs.graph import (
    CONDITION_FOLDERS,
    MEDICATION_FOLDERS,
    PatientGraph,
    condition_folder,
    medication_folder,
)
from vfs.models import JSON, MARKDOWN
from vfs.render_conditions import raw_data, render_story
from vfs.render_encounters import render_encounter
from vfs.render_labs import render_latest, render_trend
from vfs.render_lists import render_allergies, render_immunizations, render_procedures
from vfs.render_medications import render_medication
from vfs.render_memory import render_memories
from vfs.render_patient import render_patient, render_sources
from vfs.render_timeline import render_timeline


@dataclass(frozen=True)
class FileNode:
    """A file: markdown from a Doc, or JSON data (`_raw.json`)."""

    media_type: str
    doc: Callable[[], Doc] | None = None
    data: Callable[[], dict[str, Any]] | None = None


Children = dict[str, FileNode | None]


def _md(render: Callable[[], Doc]) -> FileNode:
    return FileNode(MARKDOWN, doc=render)


def _root(graph: PatientGraph) -> Children:
    return {
        "conditions": None,
        "encounters": None,
        "labs": None,
        "medications": None,
        "memory": None,
        "allergies.md": _md(partial(render_allergies, graph)),
        "immunizations.md": _md(partial(render_immunizations, graph)),
        "patient.md": _md(partial(render_patient, graph)),
        "procedures.md": _md(partial(render_procedures, graph)),
        "sources.md": _md(partial(render_sources, graph)),
        "timeline.md": _md(partial(render_timeline, graph)),
    }


def _conditions(graph: PatientGraph, folder: str) -> Children:
    return {
        graph.condition_slugs[f.fact_key]: None
        for f in graph.facts(FactKind.CONDITION)
        if condition_folder(f) == folder
    }


def _condition(graph: PatientGraph, folder: str, slug: str) -> Children | None:
    for fact in graph.facts(FactKind.CONDITION):
        if condition_folder(fact) == folder and graph.condition_slugs[fact.fact_key] == slug:
            return {
                "_raw.json": FileNode(JSON, data=partial(raw_data, graph, fact)),
                "_story.md": _md(partial(render_story, graph, fact)),
            }
    return None


def _medications(graph: PatientGraph, folder: str) -> Children:
    return {
        graph.medication_slugs[f.fact_key]: _md(partial(render_medication, graph, f))
        for f in graph.facts(FactKind.MEDICATION)
        if medication_folder(f) == folder
    }


def _labs(graph: PatientGraph) -> Children:
    files: Children = {"latest.md": _md(partial(render_latest, graph))}
    for group, slug in graph.lab_slugs.items():
        files[f"{slug}.md"] = _md(partial(render_trend, graph, group))
    return files


def _encounters(graph: PatientGraph, year: str | None) -> Children:
    found: Children = {}
    for fact in graph.facts(FactKind.ENCOUNTER):
        folder, name = graph.encounter_files[fact.fact_key]
        if year is None:
            found[folder] = None
        elif folder == year:
            found[name] = _md(partial(render_encounter, graph, fact))
    return found


def children(graph: PatientGraph, at: tuple[str, ...]) -> Children | None:
    """The entries of the directory at `at` (path segments), or None if it is none."""
    match at:
        case ():
            return _root(graph)
        case ("conditions",):
            return dict.fromkeys(CONDITION_FOLDERS)
        case ("conditions", folder) if folder in CONDITION_FOLDERS:
            return _conditions(graph, folder)
        case ("conditions", folder, slug) if folder in CONDITION_FOLDERS:
            return _condition(graph, folder, slug)
        case ("medications",):
            return dict.fromkeys(MEDICATION_FOLDERS)
        case ("medications", folder) if folder in MEDICATION_FOLDERS:
            return _medications(graph, folder)
        case ("labs",):
            return _labs(graph)
        case ("encounters",):
            return _encounters(graph, None)
        case ("encounters", year):
            return _encounters(graph, year) or None
        case ("memory",):
            return {f"{t.value}.md": _md(partial(render_memories, graph, t)) for t in MemoryType}
    return None


def walk(graph: PatientGraph, at: tuple[str, ...] = ()) -> Iterator[tuple[str, FileNode]]:
    """Every file under `at`, as (absolute path, node), depth first in name order."""
    found = children(graph, at) or {}
    for name in sorted(found):
        node = found[name]
        if node is None:
            yield from walk(graph, (*at, name))
        else:
            yield "/" + "/".join((*at, name)), node
