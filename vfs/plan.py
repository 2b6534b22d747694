"""What each VFS path reads from the store, so that a view is one `read_view` call.

The request is made from the path alone, before routing: a path names the part of the
tree it renders, and each part's renderers need the facts of a few kinds, and perhaps the
links, memories and sessions. Whatever a renderer needs beyond the request is still read
lazily (`PatientGraph`), so a request that is too small costs a round trip, never a
wrong answer.
"""

from engine.models import FactKind
from engine.store import ViewRequest

K = FactKind
_EVERYTHING = ViewRequest(kinds=frozenset(FactKind), links=True, memories=True, sessions=True)
_ABOUT_A_FACT = {"links": True, "memories": True}
_ROOT_FILES = {
    "allergies.md": ViewRequest(kinds=frozenset({K.ALLERGY})),
    "immunizations.md": ViewRequest(kinds=frozenset({K.IMMUNIZATION})),
    "procedures.md": ViewRequest(kinds=frozenset({K.PROCEDURE})),
}


def request_for(segments: tuple[str, ...]) -> ViewRequest:
    """The reads that rendering or listing the path of `segments` needs."""
    match segments:
        case ():
            return ViewRequest()
        case (name,) if name in _ROOT_FILES:
            return _ROOT_FILES[name]
        case ("conditions", _, _, *_):
            kinds = {K.CONDITION, K.MEDICATION, K.OBSERVATION}
            return ViewRequest(kinds=frozenset(kinds), **_ABOUT_A_FACT)
        case ("conditions", *_):
            return ViewRequest(kinds=frozenset({K.CONDITION}))
        case ("medications", _, _):
            kinds = {K.MEDICATION, K.CONDITION}
            return ViewRequest(kinds=frozenset(kinds), **_ABOUT_A_FACT)
        case ("medications", *_):
            return ViewRequest(kinds=frozenset({K.MEDICATION}))
        case ("labs", *_):
            return ViewRequest(kinds=frozenset({K.OBSERVATION}))
        case ("encounters", _, _):
            return _EVERYTHING
        case ("encounters", *_):
            return ViewRequest(kinds=frozenset({K.ENCOUNTER}))
        case ("memory", _):
            kinds = {K.CONDITION, K.MEDICATION}
            return ViewRequest(kinds=frozenset(kinds), memories=True)
        case ("memory",):
            return ViewRequest()
    return _EVERYTHING
