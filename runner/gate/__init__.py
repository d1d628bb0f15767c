"""The gate: what decides whether a contributed result file is published.

- `validate`: `benchsite validate`, every check of one file (the schema, recomputed figures, plausibility, privacy,
  the machine's history);
- `pull_request`: `benchsite check-pr`, the pull-request rules (only new files, under the contributor's own
  machine folders, each valid).

Runs in CI with none of the frameworks installed: nothing here imports a framework or the measuring code's
processes.
"""
