"""Every string from a result file is untrusted: make it inert in Markdown and HTML alike."""

from __future__ import annotations

# One pass over the raw text: HTML's special characters and every character with a meaning in Markdown
# (links, emphasis, tables, code, headings) become character references, which both the Markdown parser
# and the browser show as plain text.
_HTML = "&<>\"'"
_MARKDOWN = "\\`*_{}[]()#+!|~=:"
_ENTITIES = {c: f"&#{ord(c)};" for c in _HTML + _MARKDOWN}
_ENTITIES.update({"\n": " ", "\r": " ", "\t": " "})
_TABLE = str.maketrans(_ENTITIES)  # str.translate: the same mapping in one C pass (a character at a time in Python
# took a tenth of a machine page's time: every value a template prints passes here)


def text(value: object) -> str:
    """Escape a value for a Markdown page (paragraphs, table cells and HTML attributes)."""
    return str(value).translate(_TABLE)
