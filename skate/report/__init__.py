"""The report: PNG plots, exports and one self-contained HTML page, from the event log alone.

``build_report(run_dir)`` writes ``run_dir/report/`` (``index.html`` with every plot embedded,
the PNGs, ``p_correct.parquet`` and ``p_correct.csv``: the task × player p(correct) table) and
returns the path of the page. When the run's tasks carry ``groups`` (a game's own labels, e.g.
SCP's question type and domain), the page has a section "Accuracy by <key> and <key>" (per key:
players × values, mean p(correct) over the group's tasks with non-void estimates; with two or
more keys also their combinations), a heat map, and ``accuracy_by_group.csv`` (long format, see
:func:`skate.report.data.accuracy_by_group`); plots about setters are left out when no player
set a task (a built benchmark). The page ends with the game's valid tasks in clusters, each
setter's share of each (SKATE Fig. 8, :mod:`skate.report.clusters`; ``question_clusters.csv``,
``task_clusters.csv``). ``build_sweep_report(sweep_dir)`` reports every job and writes one
page comparing them (``report.html``, its figures in ``sweep_dir/report/``: SKATE Figs. 2 and 9,
see :mod:`skate.report.sweep`). Given a table of external benchmark scores (CSV with a ``player`` column
and one column per benchmark), the report adds Pearson and Spearman correlations with the
ratings (SKATE App. I).

Importing this package is cheap: matplotlib and pandas (~0.75 s) load with :mod:`skate.report.page`
when one of its names is first used, so a game played with ``report=false`` and the sweep callback
Hydra builds for every run never pay for them; scikit-learn loads only when tasks are clustered.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ReportError",
    "accuracy_by_group",
    "build_report",
    "build_sweep_report",
    "correlations",
    "group_tables",
    "load_run",
]


def __getattr__(name: str) -> Any:
    if name in __all__ or name in ("CSS", "GROUP_TASKS"):
        from skate.report import page

        return getattr(page, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
