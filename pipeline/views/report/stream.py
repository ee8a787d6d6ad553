"""Tables and ``summary.json`` written block by block: CSV files appended under one
header, sections joined at the end, rows merged by a sort key, a JSON object streamed."""

from __future__ import annotations

import csv
import heapq
import json
import math
import shutil
from pathlib import Path
from typing import IO, Any, Iterator

import pandas as pd


class CsvParts:
    """A table written in parts: each section (e.g. a headline) its own file,
    appended block after block under one header, joined in the sections'
    first-seen order by :meth:`join` (``order``: sections first, in that order)."""

    def __init__(self, folder: Path, name: str, order: list[str] | None = None) -> None:
        self.folder, self.name = folder, name
        self.sections: list[str] = list(order or [])
        self.columns: list[str] | None = None

    def _path(self, section: str) -> Path:
        return self.folder / f".{self.name}.{self.sections.index(section)}.part"

    def _written(self) -> Iterator[Path]:
        """The sections' files, in the sections' order, those never written
        passed over; each removed once the caller has taken it in."""
        for section in self.sections:
            path = self._path(section)
            if path.exists():
                yield path
                path.unlink()

    def add(self, df: pd.DataFrame | None, section: str = "") -> None:
        """Append ``df``'s rows (none: nothing) to ``section``."""
        if df is None or df.empty:
            return
        if section not in self.sections:
            self.sections.append(section)
        path = self._path(section)
        df.to_csv(path, mode="a", header=not path.exists(), index=False)
        self.columns = self.columns or list(df.columns)

    def join(self, out: Path, drop: list[str] | None = None) -> list[str] | None:
        """The sections one after the other into ``out`` (one header; ``drop``:
        columns left out); the columns written, None where no row was added."""
        if self.columns is None:
            return None
        if drop:
            return self._join_dropping(out, drop)
        with open(out, "w") as f:
            header = False
            for path in self._written():
                with open(path) as part:
                    first = part.readline()
                    if not header:
                        f.write(first)
                        header = True
                    shutil.copyfileobj(part, f, 1 << 22)
        return self.columns

    def _join_dropping(self, out: Path, drop: list[str]) -> list[str]:
        keep = [c for c in self.columns if c not in drop]
        header = True
        for path in self._written():
            for chunk in pd.read_csv(path, dtype=str, keep_default_na=False, chunksize=50_000):
                chunk[keep].to_csv(out, mode="w" if header else "a", header=header, index=False)
                header = False
        return keep


class SortedCsv:
    """A table whose rows are sorted by one numeric column over every block
    (a stable sort, NaN last): each block's rows, sorted, kept in a file of
    their own, the files merged by :meth:`join` (a k-way merge: one row of
    each file held at once; at most ``most_open`` files open, merged in rounds beyond)."""

    def __init__(self, folder: Path, name: str, key: str, most_open: int = 200) -> None:
        self.folder, self.name, self.key, self.most_open = folder, name, key, max(2, most_open)
        self.parts: list[Path] = []
        self.columns: list[str] | None = None
        self._made = 0

    def _part(self) -> Path:
        self._made += 1
        return self.folder / f".{self.name}.{self._made}.part"

    def add(self, df: pd.DataFrame | None) -> None:
        """One block's rows (sorted here, stably, by the key)."""
        if df is None or df.empty:
            return
        path = self._part()
        df.sort_values(self.key, kind="stable").to_csv(path, index=False)
        self.parts.append(path)
        self.columns = self.columns or list(df.columns)

    def join(self, out: Path) -> list[str] | None:
        """Every block's rows into ``out`` in the order of one stable sort of them all
        (consecutive blocks merged first where they are more than ``most_open``:
        ties keep the blocks' order)."""
        if self.columns is None:
            return None
        parts = self.parts
        while len(parts) > self.most_open:
            rounds = [parts[k:k + self.most_open] for k in range(0, len(parts), self.most_open)]
            parts = [self._merge(group, self._part()) if len(group) > 1 else group[0] for group in rounds]
        self._merge(parts, out)
        return self.columns

    def _merge(self, parts: list[Path], out: Path) -> Path:
        """``parts`` merged into ``out`` (then removed)."""
        column = self.columns.index(self.key)
        files = [open(p) for p in parts]
        try:
            with open(out, "w") as f:
                for part in files:
                    header = part.readline()
                f.write(header)
                for _, line in heapq.merge(*(_keyed(part, k, column) for k, part in enumerate(files))):
                    f.write(line)
        finally:
            for part in files:
                part.close()
            for p in parts:
                p.unlink()
        return out


def _keyed(lines, block: int, column: int):
    """(sort key, line) of each row of one block's file: NaN last, ties in block then row order."""
    for row, line in enumerate(lines):
        text = next(csv.reader([line]))[column]
        value = float(text) if text else math.nan
        yield (math.isnan(value), 0.0 if math.isnan(value) else value, block, row), line


class JsonObject:
    """A JSON object written entry by entry, as ``json.dump(obj, f, indent=2)`` writes the whole."""

    def __init__(self, f: IO[str]) -> None:
        self.f, self.empty = f, True
        f.write("{")

    def add(self, entries: dict[str, Any]) -> None:
        for key, value in entries.items():
            text = json.dumps({key: value}, indent=2)  # '{\n  "key": ...\n}'
            self.f.write(("\n" if self.empty else ",\n") + text[2:-2])
            self.empty = False

    def close(self) -> None:
        self.f.write("}" if self.empty else "\n}")
