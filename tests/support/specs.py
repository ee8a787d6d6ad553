"""The one way tests write a sweep spec's text, and the small specs they share.

This folder (``tests/support``) is on ``sys.path`` and on the workers'
``PYTHONPATH`` (``tests/pipeline/conftest.py``): its toy games and helpers
import by module name.
"""

from __future__ import annotations

import json
from pathlib import Path

#: tests/support: the toy games, helper modules and old stores.
HERE = Path(__file__).resolve().parent


def spec_toml(game: str, name: str | None = None, seed: int = 7, description: str | None = None,
              **tables: dict) -> str:
    """The TOML text of a sweep spec: ``spec_toml("monopoly", grid={...},
    run={...}, checkpoints={...}, tasks={...}, params={...}, precision={...})``; tables left
    out are left out of the text.  Values are written as JSON, which is TOML
    for strings, numbers, booleans and lists."""
    lines = [f"name = {json.dumps(name or game)}", f"game = {json.dumps(game)}", f"seed = {seed}"]
    if description is not None:
        lines.append(f"description = {json.dumps(description)}")
    for table in ("params", "grid", "run", "checkpoints", "tasks", "precision"):
        content = tables.pop(table, None)
        if content:
            lines += ["", f"[{table}]", *(f"{k} = {json.dumps(v)}" for k, v in content.items())]
    if tables:
        raise TypeError(f"unknown spec tables: {sorted(tables)}")
    return "\n".join(lines) + "\n"


TOY_SPEC = spec_toml(
    "toy", params={"size": 8}, grid={"dice_sides": [2, 3], "rule": ["plain", "sticky"]},
    run={"replicates": 4, "games": 2, "turns": 60}, checkpoints={"count": 5},
    tasks={"replicates_per_task": 2},
)

MONOPOLY_SPEC = spec_toml(
    "monopoly", name="small", params={"tally": "per_landing", "jail_strategy": "long"},
    grid={"dice_sides": [4, 6], "deck_policy": ["independent", "shuffled_cycle"]},
    run={"replicates": 4, "games": 2, "players": 2, "turns": 300}, checkpoints={"count": 5},
    tasks={"replicates_per_task": 2},
)
