"""Results as pandas DataFrames (``[frames]`` extra): the ``to_dataframe()`` of every result.

Every result with ``to_records()`` gets :meth:`ToDataFrame.to_dataframe`: one row per grid
point, the record keys as columns, SI units.  pandas is imported on first use; the text tables
need none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..errors import MissingExtraError

if TYPE_CHECKING:  # optional extra ``[frames]``: imported on first use at run time
    import pandas as pd

__all__ = ["ToDataFrame", "records_to_dataframe"]


def records_to_dataframe(records: list[dict[str, Any]]) -> pd.DataFrame:
    """A :class:`pandas.DataFrame` of ``records`` (columns in record order)."""
    try:
        import pandas as pd
    except ImportError:
        raise MissingExtraError("pandas", "frames", "to_dataframe()") from None
    return pd.DataFrame.from_records(records, columns=list(records[0]) if records else None)


class _HasRecords(Protocol):
    """What :class:`ToDataFrame` needs of the class it is mixed into."""

    def to_records(self) -> list[dict[str, Any]]: ...


class ToDataFrame:
    """Mixin: ``to_dataframe()`` from ``to_records()``."""

    def to_dataframe(self: _HasRecords) -> pd.DataFrame:
        """The records as a :class:`pandas.DataFrame`, one row per grid point (SI units).

        Needs pandas (``pip install 'roofline_decode[frames]'``).
        """
        return records_to_dataframe(self.to_records())
