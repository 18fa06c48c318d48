"""SCP practice items: questions built from the game's corpus, away from the benchmark it plays.

The questions come from :func:`~skate.games.scp.questions.build` on the game's documents, types,
fragment sizes and markup threshold (and its distractor embedder, as the built benchmark), with
a seed drawn from the caller's generator, and become tasks exactly as the built benchmark's do
(:meth:`SCPGame.provided_tasks`). In ``built`` mode a question whose paragraphs overlap those of
a question the game plays is left out: a practice item shown as a demonstration must not give
away a benchmark question's passage or answer. The types are interleaved (each type's questions
in random order), so a short list still mixes them.
"""

from __future__ import annotations

import numpy as np

from skate.games.scp.questions import Question, build, stem
from skate.games.scp.rules import SCPGame, task_data
from skate.runlog.records import Task

PRACTICE_SETTER = "practice"


def paragraphs_of(q: Question, sizes: dict[str, tuple[int, int]]) -> set[tuple[str, int]]:
    """The ``(document, paragraph)`` pairs a question is made from (a prediction's true
    continuation included)."""
    n = sizes.get(q.type, (1, 0))[0] + (q.type == "prediction")
    return {(q.doc, p) for p in range(q.position, q.position + n)}


def practice_tasks(game: SCPGame, n: int, rng: np.random.Generator) -> list[Task]:
    """SCP's practice tasks (its registered ``practice`` part): up to ``n`` questions built from
    the game's corpus with a seed drawn from ``rng``, as tasks like the built benchmark's; in
    ``built`` mode none overlaps a played question's paragraphs (deterministic in ``rng``)."""
    if n <= 0:
        return []
    seed = int(rng.integers(2**31))
    embed = getattr(game.embedder, "embed", None)
    questions = build(game.docs, max(game.per_doc, n), seed, game.types, game.sizes, game.threshold, embed=embed)
    played = {int(k) for part in game.schedule for k in part}
    taken: set[tuple[str, int]] = set()
    for k in played:
        taken |= paragraphs_of(game.benchmark[k], game.sizes)
    by_type: dict[str, list[Question]] = {}
    for q in questions:
        if not paragraphs_of(q, game.sizes) & taken:
            by_type.setdefault(q.type, []).append(q)
    queues = [[qs[int(i)] for i in rng.permutation(len(qs))] for _, qs in sorted(by_type.items())]
    picked: list[Question] = []
    while len(picked) < n and any(queues):
        for queue in queues:
            if queue and len(picked) < n:
                picked.append(queue.pop(0))
    return [
        Task(
            task_id=f"practice-scp-{k}",
            round=0,
            setter=PRACTICE_SETTER,
            prompt=stem(q),
            answer=q.options[q.answer],
            data=task_data(q),
        )
        for k, q in enumerate(picked)
    ]
