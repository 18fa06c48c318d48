"""The ``game=scp`` config schema: every key and its default, the one place they live (the
option ``game=scp`` is this schema as registered; override any key on the command line, e.g.
``game.mode=player_set game.docs=papers/``).

SCP (ArxivRoll): sequencing, cloze and prediction questions cut from documents, whose answer is
known because the original text is. Every question has 4 options and exactly one right one.

- ``mode=built``: the framework builds the benchmark; every player answers every question.
- ``mode=player_set``: each round every setter picks a fragment and a type (and, for prediction,
  writes the 3 wrong continuations) from paragraphs of documents offered to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skate.games.base import GameConfig


@dataclass
class FragmentSize:
    """A fragment of one question type: how many consecutive paragraphs, and at least how many
    characters in all."""

    paragraphs: int = 1
    min_chars: int = 100


@dataclass
class FragmentSizes:
    sequencing: FragmentSize = field(default_factory=lambda: FragmentSize(2, 250))
    cloze: FragmentSize = field(default_factory=lambda: FragmentSize(5, 400))
    prediction: FragmentSize = field(default_factory=lambda: FragmentSize(1, 100))


@dataclass
class SCPConfig(GameConfig):
    _target_: str = "skate.games.scp.SCPGame"
    name: str = "scp"
    mode: str = "built"  # built: the framework builds the questions; player_set: players choose them
    rounds: int = 10  # built: the benchmark is split over this many rounds
    docs: str = "shipped"  # a folder of documents, or "shipped" (the PEPs in the package)
    benchmark: str | None = None  # built: play this JSONL (skate scp build) instead of building
    types: list[str] = field(default_factory=lambda: ["sequencing", "cloze", "prediction"])
    per_doc: int = 4  # built: questions of each type per document, at most
    questions: int | None = None  # built: play a seeded sample of this many (null: all of them)
    build_seed: int = 0  # the benchmark's seed (provenance of every question)
    fragments: FragmentSizes = field(default_factory=FragmentSizes)  # ArxivRoll's fragment sizes
    markup_threshold: float = 0.03  # fragments with more markup/code/formula characters than this are skipped
    # built: how prediction distractors are ranked by similarity to the context: null = TF-IDF
    # over the document's paragraphs; '${embedder}' = the run's embedder (or any embedder config)
    distractor_embedder: Any = None
    offer_docs: int = 2  # player_set: documents offered to a setter each round
    window: int = 12  # player_set: consecutive paragraphs shown of each offered document
    max_distractor_similarity: float = 0.8  # player_set: a distractor this close to the truth is refused
    min_distractor_chars: int = 40  # player_set: shorter written distractors are refused
    max_distractor_chars: int = 2000  # player_set: and longer ones
    reasoning: bool = False  # language-model answerers write their working before the number
    # Benchmarks expire (ArxivRoll: six months): warn when the documents questions come from are
    # older than this many days on the day the game is played; null: no check
    max_doc_age_days: int | None = 183
