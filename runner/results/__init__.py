"""The result file, the one format every part of benchsite shares (the runner writes it, the gate checks it, the
site reads it).

- `schema`: the format itself (pydantic models; `benchsite schema` prints it as JSON Schema);
- `storage`: reading and writing result files atomically, their names, walking `results/`;
- `intervals`: a measurement's median and its 95% interval, from its raw samples;
- `streaming`: a streaming measurement's figures, from its raw record;
- `privacy`: what never goes into a file (user names, paths, addresses, host names);
- `summary`: a file's figures as text (the end-of-run summary).

Imports nothing else of benchsite, so that anything can import it.
"""
