"""SKATE Fig. 8: the game's valid tasks grouped into clusters ("question niches").

Each valid task's prompt (the text the uniqueness test embeds) is embedded with the run's own
embedder (the ``embedder`` section of the run's config, built as the runner builds it), the
vectors are clustered with k-means (scikit-learn, fixed ``random_state``), ``k`` being the one
of 2..``MAX_K`` with the best mean silhouette (cosine), and each cluster is named by the terms
whose TF-IDF weight is highest in its tasks compared with the rest of the game. The result says
which share of each setter's tasks falls in each cluster.

An embedder that calls a model (``embedder=openai``) or cannot run here (MiniLM without its
weights) is replaced by the hashing embedder, and the caption says so: a report makes no model
call. scikit-learn is imported when tasks are first clustered, so importing the report (or a
game played with ``report=false``) never loads it.
"""

from __future__ import annotations

import hashlib
import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from skate.embedders import Embedder, HashingEmbedder, build_embedder
from skate.embedders.config import embedder as embedder_registry
from skate.report.data import RunData, run_settings_or_none
from skate.report.plots import figure, save_png

if TYPE_CHECKING:  # pragma: no cover
    from scipy.sparse import csr_matrix

MAX_K = 8  # the most clusters tried: more would not fit one legend or one table
# Fewer valid tasks than this are shown as one group: a dozen tasks split into up to 8 clusters
# say nothing about what the setters ask (and a short game's report skips loading scikit-learn).
MIN_TASKS = 20
RANDOM_STATE = 0
SILHOUETTE_SAMPLE = 2000  # above this many tasks the silhouette is computed on a fixed sample
WORKING_MB = 16  # sklearn's working memory for the silhouette's pairwise distances, in MB
PRECOMPUTED = 1000  # up to this many tasks the cosine distances are computed once for every k (8 MB)
# From this many tasks on, vectors with at most this share of non-zeros (the hashing embedder's:
# about 10%) are given to k-means as a sparse matrix: the same clusters, for about two thirds of
# the CPU at 300 tasks (below ~150 tasks the dense matrix is faster).
SPARSE_FROM = 150
SPARSE_DENSITY = 0.25
TERMS = 4  # terms naming a cluster
# Words of two or more letters (digits allowed after the first): names, keywords, English words.
TOKEN_PATTERN = r"(?u)\b[A-Za-z_][A-Za-z0-9_]+\b"
FIXED_COLUMNS = ("cluster", "terms", "tasks", "example")


@dataclass
class Clusters:
    """The clustering of one run's valid tasks.

    ``tasks``: one row per valid task (``task_id, round, setter, cluster, x, y``; ``x, y`` its
    place in the 2-D projection). ``table``: one row per cluster (numbered from 1, largest first):
    ``cluster, terms, tasks, example`` (the first line of the task nearest the cluster's centre),
    then one column per setter: the share of that setter's tasks in the cluster (each setter's
    column sums to 1). ``note`` says why the clustering is degenerate ("" when it is not)."""

    tasks: pd.DataFrame
    table: pd.DataFrame
    setters: list[str]
    k: int
    silhouette: float | None
    embedder: str  # which embedder made the vectors, in words
    note: str = ""
    tried: list[int] = field(default_factory=list)  # the k compared by silhouette


def embedder_of(d: RunData) -> tuple[Embedder, str]:
    """The run's embedder, built from the run's config as the runner builds it, and a phrase
    naming it; the hashing embedder when the run's cannot run here or calls a model."""
    settings = run_settings_or_none(d.start)
    if settings is None:
        return HashingEmbedder(), "the hashing embedder (the run's config names no embedder)"
    section = settings.embedder
    name = embedder_registry.of(section).component.__name__
    try:
        embedder = build_embedder(section)
    except Exception as exc:  # noqa: BLE001 - whatever stops it here, the report falls back and says why
        return HashingEmbedder(), f"the hashing embedder (the run's {name} cannot run here: {exc})"
    if getattr(embedder, "uses_client", False):
        return HashingEmbedder(), f"the hashing embedder (the run's {name} calls a model; a report makes none)"
    return embedder, f"the run's embedder ({name})"


