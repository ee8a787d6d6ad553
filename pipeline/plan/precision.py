"""Precision targets: add replicates to each grid point until the largest
standard error of the game's estimates is at most ``[precision] stderr``, or
``[precision] max_replicates`` is reached.

The standard errors are those ``run``, ``query`` and ``report`` print
(:mod:`boardsweep.pipeline.analysis.headlines`), of every headline with one interval
per label (:func:`targets`): the ratio of sums over the first ``n``
replicates with the linearised ratio estimator's standard error, or, where
the game stores sums of squares, the pooled per-game one.  Both are computed
**exactly** from the stored integers (Python integers and
:class:`fractions.Fraction`, :func:`stderr_squared`,
:func:`pooled_stderr_squared`), so no float's last bit can change which
replicates run on another CPU.

Rounds are a pure function of stored, reproducible integers (nothing else is
remembered between runs), per grid point:

* ``n_0`` = ``run.replicates`` rounded up to whole task blocks;
* when replicates ``[0, n_k)`` are all done: met if ``U <= stderr^2``,
  capped if ``n_k = max_replicates``, else
  ``n_{k+1} = min(max_replicates, blocks(min(2 n_k, max(n_k + 1, ceil(n_k U / stderr^2)))))``:
  the replicates the measured variance says are needed, at most doubling per
  round so that a noisy early estimate cannot make a round overshoot by more
  than about twice what the target needs.

``U = se^2 df / chi2_q(df)`` is the :data:`UPPER_LEVEL` (90%) upper
confidence bound of the squared standard error, not the estimate itself: an
s.e. estimated from a few replicates is itself uncertain (from 4 replicates
it is below the truth by a factor 0.6 or less one time in ten), and reading
it as known declared points "met" whose true s.e. was still far above the
target.  ``df`` is that of the s.e.: replicates with events - 1, or games - 1
for the pooled per-game s.e. (where ``U`` is within a fraction of a percent
of ``se^2``).  With ``U`` the chance of stopping at a round whose true s.e.
is above the target is at most 1 - UPPER_LEVEL = 10% (less when the
true s.e. is far above it); over the few rounds a point takes (each at most
doubling) the realised share stays about that (tests/pipeline/plan/test_precision_bound.py).
The factor ``df / chi2_q(df)`` is a :class:`fractions.Fraction`
(:func:`upper_factor`): a table rounded up for ``df <= 64``, the
Wilson-Hilferty quantile in integer arithmetic above, so that the decision
stays exact and the same on every CPU.

Which s.e. and which ``U`` (:func:`headline_bound`): a per-game mean pooled
over games also has a bound from the game's fourth moment
(:func:`pooled_upper`; the chi-square law assumes normal games, and Shut the
Box's excess kurtosis of 7 made it say "met" too early in 21-27% of runs at
the worst targets); a ratio over independent games (checkpoints count games)
reads its s.e. from the checkpoint increments of every replicate
(:func:`batch_stderr_squared`), whose degrees of freedom spare replicates,
and a ratio over the turns of one game (Monopoly) from the long stretches
between its later checkpoints (tests/pipeline/plan/test_precision_skewed.py,
test_precision_chain.py).

Replaying this from the stored data gives the same decisions for any number
of workers, after a kill, and on a rerun; a killed run resumes mid-round.
The decisions are stored per grid point (``replicates_used``,
``stderr_reached``, ``precision_state``) so that ``status``, ``query`` and
``report`` show them without redoing the arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Callable, Iterable

import numpy as np

from ...core.batches import effective_df, increments, long_batches
from .task_layout import TaskLayout, given
from .tasks import Task, plan_tasks

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["STATES", "UPPER_LEVEL", "Decision", "targets", "stderr_squared", "pooled_stderr_squared",
           "headline_se2", "headline_se2_df", "upper_factor", "batch_stderr_squared",
           "pooled_upper", "headline_bound", "point_bound", "MIN_STRETCH", "decide", "plan",
           "decision_arrays", "counted", "complete", "stored_complete"]

#: precision_state values: 0 = running (more replicates to come), 1 = met, 2 = capped.
STATES = ("running", "met", "capped")


#: Confidence level of the upper bound of the s.e. that "met" requires.
UPPER_LEVEL = Fraction(9, 10)

# df / chi2_{0.1}(df) for df = 1..64, rounded up to 6 significant digits
# (scipy.stats.chi2.ppf(0.1, df), computed once; stored as decimals so that
# no float decides)
_UPPER_TABLE = tuple(Fraction(v) for v in (
    "63.3282", "9.49123", "5.1337", "3.76074", "3.105", "2.72217", "2.47079", "2.29257",
    "2.15923", "2.05543", "1.97211", "1.90362", "1.8462", "1.79729", "1.75506", "1.71817",
    "1.68565", "1.65671", "1.63078", "1.60738", "1.58616", "1.56679", "1.54904", "1.5327",
    "1.5176", "1.5036", "1.49057", "1.47842", "1.46704", "1.45637", "1.44633", "1.43688",
    "1.42795", "1.4195", "1.41149", "1.40388", "1.39665", "1.38976", "1.38319", "1.37692",
    "1.37092", "1.36517", "1.35967", "1.35439", "1.34931", "1.34444", "1.33975", "1.33523",
    "1.33087", "1.32666", "1.32261", "1.31868", "1.31489", "1.31122", "1.30767", "1.30423",
    "1.3009", "1.29766", "1.29452", "1.29147", "1.28851", "1.28563", "1.28283", "1.2801",
))
_Z_UPPER = Fraction(12816, 10000)  # z(0.9) = 1.28155..., rounded up
# z(0.95) = 1.64485..., rounded up: the fourth-moment bound's quantile.  Its
# variance is itself a noisy fourth-moment estimate (biased low for heavy
# tails): at z(0.9) the bound covered 87-88% of emulated Shut the Box rounds
# (tests/pipeline/plan/test_precision_skewed.py), at z(0.95) 93%.
_Z_FOURTH = Fraction(16449, 10000)

#: The shortest stretch of one chain (in checkpoint units: turns) read as an
#: independent batch.  A heuristic: Monopoly's long jail stays, the slowest
#: mixing shipped, keep the stated 10% from stretches of 38 turns
#: (tests/pipeline/plan/test_precision_chain.py); a toy of 60 turns does not
#: get batches of 3.
MIN_STRETCH = 16
_SCALE = 10 ** 24


def upper_factor(df: int) -> Fraction:
    """``df / chi2_q(df)`` with ``q = 1 - UPPER_LEVEL``, rounded up, as a Fraction.

    ``se^2 * upper_factor(df)`` is the 90% upper confidence bound of a
    squared standard error estimated with ``df`` degrees of freedom (the
    variance's chi-square law).  ``df <= 64``: a stored table (6 significant
    digits, rounded up); above, the Wilson-Hilferty quantile
    ``df (1 - 2/(9 df) - z sqrt(2/(9 df)))^3`` with the square root rounded up
    in integers and the result raised by 1e-4 (it is then at or above the
    exact factor for every df, tests/pipeline/plan/test_precision_bound.py).
    Integer arithmetic only: the same on every CPU.

    Parameters
    ----------
    df : int
        Degrees of freedom, >= 1.

    Returns
    -------
    Fraction
    """
    if df < 1:
        raise ValueError(f"upper_factor needs df >= 1, got {df}")
    if df <= len(_UPPER_TABLE):
        return _UPPER_TABLE[df - 1]
    root = Fraction(math.isqrt(-(-2 * _SCALE // (9 * df))) + 1, math.isqrt(_SCALE))
    base = 1 - Fraction(2, 9 * df) - _Z_UPPER * root
    return Fraction(10001, 10000) / base ** 3


@dataclass(frozen=True)
class Decision:
    """The state of one grid point: ``n`` replicates used (or planned, while
    running), the squared standard error over them (``None`` until known, or
    where fewer than 2 replicates had events)."""

    n: int
    state: str
    se2: Fraction | None = None

    @property
    def stderr(self) -> float:
        return math.sqrt(float(self.se2)) if self.se2 is not None else math.nan


def targets(game) -> list:
    """The headlines a precision target bounds: every headline with one
    standard error per label (the intervals ``run`` and ``query`` print), not
    a distribution tested as a whole by its goodness of fit."""
    from ...core.games import interval_headlines

    return interval_headlines(game)


def _last(arrays: dict[str, np.ndarray], name: str) -> np.ndarray:
    """``name`` at the last checkpoint as (replicates, labels) integers."""
    a = arrays[name]
    return a[:, -1].reshape(a.shape[0], -1)


def _denominators(arrays: dict[str, np.ndarray], h, a: np.ndarray, checkpoint: int) -> np.ndarray:
    if h.denominator is None:
        return a.sum(axis=1)
    if h.denominator == "checkpoint":
        return np.full(a.shape[0], checkpoint, dtype=np.int64)
    return _last(arrays, h.denominator).reshape(a.shape[0])


def headline_se2(h, arrays: dict[str, np.ndarray], checkpoint: int) -> Fraction | None:
    """The largest squared standard error over the labels of headline ``h``
    on one grid point's ``arrays`` (leading dim: replicate), exactly: the
    s.e. :mod:`boardsweep.pipeline.analysis.headlines` prints, in integers."""
    return headline_se2_df(h, arrays, checkpoint)[0]


def headline_se2_df(h, arrays: dict[str, np.ndarray], checkpoint: int) -> tuple[Fraction | None, int]:
    """:func:`headline_se2` and the degrees of freedom of that s.e.: games - 1
    (pooled per game), else replicates with events - 1."""
    a = _last(arrays, h.numerator)
    b = _denominators(arrays, h, a, checkpoint)
    if h.squares is not None:
        units = int(b.sum())
        return (pooled_stderr_squared(a.sum(axis=0), _last(arrays, h.squares).sum(axis=0), units),
                units - 1)
    return stderr_squared(a, b), sum(1 for r in range(b.shape[0]) if int(b[r]) != 0) - 1


def stderr_squared(a: np.ndarray, b: np.ndarray) -> Fraction | None:
    """The largest squared standard error over the labels of the ratio of
    sums ``R = sum_r a_r / sum_r b_r`` (``a``: (n, labels) integers, ``b``:
    (n,) integers), exactly: the linearised ratio estimator's

        se^2 = n sum_r (a_r B - A b_r)^2 / ((n - 1) B^4),  A = sum a_r, B = sum b_r

    (:func:`boardsweep.core.stats.replicate_ratio_stderr`; with equal ``b_r``
    the variance of the replicates' own ratios over n).  A replicate with
    ``b = 0`` (no events) has no ratio: it is left out.  ``None`` (not known
    yet) where fewer than 2 replicates have events."""
    if a.shape[0] < 2:
        raise ValueError("a standard error needs at least 2 replicates")
    keep = [r for r in range(a.shape[0]) if int(b[r]) != 0]
    if len(keep) < 2:
        return None
    n = len(keep)
    rows = [[int(x) for x in a[r]] for r in keep]
    bs = [int(b[r]) for r in keep]
    big_b = sum(bs)
    big_a = [sum(col) for col in zip(*rows)]
    top = max(sum((row[j] * big_b - big_a[j] * br) ** 2 for row, br in zip(rows, bs))
              for j in range(len(big_a)))
    return Fraction(n * top, (n - 1) * big_b ** 4)


def pooled_stderr_squared(total: np.ndarray, squares: np.ndarray, units: int) -> Fraction | None:
    """The largest squared standard error over labels of a mean over ``N =
    units`` independent games from pooled sums, exactly:
    ``se^2 = (N Q - T^2) / (N^2 (N - 1))`` with ``T = sum x`` and ``Q = sum
    x^2`` (:func:`boardsweep.core.stats.pooled_unit_stderr`).  ``None``
    where fewer than 2 games were played."""
    if units < 2:
        return None
    top = max(max(units * int(q) - int(t) * int(t), 0) for t, q in zip(np.ravel(total), np.ravel(squares)))
    return Fraction(top, units * units * (units - 1))


def _sqrt_up(x: Fraction) -> Fraction:
    """``sqrt(x)`` rounded up to a multiple of 1e-12 of its scale, in integers."""
    num, den = x.numerator * 10 ** 24, x.denominator
    return Fraction(math.isqrt(num * den) + 1, den * 10 ** 12)


def _batches(arrays: dict[str, np.ndarray], name: str) -> list[list[int]]:
    """``name``'s checkpoint increments (:func:`boardsweep.core.batches.increments`)
    as Python integers, one row per (replicate, increment), one column per label."""
    a = increments(arrays[name], axis=1)
    return [[int(v) for v in row] for row in a.reshape(a.shape[0] * a.shape[1], -1)]


def _batch_sizes(arrays: dict[str, np.ndarray], h, checkpoints: np.ndarray, n: int) -> list[int]:
    if h.denominator == "checkpoint":
        return [int(v) for v in increments(np.asarray(checkpoints, dtype=np.int64)[None, :], axis=1)[0]] * n
    if h.denominator is None:
        return [sum(row) for row in _batches(arrays, h.numerator)]
    return [row[0] for row in _batches(arrays, h.denominator)]


def batch_stderr_squared(a: list[list[int]], m: list[int]) -> Fraction | None:
    """The largest squared s.e. over labels of ``R = A / M`` from independent
    batches of unequal sizes ``m_b`` (``A = sum a_b``, ``M = sum m_b``), exactly:

        se^2 = sum_b (a_b M - A m_b)^2 / (M^2 (M^2 - sum_b m_b^2))

    (unbiased for independent units: ``E sum (a_b - R m_b)^2 = sigma^2 (M - sum m^2 / M)``).
    ``None`` where fewer than 2 batches have units."""
    keep = [b for b in range(len(m)) if m[b] != 0]
    if len(keep) < 2:
        return None
    big_m, m2 = sum(m), sum(m[b] * m[b] for b in keep)
    totals = [sum(a[b][j] for b in keep) for j in range(len(a[0]))]
    top = max(sum((a[b][j] * big_m - totals[j] * m[b]) ** 2 for b in keep) for j in range(len(totals)))
    return Fraction(top, big_m * big_m * (big_m * big_m - m2))


def pooled_upper(t: list[list[int]], q: list[list[int]], m: list[int]) -> tuple[Fraction, Fraction] | None:
    """The largest pooled per-game squared s.e. over labels and its 90% upper
    bound allowing for the game's fourth moment, from independent batches
    (``t``, ``q``: per batch and label, sums of ``x`` and ``x^2``; ``m``: games):

        U = se^2 + z_df sqrt(v) / (N - 1),  v = sum_b E_b^2 / (N^4 (N^2 - sum m_b^2)),
        E_b = N^2 Q_b - N m_b Q - 2 N T T_b + 2 m_b T^2,

    ``v`` the batch estimate of the variance of ``s^2 = Q/N - T^2/N^2``
    (``E_b / N^2``: the batch's sum of ``(x - mean)^2 - s^2``, the influence
    of a game on ``s^2``), ``z_df = z_0.95 (1 + 1/df)`` (``v`` is itself
    estimated: module constant ``_Z_FOURTH``; ``df``:
    :func:`boardsweep.core.batches.effective_df`).  A skewed game (Shut the Box: excess kurtosis 7) has ``v``
    about 4.5x the normal ``2 s^4 / N`` the chi-square bound assumes.
    ``None`` where fewer than 2 batches have games."""
    keep = [b for b in range(len(m)) if m[b] != 0]
    big_n = sum(m)
    if len(keep) < 2 or big_n < 2:
        return None
    m2 = sum(m[b] * m[b] for b in keep)
    z = _Z_FOURTH * (1 + Fraction(1, effective_df(np.array([m[b] for b in keep]))))
    se2 = upper = Fraction(0)
    for j in range(len(t[0])):
        big_t, big_q = sum(t[b][j] for b in keep), sum(q[b][j] for b in keep)
        s2 = Fraction(max(big_n * big_q - big_t * big_t, 0), big_n * big_n * (big_n - 1))
        e2 = sum((big_n * big_n * q[b][j] - big_n * m[b] * big_q - 2 * big_n * big_t * t[b][j]
                  + 2 * m[b] * big_t * big_t) ** 2 for b in keep)
        v = Fraction(e2, big_n ** 4 * (big_n * big_n - m2))
        se2, upper = max(se2, s2), max(upper, s2 + z * _sqrt_up(v) / (big_n - 1))
    return se2, upper


def headline_bound(h, arrays: dict[str, np.ndarray], checkpoints: np.ndarray,
                   independent: bool) -> tuple[Fraction | None, Fraction | None]:
    """Headline ``h``'s largest squared s.e. and its 90% upper bound ``U``
    over one grid point's ``arrays`` (replicate, checkpoint, ...), exactly.

    * pooled per game (``h.squares``): the larger of the chi-square bound and
      :func:`pooled_upper`'s (the fourth moment's, from the checkpoint batches);
    * a ratio over ``independent`` batches (checkpoints count games): the
      batch s.e. (:func:`batch_stderr_squared`) with ``upper_factor`` at the
      batches' :func:`~boardsweep.core.batches.effective_df` where that
      exceeds replicates - 1 (about 4 per replicate at 16 log-spaced
      checkpoints), else the replicates';
    * a ratio over turns of one game (batches of one chain): the same, on
      the long stretches only (:func:`boardsweep.core.batches.long_batches`:
      the increments in the upper half of the log checkpoint range, the
      short early ones merged into the first), where each is at least
      :data:`MIN_STRETCH` steps; else the replicates'.
    """
    n = arrays[h.numerator].shape[0]
    se2, df = headline_se2_df(h, arrays, int(checkpoints[-1]))
    if se2 is None:
        return None, None
    chi = se2 * upper_factor(df)
    if h.squares is None and not independent:
        keep = long_batches(checkpoints)
        if np.diff(np.r_[0, np.asarray(checkpoints)[keep]]).min() < MIN_STRETCH:
            return se2, chi  # stretches too short to be independent: the replicates'
        arrays = {name: v[:, keep] for name, v in arrays.items()}
        checkpoints = np.asarray(checkpoints)[keep]
    m = _batch_sizes(arrays, h, checkpoints, n)
    if h.squares is not None:
        found = pooled_upper(_batches(arrays, h.numerator), _batches(arrays, h.squares), m)
        return se2, chi if found is None else max(chi, found[1])
    batch_df = effective_df(np.array(m))
    batch_se2 = batch_stderr_squared(_batches(arrays, h.numerator), m)
    if batch_se2 is None or batch_df <= df:
        return se2, chi
    return batch_se2, batch_se2 * upper_factor(batch_df)


def _blocks(n: int, block: int) -> int:
    return -(-n // block) * block


def decide(se2_of, done: np.ndarray, first: int, target: float, cap: int, block: int) -> Decision:
    """Replay the rounds of one grid point (module docstring): ``se2_of(n)``
    gives, over replicates ``[0, n)``, the squared standard error and its
    upper bound ``U`` (a pair; ``(None, None)`` while unknown; a lone Fraction
    is read as known exactly, ``U = se^2``), ``done`` the point's done flags
    (length ``cap``).  Met when ``U <= target^2``."""
    t2 = Fraction(target) ** 2
    n = min(cap, _blocks(first, block))
    while True:
        if not done[:n].all():
            return Decision(n, "running")
        found = se2_of(n)
        se2, upper = found if isinstance(found, tuple) else (found, found)
        if upper is not None and upper <= t2:
            return Decision(n, "met", se2)
        if n >= cap:
            return Decision(n, "capped", se2)
        needed = 2 * n if upper is None else math.ceil(n * upper / t2)  # unknown: as many again
        n = min(cap, _blocks(min(2 * n, max(n + 1, needed)), block))


def point_bound(terms: list, arrays: dict[str, np.ndarray], checkpoints: np.ndarray,
                independent: bool) -> tuple[Fraction | None, Fraction | None]:
    """One grid point's largest squared s.e. over the headlines ``terms`` and
    the largest upper bound (:func:`headline_bound`): what :func:`decide`
    reads over its first ``n`` replicates; ``(None, None)`` while unknown."""
    found = [headline_bound(h, arrays, checkpoints, independent) for h in terms]
    if any(se2 is None or upper is None for se2, upper in found):
        return None, None
    return max(se2 for se2, _ in found), max(upper for _, upper in found)


def plan(spec, read: Callable[[str], np.ndarray], done: np.ndarray,
         layout: TaskLayout | None = None) -> tuple[dict[tuple, Decision], list[Task]]:
    """Every grid point's :class:`Decision` from the stored arrays (``read``:
    variable name -> its whole array, grid axes first) and the intact
    ``done`` mask, and the tasks (of ``layout``, the run's; the spec's own
    where None) the running points still need."""
    layout = layout or given(spec)
    terms = targets(spec.game)
    names = sorted({v for h in terms for v in (h.numerator, h.denominator, h.squares)
                    if v is not None and v != "checkpoint"})
    values = {name: counted(read(name)) for name in names}
    independent = spec.game.checkpoint_of == "games"
    decisions = {}
    wanted = np.zeros(spec.shape, dtype=np.int64)
    for index in np.ndindex(*spec.shape):
        def se2_of(n: int, index=index) -> tuple[Fraction | None, Fraction | None]:
            return point_bound(terms, {name: v[index][:n] for name, v in values.items()},
                               spec.checkpoints, independent)

        decision = decide(se2_of, done[index], spec.replicates, spec.precision_stderr,
                          spec.max_replicates, layout.block)
        decisions[index] = decision
        wanted[index] = decision.n
    return decisions, plan_tasks(spec, done, wanted, layout=layout)


def counted(values: np.ndarray) -> np.ndarray:
    """Integer ``values`` (the store's integer view) with each cell without a
    value (a seat that does not play: the view's mark, its dtype's least
    value, ``store.integers.FILL``) as 0: it counts nothing, and adds nothing
    to a standard error."""
    values = np.asarray(values)
    if values.dtype.kind != "i":
        return values
    return np.where(values == np.iinfo(values.dtype).min, 0, values).astype(values.dtype, copy=False)


def decision_arrays(decisions: dict[tuple, Decision], shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    """Every point's decision as the store's per-point arrays (the client
    writes them whole, lock held; they are derived from the data and
    rewritten by every run)."""
    used = np.zeros(shape, dtype=np.int64)
    reached = np.full(shape, np.nan)
    state = np.zeros(shape, dtype=np.int8)
    for index, d in decisions.items():
        used[index], reached[index], state[index] = d.n, d.stderr, STATES.index(d.state)
    return {"replicates_used": used, "stderr_reached": reached, "precision_state": state}


def complete(decisions: Iterable[Decision]) -> bool:
    """A precision store is complete when every point met its target or its cap."""
    return all(d.state != "running" for d in decisions)


def stored_complete(ds: xr.Dataset, done: np.ndarray) -> bool:
    """:func:`complete` from the stored decisions and the intact ``done``
    mask (grid axes first): every point met or capped, its replicates done."""
    axes = list(ds.attrs.get("grid_axes", []))
    state = np.asarray(ds["precision_state"].transpose(*axes).values)
    used = np.asarray(ds["replicates_used"].transpose(*axes).values)
    if (state == 0).any():
        return False
    return all(bool(done[i][:used[i]].all()) for i in np.ndindex(*state.shape))

