"""What a game will cost before it is played (``skate play ... --estimate``): per model, its calls,
prompt, completion and thinking tokens, and dollars; no model is called.

The estimate multiplies what the configured game asks of each model by what a call of that model
costs:

- **What the game asks.** Every player sets one task a round (``game.rounds``, or the stages'
  rounds; one match a round under ``schedule.mode=matches``), of which a share is valid, and
  every player answers every valid task with the estimator's samples per estimate. The valid
  share and the setting attempts a round come from earlier runs of the game where there are
  some, else a typical share. The samples per estimate are the estimator's: from earlier runs
  with the same estimator and settings, else drawn by the estimator itself on players whose
  p(correct) is spread over [0, 1] (:func:`expected_samples`): Algorithm 1 asks about 70 at its
  defaults, ``fixed_n`` its n, ``greedy`` 1, ``logprobs`` one read (or its ``fallback`` samples
  where a model gives no log-probabilities, as reasoning models do not).
- **What a call costs.** Prompt tokens per call, and completion and thinking tokens per reply,
  for setting and for answering apart: from this model's earlier runs of the same game
  (``token_counts.jsonl`` beside the response cache, :mod:`skate.llm.counts`), else typical counts
  for the game (:data:`TYPICAL`, measured on skate's own prompts) and typical thinking for its
  settings (:data:`TYPICAL_THINKING`). Dollars at ``llm.prices``, else at LiteLLM's map's prices
  (thinking priced as output); a model with neither gets tokens and no dollars, said.

The estimate says which it used for each model. A game that stops once its ranking is settled
(``stop.settled``) costs at most this.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skate.estimators.base import TaskContext
from skate.estimators.base import estimator as estimators
from skate.games import get_game
from skate.games.base import AnswerFormat
from skate.llm.counts import counts_path, entries
from skate.llm.spec import LITELLM_KEYS, OPENAI_COMPATIBLE, ModelSpec
from skate.llm.usage import Price, price_of
from skate.players.config import spec_of_config
from skate.runlog.records import ScheduleMode
from skate.settings.build import build_estimator, prices_of
from skate.settings.config import SkateConfig, record_of

# Typical tokens per call where a model has not played the game: (prompt per call, completion
# per reply) for setting and for answering, the fake server's cohort playing two rounds of each
# game with skate's own prompts (bench/bench_thinking.py --part typical: docs/benchmarks/llm.md;
# tokens counted as characters / 4; the completions are the fake's task and one-field answer).
TYPICAL: dict[str, dict[str, tuple[int, int]]] = {
    "cop": {"set": (942, 180), "answer": (386, 3)},
    "mathquiz": {"set": (880, 104), "answer": (286, 23)},
    "pyjail": {"set": (1066, 230), "answer": (477, 33)},
    "scp": {"set": (2810, 86), "answer": (539, 3)},
}
TYPICAL_VALID_SHARE = 0.8  # of setting attempts in a round, the share that ends in a valid task
# Typical thinking tokens per reply of a model that thinks, by reasoning_effort (None: its default).
TYPICAL_THINKING: dict[str | None, int] = {
    None: 2000,
    "none": 0,
    "minimal": 150,
    "low": 700,
    "medium": 2000,
    "high": 5000,
    "xhigh": 8000,
    "max": 12000,
}
# Samples drawn per estimator to find its expected samples per estimate.
_SIM_TASKS = 60


@dataclass
class Rates:
    """What one model's calls cost, per setting attempt and per answer sample."""

    attempts_per_round: float
    set_calls_per_attempt: float
    set_prompt: float  # per call
    set_completion: float  # per reply, thinking included
    set_thinking: float
    answer_calls_per_sample: float
    answer_prompt: float  # per call
    answer_completion: float  # per sample
    answer_thinking: float
    samples_per_estimate: float | None  # from earlier runs with the same estimator (None: drawn)
    source: str


