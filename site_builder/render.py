"""Jinja2 rendering: every generated page is a template under site_builder/templates fed by plain view data.

Escaping is the default, not a discipline. Autoescape is on, and every `{{ value }}` passes through
`_inert` first, which turns HTML's special characters and every character with a meaning in Markdown into
character references (site_builder.escape), so a string from a result file is plain text wherever a template
puts it: a Markdown paragraph, a table cell, an attribute. Only Markup built by the templates themselves (a
macro's output) or by the filters here passes unchanged.

Tables and chart placeholders are wrapped in `{% filter stash %}`: Python-Markdown runs an HTML parser over
every raw HTML block, which dominated long builds, so such a block is set aside (RAW, on disk) and put back
by the MkDocs hook when MkDocs builds the page. Links inside them name the .html pages the offline build writes.
"""

from __future__ import annotations

import html
import io
import json
import math
import re
import tempfile
import weakref
from collections.abc import Callable
from typing import IO, Any

import jinja2
from markupsafe import Markup

from runner.results.intervals import NO_INTERVAL
from runner.results.labels import cpu_label
from runner.results.summary import format_seconds
from site_builder.escape import text as inert_text

FRAMEWORK_NAMES = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}


class RawBlocks:
    """HTML that goes into a page untouched (see the module docstring); its place is marked by an HTML
    comment. Text from result files is escaped before it gets here (a '<' becomes a character reference),
    so no file can forge a marker.

    The blocks wait on disk, in an unnamed temporary file, not in memory: they are most of a machine page (its
    tables), and every page is made before MkDocs renders the first (47 MB in 8,000 blocks at 2,000 result files).
    A block is read back when its page is put together (`restore`), one page at a time."""

    MARKER = re.compile(r"<!--benchsite-raw-(\d+)-->")

    def __init__(self) -> None:
        self.next = 0  # the next block's number (never reused within a build)
        self._where: dict[int, tuple[int, int]] = {}  # block number -> (offset, bytes) in the file
        self._file: IO[bytes] | None = None

    def stash(self, block: str) -> Markup:
        key = self.next
        self.next += 1
        data = str(block).encode()
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by clear(), or when this goes)
            weakref.finalize(self, self._file.close)
        self._file.seek(0, io.SEEK_END)
        self._where[key] = (self._file.tell(), len(data))
        self._file.write(data)
        return Markup(f"<!--benchsite-raw-{key}-->\n")  # a block of its own: Markdown text may follow

    def block(self, key: int) -> str:
        offset, size = self._where[key]
        assert self._file is not None
        self._file.seek(offset)
        return self._file.read(size).decode()

    def restore(self, page_html: str) -> str:
        """The page with its blocks put back; each block is put back once (it is let go here)."""

        def put_back(m: re.Match[str]) -> str:
            key = int(m.group(1))
            if key not in self._where:
                return m.group(0)
            text = self.block(key)
            del self._where[key]
            return text

        return self.MARKER.sub(put_back, page_html)

    def clear(self) -> None:
        if self._file is not None:
            self._file.close()
        self._file = None
        self._where.clear()
        self.next = 0

    def detach(self, markdown: str, first: int) -> tuple[str, list[str]]:
        """A page's Markdown rendered since block `first` was the next, with its markers numbered from 0, and its
        blocks in order: what a build keeps of a rendered page (site_builder.memo), independent of this build's
        numbering."""
        last = self.next
        blocks = [self.block(k) for k in range(first, last)]

        def renumber(m: re.Match[str]) -> str:
            k = int(m.group(1))
            return f"<!--benchsite-raw-{k - first}-->" if first <= k < last else m.group(0)

        return self.MARKER.sub(renumber, markdown), blocks

    def attach(self, markdown: str, blocks: list[str]) -> str:
        """The inverse of detach in this build: the blocks stashed again, the markers numbered as they were."""
        first = self.next
        for block in blocks:
            self.stash(block)
        return self.MARKER.sub(lambda m: f"<!--benchsite-raw-{int(m.group(1)) + first}-->", markdown)


RAW = RawBlocks()


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _inert(value: Any) -> Any:
    """Every template expression's value: Markup passes, a missing value prints '-', the rest is inert text."""
    if isinstance(value, Markup):
        return value
    if _missing(value):
        return Markup("-")
    return Markup(inert_text(value))


def seconds(value: float | None) -> str:
    return "-" if _missing(value) else format_seconds(float(value))  # type: ignore[arg-type]


