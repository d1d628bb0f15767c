"""Reference pages generated from the code, so they cannot drift from it: the suite (the workload registry)
and the result-file format (the JSON Schema the validator enforces)."""

from __future__ import annotations

import json
from typing import Any

from runner import SUITE_VERSION
from runner.results.schema import SCHEMA_VERSION, json_schema
from runner.workloads import PROFILES, all_workloads
from site_builder.render import render
from site_builder.site import Site


def _flops(value: float | None) -> str:
    if value is None:
        return "-"
    for scale, unit in ((1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1e3, "kFLOP")):
        if value >= scale:
            return f"{value / scale:,.3g} {unit}"
    return f"{value:,.0f} FLOP"


def suite_page(site: Site | None = None) -> str:
    workloads = []
    for workload in all_workloads():
        cases = workload.cases("standard")
        loops = cases[0].config.get("loops", {})
        workloads.append(
            {
                "id": workload.id,
                "title": workload.title,
                "seed": workload.seed,
                "summary": workload.summary,
                "unit": workload.unit,
                "variants": list(workload.variants),
                "hash_headers": [f"hash ({v})" for v in workload.variants],
                "frameworks": sorted(workload.implementations),
                "profiles": [{"name": p, "points": len(workload.cases(p))} for p in PROFILES],
                "requires": list(workload.requires),
                "loops": [
                    {"variant": v, "settings": [{"key": k, "value": json.dumps(x)} for k, x in loops[v].items()]}
                    for v in workload.variants
                    if loops.get(v)
                ],
                "deviations": workload.deviations,
                "cases": [
                    {
                        "point": ", ".join(f"{k}={v}" for k, v in case.point.items()) or "-",
                        "params": case.params,
                        "flops": _flops(case.flops_per_unit),
                        "samples": case.samples_per_unit,
                        "hashes": [case.workload_hash(v) for v in workload.variants],
                    }
                    for case in cases
                ],
            }
        )
    return render("suite.md.j2", suite_version=SUITE_VERSION, workloads=workloads)


def _type(prop: dict[str, Any]) -> tuple[str, list[str]]:
    """A JSON Schema property as a short plain-text type description and the definitions it refers to."""
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[-1]
        return name, [name]
    if "anyOf" in prop:
        kinds = [_type(p) for p in prop["anyOf"] if p.get("type") != "null"]
        optional = any(p.get("type") == "null" for p in prop["anyOf"])
        text = " or ".join(k for k, _ in kinds) + (" or null" if optional else "")
        return text, [r for _, refs in kinds for r in refs]
    if "const" in prop:
        return json.dumps(prop["const"]), []
    if "enum" in prop:
        return "one of " + ", ".join(json.dumps(v) for v in prop["enum"]), []
    kind = prop.get("type", "any")
    if kind == "array":
        if "prefixItems" in prop:
            items = [_type(p) for p in prop["prefixItems"]]
            return "[" + ", ".join(k for k, _ in items) + "]", [r for _, refs in items for r in refs]
        inner, refs = _type(prop.get("items", {}))
        return f"list of {inner}", refs
    if kind == "object":
        value: dict[str, Any] = prop.get("additionalProperties") or next(
            iter(prop.get("patternProperties", {}).values()), {}
        )
        if not value:
            return "mapping", []
        inner, refs = _type(value)
        return f"mapping to {inner}", refs
    limits = []
    for key, text in (("minimum", ">= {}"), ("exclusiveMinimum", "> {}"), ("maxLength", "at most {} chars")):
        if key in prop:
            limits.append(text.format(prop[key]))
    if "pattern" in prop:
        limits.append(f"matches {prop['pattern']}")
    return kind + (f" ({', '.join(limits)})" if limits else ""), []


def _fields(schema: dict[str, Any]) -> list[dict[str, Any]]:
    required = set(schema.get("required", []))
    fields = []
    for name, prop in schema.get("properties", {}).items():
        kind, refs = _type(prop)
        default = prop.get("default")
        fields.append(
            {
                "name": name,
                "type": kind,
                "refs": list(dict.fromkeys(refs)),
                "required": name in required,
                "description": prop.get("description", ""),
                "default": json.dumps(default) if "default" in prop and default not in (None, [], {}) else None,
            }
        )
    return fields


def schema_page(site: Site | None = None) -> str:
    schema: dict[str, Any] = json_schema()
    definitions = [
        {"name": name, "description": d.get("description", ""), "fields": _fields(d)}
        for name, d in sorted(schema.get("$defs", {}).items())
    ]
    return render("schema.md.j2", schema_version=SCHEMA_VERSION, top=_fields(schema), definitions=definitions)


def schema_json() -> str:
    return json.dumps(json_schema(), indent=2) + "\n"
