"""One patient's graph as the VFS sees it during one read: loaded lazily, never kept.

A `PatientGraph` lives for one call of `read`, `list_dir` or `search`. It asks the store
only for what that call needs (facts of one kind, the links, the memories) and derives the
folder layout from it: status folders, unique slugs, lab groups, encounter file names.
"""

from collections import defaultdict
from collections.abc import Callable
from functools import cached_property

from engine.as_of import AsOf
from engine.errors import NotFound
from engine.models import (
    Fact,
    FactKind,
    FactLink,
    FactLinkType,
    MemoryRecord,
    MemoryType,
    Patient,
    Relationship,
    Scope,
    Session,
)
from engine.store import GraphStore, ViewRequest
from vfs.slugs import assign, slugify

CONDITION_FOLDERS = ("active", "resolved")
MEDICATION_FOLDERS = ("current", "discontinued")
UNDATED = "undated"


def condition_folder(fact: Fact) -> str:
    """`resolved` for resolved conditions; any other status is shown as active."""
    return "resolved" if fact.status == "resolved" else "active"


def medication_folder(fact: Fact) -> str:
    """`discontinued` for discontinued medications; any other status is shown as current."""
    return "discontinued" if fact.status == "discontinued" else "current"


def fact_date(fact: Fact) -> str | None:
    """The date a dated fact happened on (ISO text as ingested), if it has one."""
    for name in ("effective", "start", "performed", "occurrence", "date", "onset"):
        value = fact.fields.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def lab_group(fact: Fact) -> str:
    """What makes observations one lab: the LOINC code, else the first code, else the text."""
    loinc = next((c.code for c in fact.codes if c.system == "loinc"), None)
    if loinc:
        return f"loinc:{loinc}"
    if fact.codes:
        return f"{fact.codes[0].system}:{fact.codes[0].code}"
    return f"text:{slugify(fact.label)}"