def times(value: float | None) -> str:
    return "-" if _missing(value) else f"{float(value):.2f}x"  # type: ignore[arg-type]


def count(value: float | None) -> str:
    return "-" if _missing(value) else f"{float(value):,.0f}"  # type: ignore[arg-type]


def percent(value: float | None) -> str:
    return "-" if _missing(value) else f"{float(value):.1%}"  # type: ignore[arg-type]


def things(n: int, noun: str) -> str:
    """A count with its noun, singular or plural: "1 machine", "2 machines", "0 measurements"."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def per(unit: str | None) -> str:
    """What a time is per, after it: " per epoch", " per step" (a streaming latency and a missing unit: nothing)."""
    return f" per {unit}" if isinstance(unit, str) and unit in ("epoch", "step", "call", "batch") else ""


def share(value: float | None) -> str:
    """A share (of a device's peak): a percentage with one decimal, or two significant digits below 1% (a small
    loop's 0.012% is not "0.0%")."""
    if _missing(value):
        return "-"
    percent_value = float(value) * 100  # type: ignore[arg-type]
    if percent_value != 0 and abs(percent_value) < 1:
        return f"{percent_value:.2g}%"
    return f"{percent_value:.1f}%"


def interval(lo: float | None, hi: float | None, fmt: str = "times") -> str:
    """'lo .. hi' in the given format; a missing side is open ('below' / 'above' the measured range)."""
    show = FORMATS[fmt]
    if _missing(lo) and _missing(hi):
        return "-"
    if _missing(lo):
        return f"below the range .. {show(hi)}"
    if _missing(hi):
        return f"{show(lo)} .. beyond the range"
    return f"{show(lo)} .. {show(hi)}"


def joules(value: float | None) -> str:
    """Energy with three significant figures: 412 J, 1.27 kJ, 38.1 mJ."""
    if _missing(value):
        return "-"
    v = float(value)  # type: ignore[arg-type]
    if v >= 1e3:
        return f"{v / 1e3:.3g} kJ"
    return f"{v:.3g} J" if v >= 1 or v == 0 else f"{v * 1e3:.3g} mJ"


def rate(value: float | None) -> str:
    """A rate with three significant figures, thousands separated: 0.162, 2.23, 75,506."""
    if _missing(value):
        return "-"
    v = float(value)  # type: ignore[arg-type]
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def mib(value: float | None) -> str:
    """A memory size given in MiB: '-' where unknown, GiB from 1 GiB up (3 significant figures)."""
    if _missing(value):
        return "-"
    return f"{float(value) / 1024:.3g} GiB" if float(value) >= 1024 else f"{float(value):.0f} MiB"  # type: ignore[arg-type]


def bounds(lo: float | None, hi: float | None, fmt: str = "times") -> str:
    """A figure's interval as `interval` writes it, and where the figure has none, why (NO_INTERVAL)."""
    return NO_INTERVAL if _missing(lo) and _missing(hi) else interval(lo, hi, fmt)


FORMATS: dict[str, Callable[[Any], str]] = {
    "plain": lambda v: f"{float(v):.2f}",
    "times": times,
    "seconds": seconds,
    "count": count,
    "percent": lambda v: f"{float(v):.1%}",
    "share": share,
    "joules": joules,
}


def framework(name: str) -> str:
    return FRAMEWORK_NAMES.get(name, name)


def page_url(path: str) -> str:
    """A page's .md path as the .html address the offline build writes (for links in raw HTML)."""
    return path[:-3] + ".html" if path.endswith(".md") else path


def attr_json(value: Any) -> Markup:
    """A JSON value for an HTML attribute (a chart's spec): quoted and escaped for the attribute."""
    return Markup(html.escape(json.dumps(value, separators=(",", ":")), quote=True))


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("site_builder", "templates"),
        autoescape=True,
        finalize=_inert,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        seconds=seconds,
        times=times,
        count=count,
        percent=percent,
        share=share,
        joules=joules,
        rate=rate,
        mib=mib,
        per=per,
        things=things,
        interval=interval,
        bounds=bounds,
        framework=framework,
        cpu=cpu_label,
        page_url=page_url,
        attr_json=attr_json,
        stash=RAW.stash,
    )
    return env


ENV = _environment()


def render(template: str, **view: Any) -> str:
    """A page's Markdown from its template and view data."""
    return ENV.get_template(template).render(**view)