@dataclass
class ModelCost:
    player: str
    model: str
    calls: float
    prompt_tokens: float
    completion_tokens: float  # thinking included
    thinking_tokens: float
    usd: float | None
    tokens_from: str
    price_from: str


@dataclass
class CostEstimate:
    rounds: int
    players: int
    tasks: float
    samples_per_estimate: float
    samples_from: str
    models: list[ModelCost] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def usd(self) -> float | None:
        known = [m.usd for m in self.models if m.usd is not None]
        return sum(known) if known else None


def _ratio(a: float, b: float, default: float) -> float:
    return a / b if b else default


def earlier_rates(history: Sequence[dict[str, Any]], estimator_key: tuple[str, Any]) -> Rates | None:
    """A model's rates from its earlier runs of a game (entries of :mod:`skate.llm.counts`)."""
    if not history:
        return None
    tot: dict[str, dict[str, float]] = {p: {} for p in ("set", "answer", "read")}
    rounds = sum(float(e.get("rounds") or 0) for e in history)
    for e in history:
        for purpose in tot:
            for k, v in (e.get(purpose) or {}).items():
                tot[purpose][k] = tot[purpose].get(k, 0.0) + float(v or 0)
    s, a = tot["set"], tot["answer"]
    fresh_set = s.get("samples", 0) - s.get("cached", 0)
    fresh_answer = a.get("samples", 0) - a.get("cached", 0)
    same = [e for e in history if (e.get("estimator"), e.get("estimator_settings")) == estimator_key]
    spe = None
    if same:
        per_player = sum(float(e.get("estimates") or 0) / max(1, int(e.get("players") or 1)) for e in same)
        samples = sum(
            float((e.get("answer") or {}).get("samples") or 0) + float((e.get("read") or {}).get("samples") or 0)
            for e in same
        )
        spe = samples / per_player if per_player else None
    runs = len(history)
    return Rates(
        attempts_per_round=_ratio(s.get("samples", 0), rounds, 1 / TYPICAL_VALID_SHARE),
        set_calls_per_attempt=_ratio(s.get("calls", 0), fresh_set, 1.0),
        set_prompt=_ratio(s.get("prompt_tokens", 0), s.get("calls", 0), 0.0),
        set_completion=_ratio(s.get("completion_tokens", 0), fresh_set, 0.0),
        set_thinking=_ratio(s.get("thinking_tokens", 0), fresh_set, 0.0),
        answer_calls_per_sample=_ratio(a.get("calls", 0), fresh_answer, 1.0),
        answer_prompt=_ratio(a.get("prompt_tokens", 0), a.get("calls", 0), 0.0),
        answer_completion=_ratio(a.get("completion_tokens", 0), fresh_answer, 0.0),
        answer_thinking=_ratio(a.get("thinking_tokens", 0), fresh_answer, 0.0),
        samples_per_estimate=spe,
        source=f"{runs} earlier run{'s' if runs != 1 else ''} of this model in this game",
    )


def typical_thinking(spec: ModelSpec) -> int:
    """The thinking tokens a reply of ``spec`` typically takes (0 for a model that does not think)."""
    if not spec.thinks:
        return 0
    if spec.thinking_budget is not None:
        return min(spec.thinking_budget, TYPICAL_THINKING[None])
    return TYPICAL_THINKING.get(spec.reasoning_effort, TYPICAL_THINKING[None])


def typical_rates(game: str, spec: ModelSpec, multiple_choice: bool, fixed_queries: bool) -> Rates:
    set_tok, answer_tok = TYPICAL.get(game, TYPICAL["cop"])["set"], TYPICAL.get(game, TYPICAL["cop"])["answer"]
    thinking = typical_thinking(spec)
    # Samples of one query go out as one request where the provider takes n; a multiple-choice game
    # shows each sample its own draw of the options (one request each), unless the estimator fixes them.
    one_each = not spec.can_batch_samples or (multiple_choice and not fixed_queries)
    return Rates(
        1 / TYPICAL_VALID_SHARE,
        1.0,
        set_tok[0],
        set_tok[1] + thinking,
        thinking,
        1.0 if one_each else 0.0,
        answer_tok[0],
        answer_tok[1] + thinking,
        thinking,
        None,
        f"typical counts for {game} (no earlier run of this model in it)",
    )