class PatientGraph:
    """Lazy, per-call view of one patient's graph in a store."""

    def __init__(
        self,
        store: GraphStore,
        scope: Scope,
        *,
        as_of: AsOf = None,
        include_dismissed: bool = False,
    ) -> None:
        self.store = store
        self.scope = scope
        self.as_of = as_of
        self.include_dismissed = include_dismissed
        self._by_kind: dict[FactKind, list[Fact]] = {}
        self._extra: dict[str, Fact | None] = {}

    def load(self, request: ViewRequest) -> None:
        """Reads the patient and what `request` names in one store call, ahead of the views.

        Raises:
            NotFound: the patient does not exist.
        """
        view = self.store.read_view(self.scope, request, as_of=self.as_of)
        self._by_kind.update(view.facts)
        # Filling the cached properties: the views then find them read already.
        loaded: dict[str, object] = {"patient": view.patient, "links": view.links}
        loaded |= {"every_memory": view.memories, "sessions": view.sessions}
        self.__dict__.update({name: value for name, value in loaded.items() if value is not None})

    @cached_property
    def patient(self) -> Patient:
        """Demographics; `NotFound` when the patient does not exist."""
        return self.store.get_patient(self.scope)

    def facts(self, kind: FactKind) -> list[Fact]:
        """The patient's facts of one kind, sorted by key."""
        if kind not in self._by_kind:
            self._by_kind[kind] = self.store.list_facts(self.scope, kind, as_of=self.as_of)
        return self._by_kind[kind]

    def all_facts(self) -> list[Fact]:
        """Every fact, kind by kind in FactKind order."""
        return [fact for kind in FactKind for fact in self.facts(kind)]

    def fact(self, key: str) -> Fact | None:
        """One fact by key, from what is loaded or else from the store; None if absent."""
        kind = _kind_of(key)
        loaded = self._by_kind.get(kind) if kind else None
        if loaded is not None:
            return next((f for f in loaded if f.fact_key == key), None)
        if key not in self._extra:
            try:
                self._extra[key] = self.store.get_fact(self.scope, key, as_of=self.as_of)
            except NotFound:
                self._extra[key] = None
        return self._extra[key]

    @cached_property
    def links(self) -> list[FactLink]:
        """Fact-to-fact links."""
        return self.store.list_fact_links(self.scope)

    def linked(self, key: str, type: FactLinkType, outgoing: bool) -> list[str]:
        """Keys linked to `key` by `type`, following the edge forwards or backwards."""
        if outgoing:
            return [
                link.to_key for link in self.links if link.type is type and link.from_key == key
            ]
        return [link.from_key for link in self.links if link.type is type and link.to_key == key]

    @cached_property
    def every_memory(self) -> list[MemoryRecord]:
        """Every memory (known by `as_of`) with its relationships and reviews, most recent
        first."""
        return self.store.list_memories(self.scope, as_of=self.as_of)

    @cached_property
    def memories(self) -> list[MemoryRecord]:
        """The memories views show: those a clinician dismissed are left out, unless the
        read asked for them (`include_dismissed`)."""
        return [r for r in self.every_memory if self.include_dismissed or not r.dismissed]

    def memories_of(self, type: MemoryType) -> list[MemoryRecord]:
        """The memories of one type the views show, most recent first."""
        return [record for record in self.memories if record.memory.type is type]

    def about(self, key: str) -> list[tuple[MemoryRecord, Relationship]]:
        """Memories related to a fact, with the relationship, most recent first."""
        return [
            (record, rel)
            for record in self.memories
            for rel in record.relationships
            if rel.fact_key == key
        ]

    @cached_property
    def sessions(self) -> list[Session]:
        """Sessions, oldest first."""
        return self.store.list_sessions(self.scope, as_of=self.as_of)

    @cached_property
    def condition_slugs(self) -> dict[str, str]:
        """Condition key → slug, unique within its status folder."""
        return self._folder_slugs(FactKind.CONDITION, condition_folder)

    @cached_property
    def medication_slugs(self) -> dict[str, str]:
        """Medication key → slug, unique within its status folder."""
        return self._folder_slugs(FactKind.MEDICATION, medication_folder)

    def _folder_slugs(self, kind: FactKind, folder: Callable[[Fact], str]) -> dict[str, str]:
        slugs: dict[str, str] = {}
        by_folder: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for fact in self.facts(kind):
            by_folder[folder(fact)].append((fact.fact_key, fact.label))
        for named in by_folder.values():
            slugs |= assign(named)
        return slugs

    @cached_property
    def lab_groups(self) -> dict[str, list[Fact]]:
        """Lab group → its observations, newest first (undated last)."""
        groups: dict[str, list[Fact]] = defaultdict(list)
        for fact in self.facts(FactKind.OBSERVATION):
            groups[lab_group(fact)].append(fact)
        for facts in groups.values():
            facts.sort(key=lambda f: (fact_date(f) or "", f.fact_key), reverse=True)
        return dict(sorted(groups.items()))

    @cached_property
    def lab_slugs(self) -> dict[str, str]:
        """Lab group → slug (the file is `{slug}.md`); `latest` is reserved."""
        named = [(group, facts[0].label) for group, facts in self.lab_groups.items()]
        return assign(named, reserved=("latest",))

    @cached_property
    def encounter_files(self) -> dict[str, tuple[str, str]]:
        """Encounter key → (year folder, file name `{date}-{slug}.md`)."""
        by_date: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for fact in self.facts(FactKind.ENCOUNTER):
            by_date[_day(fact_date(fact))].append((fact.fact_key, fact.label))
        files: dict[str, tuple[str, str]] = {}
        for day, named in by_date.items():
            year = day[:4] if day != UNDATED else UNDATED
            for key, slug in assign(named).items():
                files[key] = (year, f"{day}-{slug}.md")
        return files

    def path_of(self, fact: Fact) -> str | None:
        """The VFS file that shows a fact."""
        key = fact.fact_key
        match fact.kind:
            case FactKind.CONDITION if key in self.condition_slugs:
                slug = self.condition_slugs[key]
                return f"/conditions/{condition_folder(fact)}/{slug}/_story.md"
            case FactKind.MEDICATION if key in self.medication_slugs:
                return f"/medications/{medication_folder(fact)}/{self.medication_slugs[key]}"
            case FactKind.OBSERVATION:
                return f"/labs/{self.lab_slugs.get(lab_group(fact), 'latest')}.md"
            case FactKind.ENCOUNTER if key in self.encounter_files:
                year, name = self.encounter_files[key]
                return f"/encounters/{year}/{name}"
            case FactKind.ALLERGY:
                return "/allergies.md"
            case FactKind.IMMUNIZATION:
                return "/immunizations.md"
            case FactKind.PROCEDURE:
                return "/procedures.md"
        return None


def _kind_of(key: str) -> FactKind | None:
    try:
        return FactKind(key.split(":", 1)[0])
    except ValueError:
        return None


def _day(date: str | None) -> str:
    if date and len(date) >= 10 and date[:4].isdigit() and date[4] == "-":
        return date[:10]
    if date and len(date) >= 4 and date[:4].isdigit():
        return date[:4]
    return UNDATED
