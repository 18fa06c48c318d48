"""SCP: sequencing, cloze and prediction questions from documents, with known answers.

The ground truth is always the original text, so every question is checked by a machine: the
correct option restores the passage (sequencing, cloze) or is the paragraph that really follows
it (prediction), and no other option does (:func:`skate.games.scp.questions.check`).

Two ways to play (``game.mode``):

``built`` (ArxivRoll's setting)
    The framework builds the benchmark from the corpus (or reads one written by
    ``skate scp build``), splits it over the rounds, and every player answers every
    question; no one sets tasks (:meth:`SCPGame.provided_tasks`). Ratings come from the pairwise
    outcome rules; ``setter_vs_solver`` has no setters to rate and is refused.
``player_set``
    Each round every setter is offered a window of consecutive paragraphs from a few documents
    and names a document, the paragraph its fragment starts at and a question type; for
    Prediction it also writes the three wrong continuations. The game cuts the question from the
    original text, so the answer is still the original; a fragment that breaks the fragment
    rules (too short, heavy markup, starts mid-sentence or with a caption, outside the offered
    window) and distractors that are missing, repeated, too short or too long, or nearly the
    true continuation are rejected with the reason.

Every answer sample shows the question and its four options in a fresh random order; a reply
names one option, so p(correct) is the fraction of samples that pick the original's option.

Benchmarks expire (ArxivRoll's are one-time pads: released, used, retired). Every task carries its
document's date and where that date came from (``doc_date``, ``doc_date_source``: see
:mod:`skate.games.scp.corpus`) and, built, the benchmark's build date (``built``); a benchmark
read from a file keeps the dates ``skate scp build`` wrote into it. When questions come
from documents older than ``game.max_doc_age_days`` (183, ArxivRoll's six months; null: no check)
on the day the game is played, the game logs one warning saying how many, and each such task
carries ``expired: true`` in its ``task`` event.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import os
import random
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from skate.answers.choice import grade_choice, normalize_text
from skate.errors import Problem
from skate.games.base import AnswerFormat, Checks, Game, GameSpec
from skate.games.scp.config import SCPConfig
from skate.games.scp.corpus import SHIPPED_DIR, Document, docs_folder, load_folder
from skate.games.scp.fragments import Fragment, acceptable, fragment_sizes, markup_density, paragraphs, starts_badly
from skate.games.scp.questions import (
    N_OPTIONS,
    TYPES,
    ClozeQuestion,
    PredictionQuestion,
    Question,
    SequencingQuestion,
    build,
    can_start,
    check,
    cloze,
    from_json,
    passage_ok,
    prediction_stem,
    sequencing,
    stem,
)
from skate.games.scp.reader import SCPQuery, cosine
from skate.runlog.records import BENCHMARK, FailReason, Rejection, Task

MODES = ("built", "player_set")
# The shipped corpus's domains (see skate/games/scp/data/peps/index.tsv): simulated players may
# carry a topic_skill offset for each, as for each question type.
SHIPPED_DOMAINS = ("governance", "language", "packaging", "process", "typing")
# The groups every task carries (its data["groups"]), which the report breaks accuracy down by.
GROUPS = ("type", "domain")
# What a built benchmark records of its question's dates: in each JSONL record and task's data.
DATE_FIELDS = ("doc_date", "doc_date_source", "built")

log = logging.getLogger(__name__)
_WARNED: set[str] = set()  # expiry warnings already logged by this process (a sweep's games share one)


def build_date() -> str:
    """The day a benchmark is built, YYYY-MM-DD (UTC): today, or the day of ``SOURCE_DATE_EPOCH``
    when that is set (reproducible builds: the same arguments then give the same file any day)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        return dt.datetime.fromtimestamp(int(epoch), tz=dt.UTC).date().isoformat()
    return today()


def today() -> str:
    """The day a game is played, YYYY-MM-DD (UTC)."""
    return dt.datetime.now(dt.UTC).date().isoformat()


def doc_dates(doc: Document | None) -> dict[str, str]:
    """``doc_date`` and ``doc_date_source`` of a question's document ({} when it has no date)."""
    if doc is None or not doc.date:
        return {}
    return {"doc_date": doc.date, "doc_date_source": doc.date_source}


