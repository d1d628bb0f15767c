"""What the site compares and what it shows apart: the primary suite version and profile, and everything else,
labelled (a loop fixed within a suite version among it)."""

from __future__ import annotations

import pandas as pd

from runner.workloads import known

PROFILE_ORDER = ("standard", "quick", "tiny")


def primary_slice(frame: pd.DataFrame) -> tuple[int | None, str | None]:
    """The suite version and profile the site compares by default: the newest suite, and within it the
    standard profile (or, before anyone ran standard, the fullest profile there is)."""
    if frame.empty:
        return None, None
    suite = int(frame["suite"].max())
    profiles = set(frame.loc[frame["suite"] == suite, "profile"].astype(str))
    ranked = [p for p in PROFILE_ORDER if p in profiles] or sorted(profiles)
    return suite, ranked[0]


def in_slice(frame: pd.DataFrame, suite: int | None, profile: str | None) -> pd.DataFrame:
    """The rows of one suite version and profile, each marked `earlier_loop` where its loop was fixed within the
    version (see split): a page that shows them labels them, never mixes them with the fixed loop."""
    if suite is None or frame.empty:
        return frame.assign(earlier_loop=False)
    keep = (frame["suite"] == suite) & (frame["profile"].astype(str) == profile)
    frame = frame[keep]
    return frame.assign(earlier_loop=frame["workload_hash"].isin(known.superseded(suite))).reset_index(drop=True)


def split(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(compared, apart): the primary suite version and profile, and everything else. A new suite changes
    loops (and every workload hash) and a profile changes sizes and budgets, so the two are never summarised
    together; the rest is shown on its own page, labelled. A measurement of the primary suite whose loop was
    fixed within the version (its hash `known.superseded`) is apart too, marked `earlier_loop`: it would
    otherwise stand beside the fixed loop's measurements under the same name."""
    suite, profile = primary_slice(frame)
    if suite is None:
        return frame, frame
    earlier = frame["workload_hash"].isin(known.superseded(suite)).to_numpy()
    frame = frame.assign(earlier_loop=earlier)
    mask = (frame["suite"] == suite) & (frame["profile"].astype(str) == profile) & ~earlier
    return frame[mask].reset_index(drop=True), frame[~mask].reset_index(drop=True)