def choose_k(
    vectors: np.ndarray, max_k: int = MAX_K, random_state: int = RANDOM_STATE
) -> tuple[np.ndarray, float | None, list[int]]:
    """k-means labels for the ``k`` in 2..``max_k`` with the highest mean silhouette (cosine;
    the smaller ``k`` on a tie), that silhouette, and the ``k`` tried. All zeros (one cluster)
    and no silhouette when fewer than three tasks, or fewer than two distinct vectors."""
    from sklearn import config_context
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score
    from sklearn.metrics.pairwise import cosine_distances
    from threadpoolctl import threadpool_limits

    n = len(vectors)
    distinct = _distinct_rows(vectors)
    tried = list(range(2, min(max_k, distinct, n - 1) + 1))
    best: tuple[float, np.ndarray] | None = None
    points: np.ndarray | csr_matrix = (
        vectors  # what k-means reads: mostly-zero vectors (the hashing embedder's) as a sparse matrix
    )
    if n >= SPARSE_FROM and np.count_nonzero(vectors) <= SPARSE_DENSITY * vectors.size:
        from scipy.sparse import csr_matrix

        points = csr_matrix(vectors)
    # The silhouette's cosine distances computed once for all k (up to PRECOMPUTED tasks).
    distances = None
    # One thread: a game's few hundred tasks cluster faster so than with OpenMP's threads
    # waiting on one another (several times faster on a busy machine), and the result is the same.
    # ... and the silhouette's distances in chunks of a few MB (sklearn's default working memory,
    # 1 GB, held a 2,000 x 2,000 matrix and its copies at once: 90 MB for a 50-round, 50-player game).
    with threadpool_limits(limits=1), config_context(working_memory=WORKING_MB):
        if n <= PRECOMPUTED and tried:
            distances = cosine_distances(vectors)
        for k in tried:
            labels = KMeans(n_clusters=k, n_init=10, random_state=random_state).fit_predict(points)
            if len(set(labels.tolist())) < 2:
                continue
            if distances is not None:
                score = float(silhouette_score(distances, labels, metric="precomputed"))
            else:
                score = float(
                    silhouette_score(
                        vectors,
                        labels,
                        metric="cosine",
                        random_state=random_state,
                        sample_size=SILHOUETTE_SAMPLE if n > SILHOUETTE_SAMPLE else None,
                    )
                )
            if best is None or score > best[0]:
                best = (score, labels)
    if best is None:
        return np.zeros(n, dtype=int), None, tried
    return _by_size(best[1]), best[0], tried


def _distinct_rows(vectors: np.ndarray, block: int = 256) -> int:
    """How many different rows (to 9 decimals), a block at a time (np.unique sorted a rounded
    copy of the whole matrix)."""
    seen = set()
    for start in range(0, len(vectors), block):
        for row in np.round(vectors[start : start + block], 9):
            seen.add(hashlib.blake2b((row + 0.0).tobytes(), digest_size=16).digest())  # + 0.0: -0.0 is 0.0
    return len(seen)


def _by_size(labels: np.ndarray) -> np.ndarray:
    """Relabel 0.. by cluster size, largest first (ties: the cluster seen first)."""
    first = {c: i for i, c in reversed(list(enumerate(labels.tolist())))}
    sizes = pd.Series(labels).value_counts()
    order = sorted(sizes.index, key=lambda c: (-sizes[c], first[c]))
    new = {c: i for i, c in enumerate(order)}
    return np.array([new[c] for c in labels.tolist()], dtype=int)


