"""MathQuiz word problems for simulated players: write one, read one back, rate its difficulty.

A problem is a short story about one running quantity (money in a wallet, a temperature, the
stock of a warehouse...) or, in ``comparison``, a chain of people each compared with the one
before. The first sentence sets the quantity, each following sentence either changes it by one
operation or is an irrelevant fact, and the last sentence asks for its final value.

Every family is a table of sentence templates. A template is plain text with ``{slot}`` fields
(names, pronouns, numbers, nouns) and ``[one|another]`` alternatives that vary the wording; the
same string is rendered by :func:`generate_question` and compiled into the regular expression
with which :func:`solve` reads the sentence, so the writer and the reader cannot drift apart.
The generator works backwards from the target (choosing each operation's numbers so that every
intermediate step is an exact integer) and picks, among a few candidate plans, the one whose
measured difficulty is closest to the requested one.

The code lives in the :mod:`skate.games.mathquiz.questions` package (its docstring lists the
modules); this module re-exports the public names.
"""

from __future__ import annotations

import numpy as np

from skate.games.mathquiz.questions.families import FAMILIES, KINDS
from skate.games.mathquiz.questions.reader import kind_of, question_difficulty, solve
from skate.games.mathquiz.questions.templates import WEIGHTS, Family
from skate.games.mathquiz.questions.writer import generate_question, wrong_answers

__all__ = [
    "FAMILIES",
    "KINDS",
    "WEIGHTS",
    "Family",
    "generate_question",
    "kind_of",
    "question_difficulty",
    "solve",
    "wrong_answers",
]


if __name__ == "__main__":  # timing check: python -m skate.games.mathquiz.generator
    import time

    gen = np.random.default_rng(0)
    jobs = [(KINDS[i % len(KINDS)], i / 999, int(gen.integers(1, 1001))) for i in range(1000)]
    t0 = time.perf_counter()
    texts = [generate_question(kd, d, t, gen) for kd, d, t in jobs]
    t1 = time.perf_counter()
    answers = [solve(x) for x in texts]
    t2 = time.perf_counter()
    levels = [question_difficulty(x) for x in texts]
    t3 = time.perf_counter()
    assert answers == [t for _, _, t in jobs]
    print(
        f"per question: generate {(t1 - t0) * 1e3 / len(jobs):.3f} ms, solve {(t2 - t1) * 1e3 / len(jobs):.3f} ms, "
        f"difficulty {(t3 - t2) * 1e3 / len(jobs):.3f} ms"
    )
