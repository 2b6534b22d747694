"""C-CDA XML plumbing: safe parsing, HL7 data types (TS, II, CD), narrative references."""

import re
from datetime import UTC, datetime, timedelta, timezone
from xml.etree.ElementTree import ParseError

import defusedxml.ElementTree as defused
from defusedxml import DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden
from lxml import etree

from engine.models import Coding
from ingest.keys import coding

HL7 = "urn:hl7-org:v3"
NS = {"h": HL7}
XSI_TYPE = "{http://www.w3.org/2001/XMLSchema-instance}type"

Element = etree._Element

# No DTD, no entity expansion, no network; the defusedxml pass below refuses them first.
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


class UnsafeXml(ValueError):
    """A document that declares a DTD or entities: refused before anything expands."""


class MalformedXml(ValueError):
    """A document that is not well-formed XML, with where the parser stopped."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


class _Discard:
    """An ElementTree parser target that builds nothing: the safety pass only validates."""

    def close(self) -> None:
        return None


def parse_xml(data: bytes) -> Element:
    """The root element of a document, parsed without DTDs, entities or network access.

    defusedxml's expat parser screens the bytes first (it refuses any DOCTYPE, entity
    declaration or external reference without expanding anything); lxml then builds the
    tree for XPath, itself configured never to resolve entities or touch the network.

    Raises:
        UnsafeXml: the document declares a DOCTYPE, entities or external references.
        MalformedXml: the document is not well-formed.
    """
    guard = defused.DefusedXMLParser(target=_Discard(), forbid_dtd=True)
    try:
        guard.feed(data)
        guard.close()
    except (DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden) as e:
        raise UnsafeXml(f"DOCTYPE and entity declarations are refused ({e})") from e
    except ParseError as e:
        raise MalformedXml(str(e), e.position[0]) from e
    try:
        root = etree.fromstring(data, _PARSER)
    except etree.XMLSyntaxError as e:
        raise MalformedXml(str(e), e.position[0]) from e
    # Belt and braces: defusedxml refused any DOCTYPE already (lxml-stubs lack `doctype`).
    if root.getroottree().docinfo.doctype:  # type: ignore[union-attr]
        raise UnsafeXml("DOCTYPE declarations are refused")
    return root


def local(el: Element) -> str:
    return etree.QName(el).localname


def first(el: Element | None, path: str) -> Element | None:
    """The first element at `path` (prefix `h:` for the HL7 namespace), or None."""
    return None if el is None else el.find(path, NS)


def every(el: Element | None, path: str) -> list[Element]:
    return [] if el is None else el.findall(path, NS)


def attr(el: Element | None, name: str) -> str | None:
    """A stripped, non-empty attribute value."""
    if el is None:
        return None
    value = el.get(name)
    return value.strip() or None if value else None


def xsi_type(el: Element | None) -> str | None:
    raw = attr(el, XSI_TYPE)
    return raw.rsplit(":", 1)[-1] if raw else None


def templates(el: Element) -> set[str]:
    """templateId roots; a versioned template (`root` + `extension`) counts as its root."""
    return {root for t in every(el, "h:templateId") if (root := attr(t, "root"))}


_BLOCKS = {"br", "td", "th", "tr", "paragraph", "item", "caption", "list", "table"}


def flat_text(el: Element | None) -> str | None:
    """The text of an element with its markup removed, whitespace collapsed.

    Inline markup joins words (`Hyper<b>tension</b>`); table cells, line breaks and
    paragraphs separate them.
    """
    if el is None:
        return None
    parts: list[str] = []

    def walk(node: Element) -> None:
        if local(node) in _BLOCKS:
            parts.append(" ")
        parts.append(node.text or "")
        for child in node:
            if isinstance(child.tag, str):
                walk(child)
            parts.append(child.tail or "")

    walk(el)
    return " ".join("".join(parts).split()) or None


def ii(el: Element | None) -> str | None:
    """An II element as `root^extension` (or `root`); None when absent or a nullFlavor."""
    root = attr(el, "root")
    if root is None:
        return None
    ext = attr(el, "extension")
    return f"{root}^{ext}" if ext else root


def instance_id(el: Element | None) -> str | None:
    """The first usable `id` child of a statement or document, as `root^extension`."""
    return next((found for i in every(el, "h:id") if (found := ii(i))), None)


def element_path(el: Element) -> str:
    """A readable location such as `/ClinicalDocument/component/.../entry[2]/act`."""
    parts: list[str] = []
    node: Element | None = el
    while node is not None:
        parent = node.getparent()
        name = local(node)
        if parent is not None:
            same = [c for c in parent if isinstance(c.tag, str) and c.tag == node.tag]
            if len(same) > 1:
                name += f"[{same.index(node) + 1}]"
        parts.append(name)
        node = parent
    return "/" + "/".join(reversed(parts))


# --- HL7 TS --------------------------------------------------------------------------

_TS = re.compile(r"(\d{4})(\d{2})?(\d{2})?(?:(\d{2})(\d{2})?(\d{2})?(\.\d{1,6})?)?([+-]\d{4})?")
MIN_YEAR = 1800  # exporters write 00010101 or 000000 for "unknown"


def _moment(match: re.Match[str]) -> datetime | None:
    """The point in time of a TS with a time of day: aware with a zone, naive without."""
    year, month, day, hour, minute, second, _, zone = match.groups()
    if day is None or hour is None:
        return None
    offset = None
    if zone:
        delta = timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5]))
        if delta >= timedelta(hours=24):
            return None
        offset = timezone(-delta if zone[0] == "-" else delta)
    try:
        moment = datetime(
            int(year), int(month), int(day), int(hour), int(minute or 0), int(second or 0)
        ).replace(tzinfo=offset)
        moment = moment.astimezone(UTC) if offset else moment
    except (ValueError, OverflowError):
        return None
    return moment if moment.year >= MIN_YEAR else None


def ts_datetime(value: str | None) -> datetime | None:
    """An HL7 TS with a time of day as an aware UTC datetime (no zone read as UTC)."""
    match = _TS.fullmatch(value.strip()) if value else None
    moment = _moment(match) if match else None
    if moment is None:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def ts_instant(value: str | None) -> datetime | None:
    """An HL7 TS as an aware UTC datetime; a date alone is midnight UTC."""
    moment = ts_datetime(value)
    if moment is not None:
        return moment
    day = parse_ts(value)
    if day is None or len(day) != 10:
        return None
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def parse_ts(value: str | None) -> str | None:
    """An HL7 TS normalised as `ingest.keys.normalize_date` does, validated.

    `YYYY`, `YYYY-MM`, `YYYY-MM-DD`; a time with a zone offset becomes UTC
    `YYYY-MM-DDTHH:MM:SSZ`; a time without one keeps its local time, without `Z`, except an
    all-zero time (`20130121000000`), which exporters use to pad a date: it stays a date.
    Invalid, impossible or placeholder values (`000000`, `20130230`, `00010101`) give None.
    """
    match = _TS.fullmatch(value.strip()) if value else None
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    clock = f"{hour or ''}{minute or ''}{second or ''}{(fraction or '').lstrip('.')}"
    if hour is not None and (zone or clock.strip("0")):
        moment = _moment(match)
        if moment is None:
            return None
        return moment.strftime("%Y-%m-%dT%H:%M:%S") + ("Z" if moment.tzinfo else "")
    try:
        datetime(int(year), int(month or 1), int(day or 1))
    except ValueError:
        return None
    if int(year) < MIN_YEAR:
        return None
    return "-".join(part for part in (year, month, day) if part)


def time_of(el: Element | None) -> str | None:
    """A normalised IVL_TS/TS point: `@value`, else `low/@value`."""
    if el is None:
        return None
    return parse_ts(attr(el, "value")) or parse_ts(attr(first(el, "h:low"), "value"))


def interval(el: Element | None) -> tuple[str | None, str | None]:
    """(start, end) of an IVL_TS; a single `@value` is the start."""
    if el is None:
        return None, None
    start = parse_ts(attr(el, "value")) or parse_ts(attr(first(el, "h:low"), "value"))
    return start, parse_ts(attr(first(el, "h:high"), "value"))


# --- narrative and coded values ------------------------------------------------------


class Narrative:
    """Resolves `<reference value="#id"/>` into the text of the narrative element `ID=id`."""

    def __init__(self, root: Element) -> None:
        self._by_id = {
            i: el for el in root.iter() if isinstance(el.tag, str) and (i := el.get("ID"))
        }

    def text(self, el: Element | None) -> str | None:
        """The referenced narrative text of a `text`/`originalText`, else its own text."""
        if el is None:
            return None
        ref = attr(first(el, "h:reference"), "value")
        if ref:
            target = self._by_id.get(ref.removeprefix("#"))
            if target is not None and (resolved := flat_text(target)):
                return resolved
        return flat_text(el)


def meaningful(text: str | None) -> str | None:
    """Text with at least one letter or digit (vendors send `????` or `null`)."""
    if not text or not any(ch.isalnum() for ch in text) or text.lower() == "null":
        return None
    return text


def codings(el: Element | None) -> tuple[Coding, ...]:
    """The code (unless a nullFlavor) and its translations, normalised."""
    if el is None:
        return ()
    found: list[Coding] = []
    for c in [el, *every(el, "h:translation")]:
        if attr(c, "nullFlavor"):
            continue
        code = coding(attr(c, "codeSystem"), attr(c, "code"), meaningful(attr(c, "displayName")))
        if code is not None and all((f.system, f.code) != (code.system, code.code) for f in found):
            found.append(code)
    return tuple(found)


def code_label(el: Element | None, narrative: Narrative) -> str | None:
    """displayName, else originalText (narrative reference resolved), else a translation's."""
    if el is None:
        return None
    if label := meaningful(attr(el, "displayName")):
        return label
    if label := meaningful(narrative.text(first(el, "h:originalText"))):
        return label
    for translation in every(el, "h:translation"):
        if label := meaningful(attr(translation, "displayName")):
            return label
    return None


def person_name(el: Element | None) -> str | None:
    """`Given Middle Family` from a PN (prefixes and suffixes dropped)."""
    if el is None:
        return None
    given = [meaningful(flat_text(g)) for g in every(el, "h:given")]
    family = [meaningful(flat_text(f)) for f in every(el, "h:family")]
    words = [w for w in given + family if w]
    return " ".join(words) if words else meaningful(flat_text(el))