def cluster_terms(texts: list[str], labels: np.ndarray, top: int = TERMS) -> list[list[str]]:
    """Each cluster's most characteristic terms: the highest mean TF-IDF weight over its tasks
    minus the mean over the other tasks (over all tasks when there is one cluster); only terms
    with a positive difference, at most ``top``."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    k = int(labels.max()) + 1 if len(labels) else 0
    try:
        weights = TfidfVectorizer(token_pattern=TOKEN_PATTERN, stop_words="english", sublinear_tf=True).fit(texts)
        x = weights.transform(texts)
    except ValueError:  # no term at all (e.g. prompts of numbers only)
        return [[] for _ in range(k)]
    vocabulary = weights.get_feature_names_out()
    out = []
    for c in range(k):
        inside = np.asarray(x[labels == c].mean(axis=0)).ravel()
        rest = labels != c
        score = inside - (np.asarray(x[rest].mean(axis=0)).ravel() if rest.any() else 0.0)
        order = np.argsort(-score, kind="stable")[:top]
        out.append([str(vocabulary[i]) for i in order if score[i] > 0])
    return out


def _projection(vectors: np.ndarray) -> np.ndarray:
    """The first two principal components (signs fixed: each axis' largest loading positive)."""
    if len(vectors) < 2:
        return np.zeros((len(vectors), 2))
    centred = vectors - vectors.mean(axis=0)
    if len(vectors) <= vectors.shape[1]:
        axes = np.linalg.svd(centred, full_matrices=False)[2][:2]
    else:  # more tasks than dimensions: the covariance's eigenvectors (the SVD's workspace of a
        # 2,500-task game was 120 MB)
        values, vectors_ = np.linalg.eigh(centred.T @ centred)
        axes = vectors_[:, np.argsort(-values, kind="stable")[:2]].T
    sign = np.sign(axes[np.arange(len(axes)), np.abs(axes).argmax(axis=1)])
    axes = axes * np.where(sign == 0, 1.0, sign)[:, None]
    xy = centred @ axes.T
    return np.pad(xy, ((0, 0), (0, 2 - xy.shape[1])))


def _first_line(text: str, width: int = 90) -> str:
    line = next((s.strip() for s in str(text).splitlines() if s.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def task_clusters(d: RunData, max_k: int = MAX_K, embedder: tuple[Embedder, str] | None = None) -> Clusters:
    """Cluster the run's valid tasks (see the module's docstring); ``embedder`` (an embedder and
    a phrase naming it) replaces the run's own."""
    tasks = d.tasks.drop_duplicates("task_id")
    setters = [p for p in d.players if (tasks["setter"] == p).any()]
    setters += [s for s in dict.fromkeys(tasks["setter"]) if s not in setters]
    emb, named = embedder or embedder_of(d)
    columns = ["task_id", "round", "setter", "cluster", "x", "y"]
    if tasks.empty:
        return Clusters(
            pd.DataFrame(columns=columns),
            pd.DataFrame(columns=[*FIXED_COLUMNS, *setters]),
            setters,
            0,
            None,
            named,
            note="The game has no valid task: nothing to cluster.",
        )
    texts = [str(t) for t in tasks["prompt"]]
    vectors = np.asarray(emb.embed(texts), dtype=float)
    few = len(texts) < MIN_TASKS
    labels, silhouette, tried = (np.zeros(len(texts), dtype=int), None, []) if few else choose_k(vectors, max_k)
    k = int(labels.max()) + 1
    note = ""
    if few:
        note = (
            f"Only {len(texts)} valid task{'s' if len(texts) > 1 else ''}: too few to cluster ({MIN_TASKS} are "
            "needed), shown as one group."
        )
    elif silhouette is None:
        note = "The tasks' embeddings are all alike: one group."
    if not d.set_by_players:
        note += (
            " " if note else ""
        ) + "No player set these tasks (a built benchmark): the shares are of its questions."
    elif len(setters) == 1:
        note += (" " if note else "") + f"One setter ({setters[0]}): each share is of its tasks alone."
    xy = _projection(vectors)
    placed = (
        tasks[["task_id", "round", "setter"]].reset_index(drop=True).assign(cluster=labels + 1, x=xy[:, 0], y=xy[:, 1])
    )
    terms = [[]] if few else cluster_terms(texts, labels)
    counts = pd.crosstab(placed["cluster"], placed["setter"]).reindex(
        index=range(1, k + 1), columns=setters, fill_value=0
    )
    shares = counts / counts.sum(axis=0)
    rows = []
    for c in range(k):
        inside = np.flatnonzero(labels == c)
        centre = vectors[inside].mean(axis=0)
        nearest = inside[int(np.argmax(vectors[inside] @ centre))]
        rows.append(
            {
                "cluster": c + 1,
                "terms": ", ".join(terms[c]) or "–",
                "tasks": len(inside),
                "example": _first_line(texts[nearest]),
                **shares.loc[c + 1].to_dict(),
            }
        )
    table = pd.DataFrame(rows, columns=[*FIXED_COLUMNS, *setters])
    return Clusters(placed, table, setters, k, silhouette, named, note, tried)


def caption(c: Clusters) -> str:
    n = len(c.tasks)
    if not n:
        return c.note
    how = (
        f"k={c.k}: the best mean silhouette, {c.silhouette:.2f} on cosine distance, of k={c.tried[0]}–{c.tried[-1]}"
        if c.silhouette is not None
        else "one group"
    )
    return (
        f"SKATE Fig. 8, question clusters: the game's {n} valid tasks embedded with {c.embedder} and "
        f"clustered by k-means ({how}); each cluster named by its most characteristic TF-IDF terms. Left: "
        "the tasks on the embeddings' first two principal components, coloured by cluster, one marker per "
        "setter; right: the share of each setter's tasks in each cluster." + (f" {c.note}" if c.note else "")
    )


MARKERS = "os^Dv<>pP*hX"


def cluster_figure(c: Clusters, out: Path, name: str = "question_clusters.png") -> str | None:
    """Draw Fig. 8 into ``out/name``; None when there is no task."""
    if c.tasks.empty:
        return None
    colour = matplotlib.colormaps["tab10"]
    fig, axes = figure(
        1, 2, figsize=(13, max(4.4, 0.42 * len(c.setters) + 2.4)), width_ratios=[1.15, 1], layout="constrained"
    )
    label = {int(r["cluster"]): f"{int(r['cluster'])}: {r['terms']}" for _, r in c.table.iterrows()}
    for i, setter in enumerate(c.setters):  # one marker per setter, each point in its cluster's colour
        pts = c.tasks[c.tasks["setter"] == setter]
        if len(pts):
            axes[0].scatter(
                pts["x"],
                pts["y"],
                s=26,
                alpha=0.8,
                c=[colour((k - 1) % 10) for k in pts["cluster"]],
                marker=MARKERS[i % len(MARKERS)],
                edgecolors="none",
            )
    axes[0].set(
        xlabel="first principal component",
        ylabel="second principal component",
        title=f"{len(c.tasks)} valid tasks, {c.k} cluster{'s' if c.k != 1 else ''}",
    )
    markers = [
        Line2D([], [], ls="none", marker=MARKERS[i % len(MARKERS)], color="grey", label=setter)
        for i, setter in enumerate(c.setters)
    ]  # the setters' markers, in grey
    axes[0].legend(handles=markers, fontsize=7, title="setter", title_fontsize=7, loc="best")
    y = np.arange(len(c.setters))[::-1]
    left = np.zeros(len(c.setters))
    for _, row in c.table.iterrows():
        cluster = int(row["cluster"])
        share = np.array([float(row[s]) for s in c.setters])
        axes[1].barh(y, share, left=left, color=colour((cluster - 1) % 10), label=label[cluster])
        left += share
    per = c.tasks["setter"].value_counts()
    axes[1].set_yticks(y, [f"{s} ({int(per.get(s, 0))})" for s in c.setters], fontsize=8)
    axes[1].set(xlim=(0, 1), xlabel="share of the setter's tasks", title="each setter's tasks by cluster")
    axes[1].legend(
        fontsize=7,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.14),
        ncol=min(c.k, 2),
        title="cluster: terms",
        title_fontsize=7,
    )
    save_png(fig, out / name)
    return name


def cluster_section(c: Clusters, image: str | None, table_html: str) -> str:
    """The page's section: the heading, the figure (``image``: an ``<img>`` tag, or None) with its
    caption, and the cluster table (``table_html``)."""
    parts = ["<h2>Question clusters (SKATE Fig. 8)</h2>"]
    if image is None:
        return parts[0] + f"<p>{html.escape(caption(c))}</p>"
    parts.append(f"<figure>{image}<figcaption>{html.escape(caption(c))}</figcaption></figure>")
    parts.append(
        "<p>Each cluster's terms, its tasks, the first line of the task nearest its centre, and the share "
        "of each setter's tasks that falls in it (each setter's column sums to 1).</p>" + table_html
    )
    return "".join(parts)


def shares_table(c: Clusters) -> pd.DataFrame:
    """The cluster table with each share as text (a percentage), for the page."""
    shown = c.table.copy()
    for s in c.setters:
        shown[s] = [f"{100 * float(v):.0f}%" for v in shown[s]]
    return shown


def export(c: Clusters, out: Path) -> list[str]:
    """Write ``question_clusters.csv`` (the table) and ``task_clusters.csv`` (each task's
    cluster); return their names. Nothing when there is no task."""
    if c.tasks.empty:
        return []
    c.table.to_csv(out / "question_clusters.csv", index=False)
    c.tasks[["task_id", "round", "setter", "cluster"]].to_csv(out / "task_clusters.csv", index=False)
    return ["question_clusters.csv", "task_clusters.csv"]
