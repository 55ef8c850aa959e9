"""Records, text tables and HTML for the grid results of prefill, request and speculative floors.

A result class lists its record keys (SI units) and its table columns (header, attribute,
scale); this mixin turns them into :meth:`to_records`, ``str()`` and ``_repr_html_``.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from ..units import format_number
from .records import ToDataFrame
from ..units import format_table

__all__ = ["GridResult"]

#: Record keys whose values are whole numbers when they are integral (kept as int).
_COUNTS = {"batch", "prompt", "chunk", "cached", "output", "context", "num_chunks", "draft_tokens", "shared_prefix",
           "decode_batch", "decode_context", "prefill_tokens", "prefill_context", "best_draft_tokens", "max_batch",
           "concurrency", "input_length", "output_length", "running_batch", "queued", "max_running"}


class GridResult(ToDataFrame):
    """Mixin for frozen dataclasses whose array fields broadcast over one grid."""

    #: keys of :meth:`to_records`: attribute names (scalars are repeated on every record)
    RECORD_KEYS: tuple[str, ...] = ()
    #: (header, attribute, scale) of the text table; ``scale`` None for text columns
    COLUMNS: tuple[tuple[str, str, float | None], ...] = ()

    @property
    def shape(self) -> tuple[int, ...]:
        return np.broadcast(*[np.asarray(getattr(self, key)) for key in self.RECORD_KEYS
                              if not isinstance(getattr(self, key), str)]).shape

    def _column(self, key: str) -> np.ndarray:
        return np.broadcast_to(np.asarray(getattr(self, key)), self.shape).ravel()

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per grid point with the keys of :attr:`RECORD_KEYS` (SI units, plain values)."""
        columns = {key: self._column(key) for key in self.RECORD_KEYS}
        records = []
        for i in range(int(np.prod(self.shape))):
            record: dict[str, Any] = {}
            for key, column in columns.items():
                value = column[i]
                if isinstance(value, str | np.str_):
                    record[key] = str(value)
                elif isinstance(value, bool | np.bool_):
                    record[key] = bool(value)
                else:
                    value = float(value)
                    record[key] = int(value) if key in _COUNTS and value.is_integer() else value
            records.append(record)
        return records

    def table_rows(self) -> list[list[str]]:
        columns = [(attr, self._column(attr), scale) for _, attr, scale in self.COLUMNS]
        rows = []
        for i in range(int(np.prod(self.shape))):
            row = []
            for attr, column, scale in columns:
                value = column[i]
                if scale is None or isinstance(value, str | np.str_):
                    row.append(str(value))
                elif np.isnan(float(value)):  # a quantity that does not apply here (TPOT of O = 1)
                    row.append("-")
                elif attr in _COUNTS and float(value).is_integer():
                    row.append(str(int(value)))
                elif attr.startswith("compute_bound") and np.isfinite(value):
                    row.append(str(int(np.ceil(value))))
                else:
                    row.append(format_number(float(value) / scale, 4))
            rows.append(row)
        return rows

    def title(self) -> str:  # overridden
        return type(self).__name__

    def note_lines(self) -> list[str]:
        """The lines under the table: one per note of the result (where it has ``notes``)."""
        return [f"note: {note}" for note in getattr(self, "notes", ())]

    def __str__(self) -> str:
        headers = [header for header, _, _ in self.COLUMNS]
        return "\n".join([self.title(), format_table(headers, self.table_rows(), align="right"), *self.note_lines()])

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h, _, _ in self.COLUMNS)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                       for row in self.table_rows())
        notes = "".join(f"<br>{html.escape(line)}" for line in self.note_lines())
        return (f"<p><b>{html.escape(self.title())}</b></p><table><tr>{head}</tr>{body}</table>"
                + (f"<p>{notes[4:]}</p>" if notes else ""))
