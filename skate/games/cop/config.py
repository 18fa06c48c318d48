"""The ``game=cop`` config schema: every key and its default, the one place they live (the
option ``game=cop`` is this schema as registered; override any key on the command line, e.g.
``game.n_options=6``).

Code-output prediction (SKATE): the setter writes a Python program; the answer is what it prints.
"""

from __future__ import annotations

from dataclasses import dataclass

from skate.games.base import GameConfig


@dataclass
class COPConfig(GameConfig):
    _target_: str = "skate.games.cop.COPGame"
    name: str = "cop"
    n_distractors: int = 9  # wrong options a setter must supply, distinct after whitespace normalising
    n_options: int = 4  # options shown per answer sample: the answer plus n_options - 1 distractors
    determinism_runs: int = 2  # a program must print the same thing this many times
    require_value: bool = True  # reject a program whose whole output is True/False (print a value)
    reasoning: bool = False  # language-model answerers write their working before the letter
    # Give each setter a topic each round (one of the generator's families, drawn per setter and
    # round), named in its situation. Small models otherwise send the same program every round,
    # whatever the history shows them (docs/real-models.md, "Optimising and guiding real models").
    topics: bool = False
    # With topics: the families the topics are drawn from (null: all of them). Easier families
    # (e.g. [arithmetic, strings, slicing, dicts, sorting, comprehensions]) for setters whose
    # tasks the others cannot answer (docs/real-models.md, "Tasks that separate").
    topic_families: list[str] | None = None
    # A task counts only once its setter, in a fresh conversation shown only the program and its
    # options, picks the true output (one answer; as MathQuiz's setters must solve their own).
    self_check: bool = False
    # A setter that gives fewer than n_distractors distinct wrong options has them topped up with
    # the game's own (its real output mutated: skate.games.cop.distractors, as practice tasks get),
    # instead of being rejected; the task records how many were the game's. For setters whose
    # programs are sound but whose lists come up short (the local cohort's Qwen 1.5B).
    fill_distractors: bool = False
