"""Sessions, their messages, and generate-memories (SPEC §3, §5)."""

from typing import Annotated

from fastapi import APIRouter, Path, status

from api.deps import (
    MEMORY_WRITE,
    PID_PATTERN,
    RECORD_READ,
    ScopeDep,
    SettingsDep,
    StoreDep,
    require,
)
from api.schemas import (
    GeneratedRelationship,
    GenerateResponse,
    MemoryPublic,
    MessagePublic,
    MessagesAppend,
    SessionCreate,
    SessionPublic,
    memories_public,
    new_session_id,
)
from engine.memories.select import extractor_for
from engine.memories.service import generate_memories
from engine.models import MemoryRecord, MemoryType, Session

router = APIRouter(prefix="/v1/patients/{pid}", tags=["sessions"])
SessionId = Annotated[str, Path(pattern=PID_PATTERN)]


@router.post("/sessions", status_code=status.HTTP_201_CREATED, dependencies=[require(MEMORY_WRITE)])
def create_session(
    store: StoreDep, scope: ScopeDep, body: SessionCreate | None = None
) -> SessionPublic:
    """Open a session for the patient (the id is generated unless given)."""
    session_id = body.session_id if body and body.session_id else new_session_id()
    return SessionPublic.of(store.create_session(scope, Session(session_id=session_id)))


@router.get("/sessions/{sid}", dependencies=[require(RECORD_READ)])
def get_session(store: StoreDep, scope: ScopeDep, sid: SessionId) -> SessionPublic:
    """A session with its messages (closed sessions stay readable)."""
    return SessionPublic.of(store.get_session(scope, sid), store.list_messages(scope, sid))


@router.delete("/sessions/{sid}", dependencies=[require(MEMORY_WRITE)])
def close_session(store: StoreDep, scope: ScopeDep, sid: SessionId) -> SessionPublic:
    """Close a session: it stays readable and accepts no more messages."""
    return SessionPublic.of(store.close_session(scope, sid))


@router.post(
    "/sessions/{sid}/messages",
    status_code=status.HTTP_201_CREATED,
    dependencies=[require(MEMORY_WRITE)],
)
def append_messages(
    store: StoreDep, scope: ScopeDep, body: MessagesAppend, sid: SessionId
) -> list[MessagePublic]:
    """Append messages to an open session."""
    return [MessagePublic.of(m) for m in store.append_messages(scope, sid, body.messages)]


@router.post("/sessions/{sid}/generate-memories", dependencies=[require(MEMORY_WRITE)])
def generate(
    store: StoreDep, scope: ScopeDep, settings: SettingsDep, sid: SessionId
) -> GenerateResponse:
    """Extract memories from the messages after the watermark and link them to facts."""
    result = generate_memories(store, scope, sid, extractor_for(settings))
    records = [
        MemoryRecord(
            memory=m,
            relationships=tuple(r for r in result.relationships if r.memory_id == m.memory_id),
        )
        for m in result.memories
    ]
    return GenerateResponse(
        status=result.status,
        processed_through=result.processed_through,
        memories=memories_public(store, scope, records),
        relationships=[GeneratedRelationship.of(r) for r in result.relationships],
        usage=result.usage,
        labels_swapped=result.labels_swapped,
    )


@router.get("/memories", dependencies=[require(RECORD_READ)])
def list_memories(
    store: StoreDep, scope: ScopeDep, type: MemoryType | None = None
) -> list[MemoryPublic]:
    """The patient's memories, most recent first, with relationships and their facts' sources."""
    store.get_patient(scope)
    return memories_public(store, scope, store.list_memories(scope, type))
