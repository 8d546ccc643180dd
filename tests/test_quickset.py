"""tests/quickset.py: every entry of the slow table names a test that exists, and the split
keeps the n-th cases of a sweep in the quick set."""

from __future__ import annotations

import os
import re
from types import SimpleNamespace

import quickset

HERE = os.path.dirname(__file__)


def test_every_slow_entry_names_a_test_function() -> None:
    for key, n in quickset.SLOW.items():
        name, fn = key.split("::")
        with open(os.path.join(HERE, name), encoding="utf-8") as f:
            assert re.search(rf"^def {fn}\(", f.read(), re.M), key
        assert n >= 0


def test_sweeps_keep_every_nth_case() -> None:
    def item(fn: str, case: int) -> SimpleNamespace:
        return SimpleNamespace(path=SimpleNamespace(name="test_reductions.py"),
                               originalname=fn, name=f"{fn}[{case}]")

    items = [item("test_reduction_matches_numpy", i) for i in range(7)]
    items += [item("test_other", 0), item("test_reduction_matches_numpy", 7)]
    n = quickset.SLOW["test_reductions.py::test_reduction_matches_numpy"]
    slow = quickset.slow_items(items)
    assert 7 not in slow  # a test not in the table is quick
    quick = [items[i].name for i in range(len(items)) if i not in slow]
    assert sorted(quick) == sorted([f"test_reduction_matches_numpy[{i}]"
                                    for i in range(0, 8, n)] + ["test_other[0]"])