def expected_samples(settings: SkateConfig, players: int, seed: int = 0) -> float:
    """The samples per estimate the configured estimator draws, on ``players`` players whose
    p(correct) on each task is spread over [0, 1] (its own code, on coin flips)."""
    est = build_estimator(settings)
    entry = estimators.of(settings.estimator)
    if entry.name == "greedy":
        return 1.0
    rng = np.random.default_rng(seed)
    names = tuple(f"p{i}" for i in range(players))
    total = count = 0
    for _ in range(_SIM_TASKS):
        ps = rng.uniform(0.0, 1.0, size=players)

        def sampler(p: float):
            def draw(n: int, r: np.random.Generator) -> tuple[int, int, int]:
                return int((r.random(n) < p).sum()), 0, 0  # noqa: B023 - called within the iteration that defines it

            return draw

        samplers = [sampler(float(p)) for p in ps]
        rngs = [np.random.default_rng(rng.integers(2**31)) for _ in ps]
        got = (
            est.estimate_task(samplers, rngs, context=TaskContext(players=names))
            if est.joint
            else [est.estimate(s, r) for s, r in zip(samplers, rngs, strict=False)]
        )
        for e in got:
            if not getattr(e, "skipped", False):
                total += int(e.n)
                count += 1
    return total / count if count else 0.0


def _rounds(settings: SkateConfig) -> int:
    stages = [int(st.rounds) for st in settings.stages]
    return sum(stages) if stages else int(settings.game.rounds)


@contextlib.contextmanager
def keys_not_needed() -> Iterator[None]:
    """Every provider's key variable that is unset, set for the block and unset again after: an
    estimate calls no model, so a cohort is estimated (its settings made and checked) without keys."""
    missing = [
        v
        for v in {*LITELLM_KEYS.values(), *(env for _, env in OPENAI_COMPATIBLE.values())}
        if v and v not in os.environ
    ]
    os.environ.update(dict.fromkeys(missing, "not-needed-for-an-estimate"))
    try:
        yield
    finally:
        for v in missing:
            os.environ.pop(v, None)


