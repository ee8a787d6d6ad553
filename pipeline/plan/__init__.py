"""What to run: the task layout (decided once), the tasks and seeds, sizes, growth,
precision rounds and power planning, all from a spec, before any work.

Code outside this folder imports from here (``from ..plan import decide``), never
from its modules: ``__all__`` is what the other folders use of it (a few under
names of their own, clearer outside their module: ``precision_plan``,
``estimate_size``, ``cost_model_for``).  The face is lazy (PEP 562): a name's
module is imported when the name is first asked for.
"""

# ruff: noqa: F401 - the TYPE_CHECKING imports are this face's declaration of what it hands on

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

if TYPE_CHECKING:  # what type checkers and readers follow; at run time each name is imported on first use
    from .cost import model_for as cost_model_for, fitted_on as costs_fitted_on, forecast, priced_points
    from .precision import (decision_arrays, complete as precision_complete, plan as precision_plan,
                            STATES, stored_complete, upper_factor)
    from .sizing import AUTO_TASK_S, check_fits, decide, estimate as estimate_size, groups_points, human as human_bytes
    from .task_layout import AUTOMATIC, GIVEN, given, GROUPED, RECORDED, Recorded, TaskLayout
    from .tasks import (answer_counts, Cells, chunk_bounds, exact_key, exact_solves, ExactTask, exact_tasks, per_chunk,
                        plan_exact, plan_tasks, point_words, replicate_keys, replicate_seed, SEED_SCHEME, Task,
                        task_count)

#: This folder's modules -> the public names each gives the folder (the list above, for the run time).
_HOME = {
    "cost": ("cost_model_for", "costs_fitted_on", "forecast", "priced_points"),
    "precision": ("decision_arrays", "precision_complete", "precision_plan", "STATES",
                  "stored_complete", "upper_factor"),
    "sizing": ("AUTO_TASK_S", "check_fits", "decide", "estimate_size", "groups_points", "human_bytes"),
    "task_layout": ("AUTOMATIC", "GIVEN", "given", "GROUPED", "RECORDED", "Recorded", "TaskLayout"),
    "tasks": ("answer_counts", "Cells", "chunk_bounds", "exact_key", "exact_solves", "ExactTask", "exact_tasks",
              "per_chunk", "plan_exact", "plan_tasks", "point_words", "replicate_keys", "replicate_seed", "SEED_SCHEME",
              "Task", "task_count"),
}
#: Names this face gives under a name of its own (clearer outside their module, or one a module
#: of this folder bears): public name -> the module's.
_AS = {"cost_model_for": "model_for", "costs_fitted_on": "fitted_on", "estimate_size": "estimate", "human_bytes":
       "human", "precision_complete": "complete", "precision_plan": "plan"}
__all__, __getattr__ = lazy(__name__, _HOME, _AS)

