"""A pandas DataFrame is read a batch of rows at a time, as an Arrow table or a Dataset is."""

from __future__ import annotations

import pandas as pd

from knowledgepulse.records.readers import BATCH_ROWS
from knowledgepulse.runs.inputs import rows_of


def test_a_dataframe_is_made_into_row_dicts_a_batch_at_a_time() -> None:
    """A row past the first batch is made when its batch is reached, not all rows at the start.

    Seen by a change made to the frame after the first row was read: the whole frame made
    into dicts at once (360 MB at 1M rows before any row was read) would give the old value.
    """
    frame = pd.DataFrame({"id": [f"row-{n}" for n in range(BATCH_ROWS + 1)]})
    rows = rows_of(frame)
    assert next(rows) == {"id": "row-0"}
    frame.iloc[-1, 0] = "changed"
    rest = list(rows)
    assert len(rest) == BATCH_ROWS
    assert rest[-1] == {"id": "changed"}
    assert rest[-2] == {"id": f"row-{BATCH_ROWS - 1}"}
