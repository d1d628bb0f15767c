"""Every string from a result file is untrusted: make it inert in Markdown and HTML alike."""

from __future__ import annotations

# One pass over the raw text: HTML's special characters and every character with a meaning in Markdown
# (links, emphasis, tables, code, headings) become character references, which both the Markdown parser
# and the browser show as plain text.
_HTML = "&<>\"'"
_MARKDOWN = "\\`*_{}[]()#+!|~=:"
_ENTITIES = {c: f"&#{ord(c)};" for c in _HTML + _MARKDOWN}
_ENTITIES.update({"\n": " ", "\r": " ", "\t": " "})
# str.translate: the same mapping in one C pass. Every value a template prints passes here: a Python step per
# character made 2.2 million of them for 100 machine pages.
_TABLE = str.maketrans(_ENTITIES)


def text(value: object) -> str:
    """Escape a value for a Markdown page (paragraphs, table cells and HTML attributes)."""
    return str(value).translate(_TABLE)
