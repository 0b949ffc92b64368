"""Reads a CSV or Parquet file the scope exported with pandas and polars, as a data scientist
would (no options), and prints what each made of it as JSON: the column types and the first
row, exactly (integers as strings, so that 64-bit values survive JSON)."""

import json
import sys

import pandas
import polars


def cell(v):
    if v is None:
        return None
    if isinstance(v, float):
        return repr(v)
    return str(v)


path = sys.argv[1]
if path.endswith(".parquet"):
    pd_frame = pandas.read_parquet(path)
    pl_frame = polars.read_parquet(path)
else:
    pd_frame = pandas.read_csv(path)
    pl_frame = polars.read_csv(path)
print(
    json.dumps(
        {
            "pandas": {
                "dtypes": {k: str(v) for k, v in pd_frame.dtypes.items()},
                # Column by column: a row of mixed types would be widened to float.
                "first": [cell(pd_frame[c].iloc[0].item()) for c in pd_frame.columns],
                "rows": len(pd_frame),
            },
            "polars": {
                "dtypes": {k: str(v) for k, v in pl_frame.schema.items()},
                "first": [cell(v) for v in pl_frame.row(0)],
                "rows": pl_frame.height,
            },
        }
    )
)