def expiry_warning(dates: Sequence[str | None], max_age_days: int, on: str, shipped: bool = False) -> str | None:
    """The warning for questions whose documents (``dates``, one per question, None where
    unknown) are more than ``max_age_days`` old on day ``on``; None when none is."""
    played = dt.date.fromisoformat(on)
    old = sorted(d for d in dates if d and (played - dt.date.fromisoformat(d)).days > max_age_days)
    if not old:
        return None
    known = sorted(d for d in dates if d)
    where = (
        "game.docs=shipped is skate's demo corpus of Python Enhancement Proposals, public for years: "
        if shipped
        else ""
    )
    undated = len(dates) - len(known)
    return (
        f"game=scp: {where}{len(old)} of {len(dates)} questions come from documents more than "
        f"{max_age_days} days old on {on} (game.max_doc_age_days; documents dated {known[0]} to "
        f"{known[-1]}{f', {undated} undated' if undated else ''}). Models may have read them in training, so "
        "they test recall as much as reading; ArxivRoll retires a private benchmark after six months. Build "
        "from fresh documents (skate scp arxiv ...), or set game.max_doc_age_days=null to silence "
        "this."
    )


@dataclass(frozen=True)
class SCPProposal:
    """A player-set question: which fragment, which type, and for Prediction the distractors."""

    doc: str
    paragraph: int | None  # where the fragment starts (the document's paragraph number)
    type: str
    distractors: tuple[str, ...] = ()
    note: str = ""  # why the proposal is empty, when the setter's reply could not be read


def query_of(q: Question, order: Sequence[int] | None = None) -> SCPQuery:
    """The answer sample a question shows (options in ``order``, as built by default)."""
    order = list(order) if order is not None else list(range(len(q.options)))
    if isinstance(q, SequencingQuestion):
        parts: tuple[str, ...] = tuple(q.chunks)
    elif isinstance(q, ClozeQuestion):
        parts = tuple(q.candidates)
    else:
        assert isinstance(q, PredictionQuestion), q  # the third and last type
        parts = (q.context,)
    return SCPQuery(
        stem(q), tuple(q.options[i] for i in order), type=q.type, parts=parts, masked=getattr(q, "masked", "")
    )


def task_data(q: Question) -> dict[str, Any]:
    """What a task keeps about its question (written into its ``task_set`` event): the
    benchmark record without the rendered text and answer index, plus the groups the report
    breaks accuracy down by."""
    record = q.to_json()
    record.pop("question")
    record.pop("answer")
    record["question_id"] = record.pop("id")
    record["groups"] = {key: getattr(q, key) for key in GROUPS}
    return record


def question_of(task: Task) -> Question:
    """The question a task was made from (inverse of :func:`task_data`)."""
    record = {k: v for k, v in task.data.items() if k not in ("groups", "question_id")}
    options = list(record["options"])
    record.update(id=task.data["question_id"], question="", answer=options.index(task.answer))
    return from_json(record)


def _listed(shown: Mapping[str, Any], qtype: str) -> str:
    """The starts the setter was shown for ``qtype`` in a document, for a rejection ("" when the
    assignment has none: an older run's)."""
    starts = (shown.get("starts") or {}).get(qtype)
    if starts is None:
        return ""
    where = ", ".join(map(str, starts)) if starts else "nowhere in this document"
    return f" (listed for {qtype} in {shown['doc']}: {where})"


def offered_id(name: str, offered: Collection[str]) -> str:
    """The offered document ``name`` means: itself, or the one it names up to case, punctuation
    and the file extension ("PEP-0729", "Pep-0514.rst" and ">(pep-0514.rst)," for pep-0729.rst and
    pep-0514.rst: what the cohort's small models wrote), or begins with it as the heading it was
    shown does; else ``name`` unchanged."""
    if name in offered:
        return name

    def key(text: str) -> str:
        return re.sub(r"[^a-z0-9]+", "", text.lower())

    want = key(name)
    found = [d for d in offered if want and want in (key(d), key(Path(d).stem))]
    if not found:  # the whole heading it was shown: "pep-0673.rst (domain: typing): Self Type" (the 0.5B)
        found = [d for d in offered if key(d) and want.startswith(key(d))]
    return found[0] if len(found) == 1 else name


