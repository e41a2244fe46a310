#!/usr/bin/env python3
"""Reads CSV files written by ridge with the csv module, as pandas.read_csv or a spreadsheet would.

Arguments: FILE[:ROWS] ... Each file must have one header row, rows as long as the header, no comment or
section lines, and every number cell plain (int or float as written: no units, separators or prefixes).
ROWS, when given, is the expected number of data rows."""
import csv
import re
import sys

# "1,234", "12.3 ms", "4.09 GFLOP", "98 MiB", "12%": numbers with separators, prefixes or units.
HUMAN = re.compile(r"^-?\d[\d,]*(\.\d+)?\s*([kMGTPE]i?)?(B|FLOP|MAC|FLOP/s|B/s|s|ms|us|ns|%|x)?$")


def check(spec):
    path, _, rows = spec.partition(":")
    with open(path, newline="") as f:
        table = list(csv.reader(f))
    assert table, f"{path}: empty"
    header, data = table[0], table[1:]
    assert all(h and not h.startswith("#") for h in header), f"{path}: bad header {header}"
    assert len(set(header)) == len(header), f"{path}: duplicate column names {header}"
    for i, row in enumerate(data):
        assert len(row) == len(header), f"{path}: row {i + 1} has {len(row)} cells, header {len(header)}"
    if rows:
        assert len(data) == int(rows), f"{path}: {len(data)} rows, expected {rows}"
    numeric = 0
    for row in data:
        for cell in row:
            try:
                float(cell)
            except ValueError:
                assert not HUMAN.match(cell), f"{path}: '{cell}' is a number formatted for people"
                continue
            assert "e" not in cell.lower(), f"{path}: '{cell}' is in scientific notation"
            numeric += 1
    assert numeric > 0, f"{path}: no numbers"


for spec in sys.argv[1:]:
    check(spec)
print("ok", len(sys.argv) - 1, "files")