def estimate(settings: SkateConfig) -> CostEstimate:
    """The cost of the game ``settings`` configure, per model player (see the module's docstring)."""
    s = settings
    names = [p.name for p in s.players.simulated] + [p.name for p in s.players.llm]
    n_players, rounds = len(names), _rounds(s)
    matches = s.schedule.mode == ScheduleMode.matches
    per_task = 1 if matches else n_players  # setters a round, and answerers a task
    game = s.game.name
    spec_of = get_game(game).spec
    multiple_choice = spec_of.answer_format == AnswerFormat.multiple_choice
    est_entry = estimators.of(s.estimator)
    fixed = bool(getattr(est_entry.component, "fixed_queries", False))
    est_key = (est_entry.name, record_of(s.estimator))
    path = counts_path(s.llm.cache_dir)
    known = [e for e in entries(path) if e.get("game") == game]
    runs = {e.get("run"): e for e in known if e.get("rounds")}  # the game's counts, once per run
    asked = sum(float(e.get("rounds") or 0) * float(e.get("players") or 0) for e in runs.values())
    valid = min(1.0, sum(float(e.get("tasks") or 0) for e in runs.values()) / asked) if asked else TYPICAL_VALID_SHARE
    tasks = rounds * per_task * valid
    drawn = expected_samples(s, per_task)
    out = CostEstimate(
        rounds=rounds,
        players=n_players,
        tasks=tasks,
        samples_per_estimate=drawn,
        samples_from=f"drawn by estimator={est_entry.name} on {per_task} players",
        notes=[
            f"valid share {valid:.2f} of setting attempts: "
            + (f"from {len(runs)} earlier run(s) of {game}" if asked else "typical (no earlier run)")
        ],
    )
    prices = prices_of(s.llm)
    for cfg in s.players.llm:
        spec = spec_of_config(cfg)
        mine = [e for e in known if e.get("model") == spec.model]
        rates = earlier_rates(mine, est_key) or typical_rates(game, spec, multiple_choice, fixed)
        spe = rates.samples_per_estimate
        if spe is None and est_entry.name == "logprobs":  # one read, or its fallback's samples where none can be made
            reads = not spec.thinks and not getattr(s.game, "reasoning", False)
            spe = 1.0 if reads else float(getattr(s.estimator, "fallback", 4))
        elif spe is None:
            spe = drawn
        share = 1 / n_players if matches else 1.0  # in matches, a player sets and answers only in its own
        estimates = tasks * share
        attempts = rounds * share * rates.attempts_per_round
        set_calls = attempts * rates.set_calls_per_attempt
        samples = estimates * spe
        answer_calls = samples * rates.answer_calls_per_sample if rates.answer_calls_per_sample else estimates
        calls = set_calls + answer_calls
        prompt = set_calls * rates.set_prompt + answer_calls * rates.answer_prompt
        completion = attempts * rates.set_completion + samples * rates.answer_completion
        thinking = attempts * rates.set_thinking + samples * rates.answer_thinking
        price = price_of(spec, prices)
        if price is None and not spec.hosted:
            price, price_from = Price(), "a server on this machine: no cost"
        else:
            price_from = (
                ("llm.prices" if any(k in prices for k in (spec.model, spec.name)) else "LiteLLM's model map")
                if price is not None
                else "nowhere (neither llm.prices nor LiteLLM's map has one): tokens only"
            )
        usd = price.cost(round(prompt), round(completion)) if price is not None else None
        out.models.append(
            ModelCost(cfg.name, spec.model, calls, prompt, completion, thinking, usd, rates.source, price_from)
        )
    if s.stop.settled is not None:
        out.notes.append(f"stop.settled={s.stop.settled}: the game may end before round {rounds}; this is its most")
    return out


def _n(x: float) -> str:
    return f"{x:,.0f}" if x < 1e7 else f"{x:.3g}"


def format_estimate(est: CostEstimate) -> str:
    """The estimate as the command line prints it: one row per model, the total, and what each
    row comes from."""
    head = f"{'player':<22}{'model':<36}{'calls':>10}{'prompt':>13}{'completion':>13}{'thinking':>13}{'USD':>11}"
    lines = [
        f"estimate: {est.rounds} rounds, {est.players} players, about {est.tasks:,.0f} valid tasks, "
        f"{est.samples_per_estimate:.1f} samples per estimate ({est.samples_from}); no model called",
        "",
        head,
        "-" * len(head),
    ]
    for m in est.models:
        usd = f"{m.usd:,.2f}" if m.usd is not None else "?"
        lines.append(
            f"{m.player:<22}{m.model:<36}{_n(m.calls):>10}{_n(m.prompt_tokens):>13}"
            f"{_n(m.completion_tokens):>13}{_n(m.thinking_tokens):>13}{usd:>11}"
        )
    tot = est.models
    total_usd = est.usd
    lines.append("-" * len(head))
    lines.append(
        f"{'total':<58}{_n(sum(m.calls for m in tot)):>10}{_n(sum(m.prompt_tokens for m in tot)):>13}"
        f"{_n(sum(m.completion_tokens for m in tot)):>13}{_n(sum(m.thinking_tokens for m in tot)):>13}"
        f"{(f'{total_usd:,.2f}' if total_usd is not None else '?'):>11}"
    )
    lines.append("")
    lines += [f"{m.player}: tokens from {m.tokens_from}; price from {m.price_from}" for m in est.models]
    lines += est.notes
    if any(m.usd is None for m in est.models):
        lines.append(
            "'?': no price for that model; give it in llm.prices ({input_per_mtok: ..., output_per_mtok: ...})"
        )
    return "\n".join(lines)
