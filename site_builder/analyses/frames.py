"""Helpers every analysis shares: plain columns, the rows with a time, the bootstrap interval of a ratio of
medians per row, a measurement's share of its device's peak, and the device models a chart keeps."""

from __future__ import annotations

import numpy as np
import pandas as pd

from site_builder import uncertainty


def plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Categoricals back to plain columns: merges and group-bys on them then behave like ordinary text."""
    return frame.astype({c: "object" for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)})


def with_peak_share(rows: pd.DataFrame) -> pd.DataFrame:
    """Each measurement's share of its device's peak FLOP/s, with the interval its time's 95% CI gives."""
    share = rows["achieved_tflops"] / rows["peak_tflops"]
    return rows.assign(
        peak_share=share,
        peak_share_lo=share * rows["median_s"] / rows["ci_hi_s"],
        peak_share_hi=share * rows["median_s"] / rows["ci_lo_s"],
    )


def ok_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The measurements that have a time, as plain columns."""
    return plain(frame[(frame["status"] == "ok") & frame["median_s"].notna()])


def ratio_intervals(table: pd.DataFrame, numerator: str, denominator: str, estimate: str) -> pd.DataFrame:
    """Columns {estimate}_lo and {estimate}_hi: the 95% bootstrap interval of each row's ratio of medians
    (NaN where a side has no samples, as in files older than the samples field)."""
    lo = np.full(len(table), np.nan)
    hi = np.full(len(table), np.nan)
    nums, dens = list(table[numerator]), list(table[denominator])
    # With a single sample on both sides nothing is known of the noise: no interval (and no verdict).
    rows = [i for i, (a, b) in enumerate(zip(nums, dens, strict=True)) if len(a) and len(b) and len(a) + len(b) > 2]
    if rows:
        lo[rows], hi[rows] = uncertainty.ratio_intervals([nums[i] for i in rows], [dens[i] for i in rows])
    return table.assign(**{f"{estimate}_lo": lo, f"{estimate}_hi": hi})


# Device models a chart or site-wide table shows at most: bounded however many machines contribute.
CHART_MODELS = 12


def top_models(table: pd.DataFrame, column: str, limit: int = CHART_MODELS) -> pd.DataFrame:
    """Rows of the `limit` values of column that the most machines share (ties: by name)."""
    if table.empty:
        return table
    counts = table.groupby(column, observed=True)["machine_id"].nunique().reset_index(name="n")
    keep = counts.sort_values(["n", column], ascending=[False, True])[column].head(limit)
    return table[table[column].isin(set(keep))]
