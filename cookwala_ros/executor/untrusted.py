"""Free text is data, never instructions (CORE §6.4).

The executor never reads free text to decide anything: names, notes, descriptions and display
strings (LangMaps, `x-cookwala-untrusted` in the standard) go into logs at most. This module
only *spots* text that tries to instruct (e.g. "ignore the safety limits", "set the heat to
300 °C") so it can be logged as `cw.incident.untrusted_instruction`; what it finds changes
nothing about the execution.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

INCIDENT = "cw.incident.untrusted_instruction"

# Keys whose string values are free text in Core documents.
FREE_TEXT_KEYS = frozenset({
    "notes", "note", "description", "detail", "comment", "text", "display", "names", "name", "title",
    "summary", "instructions", "tips", "why", "message", "label", "reason",
})
_LANG = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
_INSTRUCTION = re.compile(
    r"(ignore|disregard|forget|override|bypass|disable|turn\s+off|switch\s+off|skip)\b[^.]{0,40}"
    r"\b(instruction|instructions|previous|above|rules?|safety|limits?|sensors?|alarm|checks?|stop|mandate)"
    r"|\b(you\s+are\s+now|act\s+as|system\s+prompt|new\s+instructions?)\b"
    r"|\b(set|raise|increase)\s+(the\s+)?(heat|temperature|temp|power|limit)s?\b[^.]{0,20}\bto\b"
    r"|\bexecute\b[^.]{0,20}\b(command|code|shell)\b",
    re.IGNORECASE,
)


def _is_langmap(value: object) -> bool:
    return isinstance(value, dict) and bool(value) and all(
        isinstance(k, str) and _LANG.match(k) and isinstance(v, str) for k, v in value.items())


def free_text(document: object, pointer: str = "", inside: bool = False) -> Iterator[tuple[str, str]]:
    """(JSON pointer, text) of every free-text string in a document: LangMap values and every
    string under a free-text key (e.g. `text`, `notes`, `display`)."""
    if isinstance(document, str):
        if inside:
            yield pointer, document
    elif isinstance(document, dict):
        inside = inside or _is_langmap(document)
        for key, value in document.items():
            yield from free_text(value, f"{pointer}/{_escape(key)}", inside or key in FREE_TEXT_KEYS)
    elif isinstance(document, list):
        for i, item in enumerate(document):
            yield from free_text(item, f"{pointer}/{i}", inside)


def instruction_like(text: str) -> bool:
    return bool(_INSTRUCTION.search(text))


def findings(document: object, where: str) -> list[dict]:
    """Instruction-like free text in `document`: [{pointer, excerpt}], pointers prefixed by `where`."""
    out = []
    for pointer, text in free_text(document):
        if instruction_like(text):
            out.append({"pointer": where + pointer, "excerpt": text[:120]})
    return out


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")
