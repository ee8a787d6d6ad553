"""The report's first screen: the spec's question, the verdict in one line, the
answer figure (``answer.png``, :func:`boardsweep.pipeline.analysis.figures.answer_figure`)
and the answer table at every asked grid point, as ``run`` and ``query
--summary`` print it (:func:`boardsweep.pipeline.views.overview.answer_block`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...analysis import answer_of, cap_note, MANY_LABELS, MAX_PANELS, answer_figure, figure_words as words
from ..interval_words import interval_name
from ..overview import answer_block, short_verdict
from .page import df_html

#: The answer figure's resolution: 100 dpi draws its 12-inch width as the page's 1200-pixel column.
DPI = 100
#: Rows of the answer table the page shows at most (every row is in headlines.csv).
ANSWER_ROWS = 200


def answer_parts(ds, found: dict, verdict: dict, out: Path) -> dict | None:
    """The first screen's parts (question, verdict line, figure, caption,
    table, legend); None where the store's game is not installed here."""
    import matplotlib.pyplot as plt

    answer = answer_of(ds)
    if answer is None:
        return None
    made = answer_block(ds, found, verdict, answer)
    caps = [note for note in (cap_note(ds, est) for name, est in found.items() if name != answer.headline) if note]
    part = {"question": answer.question, "headline": answer.headline, "label": answer.label,
            "axis": answer.axis, "modal": answer.modal, "verdict": short_verdict(verdict), "figure": None,
            "table": "", "legend": "", "rows": 0, "caps": caps, "answer": []}
    if made is not None:
        block, _ = made
        frame = _frame([*block.axes, *block.columns])
        part["table"], part["legend"], part["rows"] = df_html(frame, ANSWER_ROWS), block.legend, len(frame)
        part["answer"] = list(block.answer)  # the answer in words (strategies head to head)
        if block.answer:  # every number of the pairs, as the table's CSV files hold the rest
            from ...analysis import head_to_head

            head_to_head(ds, answer.axis).to_csv(out / "head_to_head.csv", index=False)
            part["legend"] += "; every number in head_to_head.csv"
        if len(frame) > ANSWER_ROWS:
            part["legend"] += (f"; the first {ANSWER_ROWS} of its {len(frame):,} rows shown here, every row in "
                               "headlines.csv")
    fig = answer_figure(ds, found, title=False)
    if fig is not None:
        panels = getattr(fig, "boardsweep_panels", (sum(ax.get_visible() for ax in fig.axes),) * 2)
        drawn = {"series": getattr(fig, "boardsweep_series", None), "residual": getattr(fig, "boardsweep_residual", False),
                 "versus": getattr(fig, "boardsweep_versus", False)}
        fig.get_layout_engine().execute(fig)  # laid out once, not once per file
        fig.set_layout_engine("none")
        fig.savefig(out / "answer.png", dpi=DPI)
        fig.savefig(out / "answer.svg")
        plt.close(fig)
        part["figure"] = "answer.png"
        part["caption"] = _caption(answer, panels, found.get(answer.headline), drawn)
    return part


def _frame(columns: list) -> pd.DataFrame:
    """The table's columns as one frame; a table laid out in halves side by
    side for the terminal (the same headers again: every label of a
    headline) as one column set, the second half's rows under the first's."""
    headers = [c.header for c in columns]
    width = next((k for k in range(1, len(headers)) if headers[k:] == headers[:len(headers) - k]
                  and len(headers) % k == 0), len(headers))
    parts = [pd.DataFrame({c.header: c.cells for c in columns[i:i + width]}) for i in range(0, len(columns), width)]
    frame = pd.concat(parts, ignore_index=True)
    return frame[(frame != "").any(axis=1)].reset_index(drop=True)


def _caption(answer, panels: tuple[int, int], est, drawn: dict | None = None) -> str:
    """The answer figure's caption: what is drawn, in words, how many panels
    (``panels``: drawn, and every combination of the other axes: those left
    out said), and the interval the bars are (as the estimates' attrs name it);
    ``drawn``: the axis overlaid in each panel (``series``) and whether a
    residual panel is under each (``residual``)."""
    panels, total = panels
    drawn = drawn or {}
    if drawn.get("versus"):
        return ("The answer: each pair of strategies head to head, pooled over both seat orders: the difference of "
                "win shares A - B (A: the strategy that wins more) with its 95% t interval (s.e. per game); the "
                "black line at 0: no difference; under each pair, the share of its games the rounds cap ended "
                "(won by the richer player at the cap). The numbers are in the table below. SVG: answer.svg; the "
                "same figure in Python: ds.boardsweep.plot_answer().")
    what = words(answer.headline) + (f" of {answer.label}" if answer.label else "")
    along = f"against {words(answer.axis)}" if answer.axis else "at the single grid point"
    dim = est.attrs.get("dim") if est is not None and answer.label is None else None
    if dim and est.sizes.get(dim, 0) > MANY_LABELS:  # drawn with the labels along x
        what = f"{words(answer.headline)} of each {words(dim)}"
        along = f"one colour per {words(answer.axis)}" if answer.axis else "at the single grid point"
    interval = f"the 95% {interval_name(est)}" if est is not None else "their 95% intervals"
    asked = (" Marked: the grid points the question asks (" + ", ".join(
        f"{words(a)} = {', '.join(str(v) for v in vals)}" for a, vals in answer.at.items()) + ").") if answer.at else ""
    facets = " (one per combination of the other grid axes)" if panels > 1 else ""
    if total > panels:
        facets = (f" of the {total:,} combinations of the other grid axes (a figure draws at most {MAX_PANELS}, "
                  "evenly spaced over the combinations the question asks; every grid point is in headlines.csv)")
    if drawn.get("series"):
        along += f", one colour per {words(drawn['series'])} in each panel"
    residual = (" Under each panel: (estimate - exact) / s.e., the z the verdict tests, with the grey band |z| < "
                "1.96 where 95% of a correct simulator's points fall: the uncertainty at any scale of the "
                "estimate (no dot where a point has no exact answer).") if drawn.get("residual") else ""
    return (f"The answer: {what} {along}, {panels} panel{'s' if panels != 1 else ''}{facets}. Dots: the "
            f"estimates; band or bars: {interval}; black: the exact answer where one exists (a dashed "
            f"curve along the axis, or a tick at each label).{residual}{asked} SVG: answer.svg; the same figure "
            f"in Python: ds.boardsweep.plot_answer().")
