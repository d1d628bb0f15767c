"""Reference pages generated from the code, so they cannot drift from it: the suite (the workload registry)
and the result-file format (the JSON Schema the validator enforces)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from runner import SUITE_VERSION
from runner.schema import SCHEMA_VERSION, json_schema
from runner.workloads import PROFILES, all_workloads
from site_builder.escape import text as esc

if TYPE_CHECKING:
    from site_builder.pages import Site


def _flops(value: float | None) -> str:
    if value is None:
        return "-"
    for scale, unit in ((1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1e3, "kFLOP")):
        if value >= scale:
            return f"{value / scale:,.3g} {unit}"
    return f"{value:,.0f} FLOP"


def suite_page(site: Site | None = None) -> str:
    lines = [
        f"# The suite (version {SUITE_VERSION})",
        "",
        "Generated from the workload registry (`runner/workloads/`) at build time. Each workload is a "
        "published CPU-against-GPU experiment rebuilt with random weights and synthetic data of the same "
        "shapes. A result is compared with another only when their `workload_hash` is equal: the hash covers "
        "the suite version, workload, loop (variant) and full configuration, and leaves out the framework and "
        "device, which are what the site compares. Parameter counts and FLOPs (multiply-add = 2 FLOPs, matrix "
        "products and convolutions only) are analytic and checked against the models by the tests.",
        "",
        "**As-written** is the seed's own code, line by line: its DataLoader settings, optimiser, host "
        "synchronisations and prints (the tests compare the PyTorch loops' settings with lines quoted from the "
        "seeds, and `tests/benchmarks/fidelity.py` times each against a standalone transcription of the seed). "
        "**Tuned** is the best the device can do. Each workload lists what its as-written loops do and where "
        "they cannot follow the seed.",
        "",
    ]
    for workload in all_workloads():
        cases = workload.cases("standard")
        lines += [
            f"## `{esc(workload.id)}`: {esc(workload.title)}",
            "",
            f"Seed {esc(workload.seed)}. {esc(workload.summary)}",
            "",
            f"- timed unit: one {esc(workload.unit)}",
            f"- loops: {', '.join(esc(v) for v in workload.variants)}",
            f"- frameworks: {', '.join(esc(f) for f in sorted(workload.implementations))}",
            "- points per profile: " + ", ".join(f"{p} {len(workload.cases(p))}" for p in PROFILES),
        ]
        if workload.requires:
            lines.append(f"- needs: {', '.join(f'`{esc(r)}`' for r in workload.requires)}")
        loops = cases[0].config.get("loops", {})
        for variant in workload.variants:
            spec = loops.get(variant)
            if spec:
                settings = ", ".join(f"{esc(k)}: `{esc(json.dumps(v))}`" for k, v in spec.items())
                lines.append(f"- {esc(variant)} loop (part of its hash): {settings}")
        if workload.deviations:
            lines += [
                "",
                "Where the as-written loops cannot follow the seed's code, and why:",
                "",
                "| framework | deviation | why |",
                "|---|---|---|",
            ]
            lines += [f"| {esc(d.framework)} | {esc(d.what)} | {esc(d.why)} |" for d in workload.deviations]
        lines += ["", "Points of the standard profile:", ""]
        header = ["point", "parameters", f"FLOPs per {esc(workload.unit)}", f"samples per {esc(workload.unit)}"]
        header += [f"hash ({esc(v)})" for v in workload.variants]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for case in cases:
            point = ", ".join(f"{k}={v}" for k, v in case.point.items()) or "-"
            cells = [
                esc(point),
                f"{case.params:,}" if case.params is not None else "-",
                _flops(case.flops_per_unit),
                f"{case.samples_per_unit:,}",
                *(f"`{case.workload_hash(v)}`" for v in workload.variants),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


def _type(prop: dict[str, Any]) -> str:
    """A JSON Schema property as a short type description."""
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in prop:
        kinds = [_type(p) for p in prop["anyOf"] if p.get("type") != "null"]
        optional = any(p.get("type") == "null" for p in prop["anyOf"])
        return " or ".join(kinds) + (" or null" if optional else "")
    if "const" in prop:
        return f"`{json.dumps(prop['const'])}`"
    if "enum" in prop:
        return "one of " + ", ".join(f"`{v}`" for v in prop["enum"])
    kind = prop.get("type", "any")
    if kind == "array":
        if "prefixItems" in prop:
            return "[" + ", ".join(_type(p) for p in prop["prefixItems"]) + "]"
        return f"list of {_type(prop.get('items', {}))}"
    if kind == "object":
        inner: dict[str, Any] = prop.get("additionalProperties") or next(
            iter(prop.get("patternProperties", {}).values()), {}
        )
        return f"mapping to {_type(inner)}" if inner else "mapping"
    limits = []
    for key, text in (("minimum", ">= {}"), ("exclusiveMinimum", "> {}"), ("maxLength", "at most {} chars")):
        if key in prop:
            limits.append(text.format(prop[key]))
    if "pattern" in prop:
        limits.append(f"matches `{prop['pattern']}`")
    return kind + (f" ({', '.join(limits)})" if limits else "")


def _fields(schema: dict[str, Any]) -> list[str]:
    required = set(schema.get("required", []))
    lines = ["| field | type | required | description |", "|---|---|---|---|"]
    for name, prop in schema.get("properties", {}).items():
        description = prop.get("description", "")
        if "default" in prop and prop["default"] not in (None, [], {}):
            description += f" Default: `{json.dumps(prop['default'])}`."
        cells = [f"`{name}`", _type(prop).replace("|", "\\|"), "yes" if name in required else "no", description]
        lines.append(
            "| "
            + " | ".join(c.replace("\n", " ").replace("|", "\\|") if i == 3 else c for i, c in enumerate(cells))
            + " |"
        )
    return lines


def schema_page(site: Site | None = None) -> str:
    schema: dict[str, Any] = json_schema()
    lines = [
        f"# Result schema (version {SCHEMA_VERSION})",
        "",
        "Generated at build time from the pydantic model in `runner/schema.py`, the same model "
        "`benchsite validate` and the site builder check every file against. Unknown keys are errors; times "
        "must be finite and positive. `benchsite schema` prints the JSON Schema; "
        "[download it here](schema.json). The [result format](results-format.md) page explains the file in prose.",
        "",
        "## ResultFile",
        "",
        *_fields(schema),
        "",
    ]
    for name, definition in sorted(schema.get("$defs", {}).items()):
        lines += [f"## {name}", ""]
        if definition.get("description"):
            lines += [definition["description"].replace("\n", " "), ""]
        lines += [*_fields(definition), ""]
    return "\n".join(lines) + "\n"


def schema_json() -> str:
    return json.dumps(json_schema(), indent=2) + "\n"
