"""The toy game registered, and this folder on the path of this process and its workers.

``tests/pipeline/conftest.py`` imports it; so does a test's own subprocess
(``python -c "import toy_registry; ..."`` run in this folder).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
# Worker processes import the toy game by module name.
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(HERE), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
)

from boardsweep.core import games  # noqa: E402

games.register("toy", "toy_game")