class SCPGame(Game[SCPConfig]):
    spec = GameSpec(
        name="scp",
        answer_format=AnswerFormat.multiple_choice,
        kinds=TYPES + SHIPPED_DOMAINS,
        description="sequencing, cloze and prediction questions from documents; four options",
        groups=GROUPS,
    )
    config_schema = SCPConfig
    rejection_hints = {
        "too_few_distractors": "too few wrong options far enough from the truth: game.max_distractor_similarity "
        "higher, or game.min_distractor_chars lower",
    }
    runs_programs = False  # multiple-choice questions over documents

    def __init__(self, *args: Any, **values: Any) -> None:
        super().__init__(*args, **values)
        cfg = self.config
        self.reasoning = bool(cfg.reasoning)  # language-model answerers reason before the number
        if cfg.mode not in MODES:
            raise ValueError(f"game.mode={cfg.mode!r} is invalid: use one of {', '.join(MODES)}")
        self.mode = cfg.mode
        self.types = tuple(cfg.types)
        self.sizes = fragment_sizes(cfg.fragments)
        self.threshold = cfg.markup_threshold
        self.per_doc, self.build_seed = cfg.per_doc, cfg.build_seed
        self.offer_docs, self.window = cfg.offer_docs, cfg.window
        self.max_similarity = cfg.max_distractor_similarity
        self.min_distractor_chars, self.max_distractor_chars = cfg.min_distractor_chars, cfg.max_distractor_chars
        self.docs_dir = docs_folder(cfg.docs)
        self.docs: list[Document] = load_folder(self.docs_dir)
        self.by_id = {d.id: d for d in self.docs}
        self._paras: dict[str, list[str]] = {}
        self._starts: dict[str, dict[str, set[int]]] = {}  # document -> type -> paragraphs a fragment can start at
        self.embedder = cfg.distractor_embedder  # None: TF-IDF
        self.benchmark: list[Question] = []
        self.dated: list[dict[str, str]] = []  # per benchmark question: DATE_FIELDS it has
        self.schedule: list[list[int]] = []
        self.max_doc_age_days = cfg.max_doc_age_days
        self.played_on = today()
        if self.mode == "built":
            self._build(cfg.benchmark, cfg.questions)
        self.expired = self._check_age()  # benchmark question indices (built) or document ids (player_set)

    # ------------------------------------------------------------------ config
    @classmethod
    def skill_keys(cls, cfg: SCPConfig) -> tuple[str, ...]:
        keys = list(cls.spec.kinds)
        if str(cfg.docs) != "shipped" and docs_folder(cfg.docs).is_dir():
            try:
                keys += sorted({d.domain for d in load_folder(docs_folder(cfg.docs))})
            except ValueError:
                pass  # the game itself reports what is wrong with the folder
        return tuple(dict.fromkeys(keys))

    @classmethod
    def players_set(cls, cfg: SCPConfig) -> bool:
        return str(cfg.mode) == "player_set"

    @classmethod
    def check_config(cls, cfg: SCPConfig) -> list[Problem]:
        problems = super().check_config(cfg)
        age = cfg.max_doc_age_days
        if age is not None and age < 1:
            problems.append(Problem("max_doc_age_days", age, "must be >= 1 (days), or null for no check"))
        if cfg.mode not in MODES:
            problems.append(Problem("mode", cfg.mode, f"use one of {', '.join(MODES)}"))
        types = list(cfg.types)
        unknown = [t for t in types if t not in TYPES]
        if not types or unknown:
            problems.append(Problem("types", types, f"give a non-empty subset of {list(TYPES)}"))
        if not docs_folder(cfg.docs).is_dir():
            problems.append(Problem("docs", cfg.docs, "no such folder: give a folder of documents, or 'shipped'"))
        if cfg.benchmark is not None and not Path(str(cfg.benchmark)).expanduser().is_file():
            problems.append(
                Problem("benchmark", cfg.benchmark, "no such file: give a JSONL written by skate scp build, or null")
            )
        for key, low in (("per_doc", 1), ("offer_docs", 1), ("min_distractor_chars", 1)):
            if getattr(cfg, key) < low:
                problems.append(Problem(key, getattr(cfg, key), f"must be >= {low}"))
        if cfg.questions is not None and cfg.questions < 1:
            problems.append(Problem("questions", cfg.questions, "must be >= 1, or null for every question"))
        if cfg.max_distractor_chars < cfg.min_distractor_chars:
            problems.append(
                Problem("max_distractor_chars", cfg.max_distractor_chars, "must be >= game.min_distractor_chars")
            )
        if not 0.0 < cfg.max_distractor_similarity <= 1.0:
            problems.append(Problem("max_distractor_similarity", cfg.max_distractor_similarity, "must lie in (0, 1]"))
        if not 0.0 < cfg.markup_threshold <= 1.0:
            problems.append(Problem("markup_threshold", cfg.markup_threshold, "must lie in (0, 1]"))
        sizes = fragment_sizes(cfg.fragments)
        for qtype, (n, min_chars) in sizes.items():
            if n < 1 or min_chars < 0:
                problems.append(
                    Problem(
                        f"fragments.{qtype}",
                        {"paragraphs": n, "min_chars": min_chars},
                        "need paragraphs >= 1 and min_chars >= 0",
                    )
                )
        need = max(n + (t == "prediction") for t, (n, _) in sizes.items() if t in types or not types)
        if cfg.window < need:
            problems.append(Problem("window", cfg.window, f"must be >= {need}: a whole fragment must fit in it"))
        return problems

    # ------------------------------------------------------------------ the built benchmark
    def _build(self, path: str | None, questions: int | None) -> None:
        if path is not None:
            records = read_records(path)
            self.benchmark = [q for q, _ in records]
            # dates the file records; one built before it recorded them: the corpus's, by document id
            self.dated = [
                {k: r[k] for k in DATE_FIELDS if r.get(k)} or doc_dates(self.by_id.get(q.doc)) for q, r in records
            ]
        else:
            embed = getattr(self.embedder, "embed", None)
            if self.embedder is not None and embed is None:
                raise ValueError("game.distractor_embedder must be an embedder config (e.g. '${embedder}') or null")
            self.benchmark = build(
                self.docs, self.per_doc, self.build_seed, self.types, self.sizes, self.threshold, embed=embed
            )
            built = build_date()
            self.dated = [{**doc_dates(self.by_id.get(q.doc)), "built": built} for q in self.benchmark]
        if not self.benchmark:
            raise ValueError(
                f"no question could be built from the documents in {self.docs_dir}: add longer "
                "prose documents, or lower game.fragments.*.min_chars"
            )
        order = list(range(len(self.benchmark)))
        rnd = random.Random(f"scp-schedule:{self.build_seed}")
        if questions is not None and questions < len(order):
            order = sorted(rnd.sample(order, questions))
        rnd.shuffle(order)  # every round mixes types and domains
        if self.rounds > len(order):
            raise ValueError(
                f"game.rounds={self.rounds} is more than the {len(order)} questions of the benchmark: lower game.rounds"
            )
        self.schedule = [list(part) for part in np.array_split(np.array(order), self.rounds)]

    def _check_age(self) -> set:
        """What is older than ``max_doc_age_days`` today: the played questions' indices (built) or
        the corpus's document ids (player_set); the warning logged once per process."""
        if self.max_doc_age_days is None:
            return set()
        if self.mode == "built":
            keys: list = sorted(int(k) for part in self.schedule for k in part)
            dates = [self.dated[k].get("doc_date") for k in keys]
        else:
            keys = [d.id for d in self.docs]
            dates = [d.date or None for d in self.docs]
        limit = int(self.max_doc_age_days)
        warning = expiry_warning(dates, limit, self.played_on, shipped=self.docs_dir == SHIPPED_DIR)
        if warning is None:
            return set()
        if self.mode == "player_set":
            warning = warning.replace("questions come from documents", "documents of the corpus are", 1)
        if warning not in _WARNED:
            _WARNED.add(warning)
            log.warning(warning)
        played = dt.date.fromisoformat(self.played_on)
        return {k for k, d in zip(keys, dates, strict=True) if d and (played - dt.date.fromisoformat(d)).days > limit}

    def provided_tasks(self, round: int) -> list[Task] | None:
        if self.mode != "built":
            return None
        tasks = []
        for k in self.schedule[round - 1]:
            q = self.benchmark[int(k)]
            data = {**task_data(q), **self.dated[int(k)], **({"expired": True} if int(k) in self.expired else {})}
            tasks.append(
                Task(
                    task_id=f"r{round:03d}-q{int(k):04d}",
                    round=round,
                    setter=BENCHMARK,
                    prompt=stem(q),
                    answer=q.options[q.answer],
                    data=data,
                )
            )
        return tasks

    # ------------------------------------------------------------------ player-set
    def paragraphs_of(self, doc_id: str) -> list[str]:
        if doc_id not in self._paras:
            self._paras[doc_id] = paragraphs(self.by_id[doc_id].text)
        return self._paras[doc_id]

    def assignment(self, setter: str, round: int, rng: np.random.Generator) -> dict[str, Any]:
        if self.mode != "player_set":
            return {}
        need = max(n + (t == "prediction") for t, (n, _) in self.sizes.items() if t in self.types)
        usable = [d.id for d in self.docs if len(self.paragraphs_of(d.id)) > need]
        if not usable:
            raise ValueError(f"no document in {self.docs_dir} has more than {need} paragraphs")
        picked = rng.choice(len(usable), size=min(self.offer_docs, len(usable)), replace=False)
        offered = []
        for i in sorted(int(x) for x in picked):
            doc = self.by_id[usable[i]]
            paras = self.paragraphs_of(doc.id)
            first = self._window(doc.id, int(rng.integers(1, max(1, len(paras) - self.window) + 1)))
            shown = paras[first : first + self.window]
            offered.append(
                {
                    "doc": doc.id,
                    "domain": doc.domain,
                    "title": doc.title,
                    "first": first,
                    "paragraphs": shown,
                    "starts": self.fragment_starts(doc.id, first, len(shown)),
                }
            )
        return {"documents": offered}

    def fragment_starts(self, doc_id: str, first: int, count: int) -> dict[str, list[int]]:
        """For each question type, the paragraphs among ``count`` shown from ``first`` that a
        fragment of that type can start at: the whole fragment (and a prediction's continuation)
        shown, and every check :meth:`validate` makes of the text passed. The setter is shown
        them (left to find them, the cohort's Qwen models picked a refused start in 11 of 12
        attempts)."""
        last = first + count - 1
        return {
            t: [k for k in sorted(at) if first <= k <= last - (self.sizes[t][0] + (t == "prediction")) + 1]
            for t, at in self._valid_starts(doc_id).items()
        }

    def _valid_starts(self, doc_id: str) -> dict[str, set[int]]:
        """Every paragraph of a document a fragment of each type can start at (cached)."""
        if doc_id in self._starts:
            return self._starts[doc_id]
        paras = self.paragraphs_of(doc_id)
        out: dict[str, set[int]] = {}
        for qtype in self.types:
            n, min_chars = self.sizes[qtype]
            span = n + (qtype == "prediction")
            out[qtype] = {
                start
                for start in range(len(paras) - span + 1)
                if can_start(paras[start : start + span], qtype, doc_id, start, min_chars, self.threshold)
            }
        self._starts[doc_id] = out
        return out

    def _window(self, doc_id: str, drawn: int) -> int:
        """The first paragraph shown of a document: ``drawn``, or, when no question can start in
        that window, the nearest window where one can (so a setter is never offered nothing)."""
        n_paras = len(self.paragraphs_of(doc_id))
        firsts = range(1, max(1, n_paras - self.window) + 1)
        for first in sorted(firsts, key=lambda f: (abs(f - drawn), f)):
            if any(self.fragment_starts(doc_id, first, min(self.window, n_paras - first)).values()):
                return first
        return drawn

    def proposal_text(self, proposal: SCPProposal) -> str:
        if not isinstance(proposal, SCPProposal):
            return str(proposal)
        head = f"{proposal.type} question from {proposal.doc}, starting at paragraph {proposal.paragraph}"
        if proposal.distractors:
            head += "\nwrong continuations:\n" + "\n".join(f"- {d}" for d in proposal.distractors)
        return head

    def validate(self, proposal: SCPProposal, checks: Checks) -> Task | Rejection:
        if not isinstance(proposal, SCPProposal) or not proposal.type:
            note = getattr(proposal, "note", "") or "the proposal names no question type"
            return Rejection(FailReason.MALFORMED, note)
        if proposal.type not in self.types:
            return Rejection(
                FailReason.MALFORMED, f"unknown question type {proposal.type!r}: use one of {', '.join(self.types)}"
            )
        offered = {d["doc"]: d for d in checks.assignment.get("documents", [])}
        proposal = dataclasses.replace(proposal, doc=offered_id(proposal.doc, offered))
        if proposal.doc not in offered:
            return Rejection(
                FailReason.BREAKS_RULES,
                f"document {proposal.doc!r} was not offered to you this round; choose one of {', '.join(offered)}",
            )
        shown = offered[proposal.doc]
        n, min_chars = self.sizes[proposal.type]
        span = n + (proposal.type == "prediction")  # a prediction's true continuation must be shown too
        first, last = shown["first"], shown["first"] + len(shown["paragraphs"]) - 1
        start = proposal.paragraph
        if start is None or not first <= start <= last - span + 1:
            what = f"{n} paragraph{'s' * (n > 1)}" + (" and the one after it" if proposal.type == "prediction" else "")
            return Rejection(
                FailReason.BREAKS_RULES,
                f"a {proposal.type} fragment is {what}, all within the paragraphs shown "
                f"({first}-{last}), so it must start between {first} and {last - span + 1}; "
                f"you gave {start}{_listed(shown, proposal.type)}",
            )
        paras = self.paragraphs_of(proposal.doc)
        run = paras[start : start + n]
        if not acceptable(run, min_chars, self.threshold):
            return Rejection(
                FailReason.BREAKS_RULES, self._why_not(run, min_chars, proposal.type, n) + _listed(shown, proposal.type)
            )
        seed = int(checks.rng.integers(2**31))
        frag = Fragment(proposal.doc, self.by_id[proposal.doc].domain, start, tuple(run))
        if proposal.type == "prediction":
            made: Question | Rejection = self._prediction(frag, paras, proposal.distractors, seed)
            if isinstance(made, Rejection):
                return made
            q = made
        else:
            built = sequencing(frag, seed) if proposal.type == "sequencing" else cloze(frag, seed)
            if built is None:
                return Rejection(
                    FailReason.BREAKS_RULES,
                    f"this fragment has too few distinct sentences for a {proposal.type} question "
                    "(three parts or three removable sentences are needed); choose a longer one",
                )
            q = built
        problems = check(q)
        if problems:  # the builders make sound questions; this is a last line of defence
            return Rejection(FailReason.BREAKS_RULES, "; ".join(problems))
        return checks.task(
            prompt=stem(q),
            answer=q.options[q.answer],
            **task_data(q),
            **doc_dates(self.by_id.get(q.doc)),
            **({"expired": True} if q.doc in self.expired else {}),
        )

    def _why_not(self, run: list[str], min_chars: int, qtype: str, n: int) -> str:
        """Why a run of paragraphs is not an acceptable fragment (the checks of
        :func:`~skate.games.scp.fragments.acceptable`, in its order)."""
        length = sum(len(p) for p in run)
        if length < min_chars:
            return f"the fragment has {length} characters; a {qtype} fragment needs at least {min_chars}"
        if starts_badly(run[0]):
            return "the fragment starts mid-sentence or with a caption; choose one that starts a sentence"
        if any(p.rstrip().endswith(":") for p in run):
            return (
                "a paragraph of the fragment ends with a colon, introducing code or a list that is not "
                "shown; choose a fragment of running prose"
            )
        if any(markup_density(p) > self.threshold for p in run):
            return "the fragment is heavy with markup, code or formulas; choose a passage of plain prose"
        return f"the fragment is not {n} paragraph{'s' * (n > 1)} of prose"

    def _prediction(
        self, frag: Fragment, paras: list[str], distractors: Sequence[str], seed: int
    ) -> PredictionQuestion | Rejection:
        truth = paras[frag.position + 1]
        context = frag.text
        if not passage_ok(truth, self.threshold):
            return Rejection(
                FailReason.BREAKS_RULES,
                "the paragraph after your fragment, its true continuation, is not a paragraph of "
                "prose (too short, heavy with markup, mid-sentence, or introducing code or a list "
                "with a colon); choose another fragment",
            )
        wrong = [str(d).strip() for d in distractors if str(d).strip()]
        if len(wrong) != N_OPTIONS - 1:
            return Rejection(
                FailReason.TOO_FEW_DISTRACTORS,
                f"a prediction question needs exactly {N_OPTIONS - 1} wrong continuations; you wrote {len(wrong)}",
            )
        seen = {normalize_text(truth): "the true continuation", normalize_text(context): "the passage itself"}
        for k, d in enumerate(wrong, 1):
            key = normalize_text(d)
            if key in seen:
                return Rejection(FailReason.TOO_FEW_DISTRACTORS, f"wrong continuation {k} repeats {seen[key]}")
            seen[key] = f"wrong continuation {k}"
            if not self.min_distractor_chars <= len(d) <= self.max_distractor_chars:
                return Rejection(
                    FailReason.BREAKS_RULES,
                    f"wrong continuation {k} has {len(d)} characters; write between "
                    f"{self.min_distractor_chars} and {self.max_distractor_chars}",
                )
            sim = cosine(d, truth)
            if sim > self.max_similarity:
                return Rejection(
                    FailReason.BREAKS_RULES,
                    f"wrong continuation {k} says nearly what the true continuation says "
                    f"(similarity {sim:.2f} > {self.max_similarity:.2f}): it could also be right",
                )
        rnd = random.Random(f"{seed}:prediction:{frag.doc_id}:{frag.position}")
        options = [truth, *wrong]
        rnd.shuffle(options)
        return PredictionQuestion(
            id=f"prediction/{frag.doc_id}/{frag.position}/{seed}",
            type="prediction",
            domain=frag.domain,
            doc=frag.doc_id,
            position=frag.position,
            seed=seed,
            question=prediction_stem(context)
            + "\n\nCandidates:\n"
            + "\n\n".join(f"{i + 1}. {o}" for i, o in enumerate(options)),
            options=options,
            answer=options.index(truth),
            original=truth,
            context=context,
        )

    # ------------------------------------------------------------------ answering
    def make_query(self, task: Task, rng: np.random.Generator) -> SCPQuery:
        base = _cached(task)[1]  # query_of(question), its stem rendered once per task
        order = rng.permutation(len(base.options))
        return SCPQuery(
            base.prompt, tuple(base.options[i] for i in order), type=base.type, parts=base.parts, masked=base.masked
        )

    def grade(self, task: Task, query: SCPQuery, reply: Any) -> bool:
        return grade_choice(query, task.answer, reply)


def question_of_cached(task: Task) -> Question:
    """:func:`question_of`, once per task (a task is sampled many times)."""
    return _cached(task)[0]


_BASE: dict[str, tuple[Question, SCPQuery]] = {}


def _cached(task: Task) -> tuple[Question, SCPQuery]:
    key = f"{task.task_id}\x00{task.prompt}\x00{task.answer}"
    got = _BASE.get(key)
    if got is None:
        if len(_BASE) > 100_000:
            _BASE.clear()
        q = question_of(task)
        got = _BASE[key] = (q, query_of(q))
    return got


def read_benchmark(path: str | Path) -> list[Question]:
    """The questions of a JSONL benchmark (``skate scp build``); a ValueError names the
    first bad line."""
    return [q for q, _ in read_records(path)]


def read_records(path: str | Path) -> list[tuple[Question, dict[str, Any]]]:
    """Each question of a JSONL benchmark with its record (which also holds what the question
    does not, e.g. its :data:`DATE_FIELDS`); a ValueError names the first bad line."""
    out = []
    with open(Path(path).expanduser(), encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                out.append((from_json(record), record))
            except ValueError as exc:
                raise ValueError(f"{path}, line {lineno}: {exc}") from None
    return out
