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


UNSTABLE = "ok, unstable"  # an ok measurement whose interval did not reach its target width in its time budget


def states(table: pd.DataFrame) -> pd.Series:
    """What a page and the open data say of each measurement: its status (ok, failed, skipped), and for an ok one
    recorded `stable: false` UNSTABLE, never plain ok."""
    status = table["status"].astype(object)
    unstable = (status == "ok") & table["stable"].astype(object).eq(False)
    return status.where(~unstable, UNSTABLE)


def ok_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The measurements that have a time, as plain columns."""
    return plain(frame[(frame["status"] == "ok") & frame["median_s"].notna()])


def ratio_intervals(
    table: pd.DataFrame, numerator: str, denominator: str, estimate: str, between: np.ndarray | None = None
) -> pd.DataFrame:
    """Columns {estimate}_lo and {estimate}_hi: each row's ratio of medians' 95% interval (uncertainty.ratio_interval
    for every row at once, with each row's between-run tau^2 where `between` gives one; NaN where it has none)."""
    lo, hi = uncertainty.ratio_interval_columns(list(table[numerator]), list(table[denominator]), between)
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
