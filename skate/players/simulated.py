"""Simulated players: known latent skill, real programs, the same engine as LLM players.

A simulated player

* **sets** real Python programs (from :mod:`skate.players.programs`) aimed at a target
  difficulty, learns their output from the sandbox (never by running code in-process), writes
  plausible distractors, and sometimes makes a defective attempt (a crash, a silent program, a
  nondeterministic one, too few distinct distractors) so the retry path is exercised. On a retry
  it reads why the earlier attempts failed: after "not unique" it changes kind.
* **answers** a multiple-choice sample correctly with probability
  ``know + (1 - know) / n_options``, where ``know = sigmoid((skill_eff - difficulty) / width)``,
  ``difficulty = code_difficulty(prompt)`` and ``skill_eff`` is its skill plus any per-kind offset
  plus a fixed per-task "blind spot" offset. Otherwise it guesses uniformly.
* **uses its history** as its augmentation strategy allows: with no history it picks kinds at
  random and pitches at ``skill + pitch``; with its own tasks it spreads over kinds it has used
  least; with its own p(correct) it moves its difficulty towards the band it can still answer
  (about 70%); with other players' scores it also favours kinds where it beats the others.
"""

from __future__ import annotations

import math
import threading
import zlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from skate.games.base import GameSpec, normalize
from skate.games.cop import COPProposal
from skate.players import programs
from skate.players.base import Player
from skate.records import FailReason, HistoryItem, SetterContext
from skate.sandbox import Sandbox

FLAWS = ("crash", "silent", "nondeterministic", "few_distractors")
KNOW_WIDTH = 0.06  # how sharply knowing falls off as difficulty passes skill
AIM_OWN_P = 0.7  # hist_perf setters aim for tasks they answer about this often
AIM_OWN_P_COMPETITIVE = 0.65  # setters that also see their rivals' scores push a little harder
HISTORY_WINDOW = 8  # recent own tasks used to calibrate difficulty


class SandboxOracle:
    """What a program prints, learnt by running it in the sandbox; memoised and thread-safe.

    Returns ``None`` when the program does not run cleanly.
    """

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._memo: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def __call__(self, code: str) -> str | None:
        with self._lock:
            if code in self._memo:
                return self._memo[code]
        res = self.sandbox.run(code)
        out = res.stdout.rstrip("\n") if res.ok else None
        with self._lock:
            self._memo[code] = out
        return out


class SimulatedPlayer(Player):
    def __init__(self, name: str, skill: float, spec: GameSpec, oracle: Callable[[str], str | None],
                 seed: int, topic_skill: dict[str, float] | None = None, pitch: float = 0.0,
                 sloppiness: float = 0.15, noise: float = 0.08) -> None:
        unknown = sorted(set(topic_skill or {}) - set(programs.KINDS))
        if unknown:
            raise ValueError(f"player {name!r}: unknown topic_skill kinds {unknown}; "
                             f"valid kinds are {list(programs.KINDS)}")
        self.name = name
        self.skill = skill
        self.topic_skill = dict(topic_skill or {})
        self.pitch = pitch
        self.sloppiness = sloppiness
        self.noise = noise
        self.spec = spec
        self.oracle = oracle
        self.seed = seed
        self._difficulty: dict[str, float] = {}

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "simulated", "true_skill": self.skill,
                "topic_skill": self.topic_skill, "pitch": self.pitch, "sloppiness": self.sloppiness}

    # ------------------------------------------------------------------ answering
    def difficulty(self, prompt: str) -> float:
        if prompt not in self._difficulty:
            self._difficulty[prompt] = programs.code_difficulty(prompt)
        return self._difficulty[prompt]

    def effective_skill(self, prompt: str) -> float:
        """Skill on this task: base + per-kind offset + a fixed blind-spot offset for the task."""
        kind = programs.kind_of(prompt)
        blind = np.random.default_rng(
            [self.seed, zlib.crc32(self.name.encode()), zlib.crc32(prompt.encode())]
        ).normal(0.0, self.noise) if self.noise > 0 else 0.0
        return self.skill + self.topic_skill.get(kind or "", 0.0) + float(blind)

    def p_know(self, prompt: str) -> float:
        """Probability of knowing the answer outright (before guessing among the options)."""
        z = (self.effective_skill(prompt) - self.difficulty(prompt)) / KNOW_WIDTH
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    def answer_batch(self, prompt: str, option_sets: list[list[str]],
                     rng: np.random.Generator) -> list[int | None]:
        know = self.p_know(prompt)
        truth = self.oracle(prompt)
        key = normalize(truth) if truth is not None else None
        picks: list[int | None] = []
        for options in option_sets:
            right = [i for i, o in enumerate(options) if normalize(o) == key]
            if right and rng.random() < know:
                picks.append(right[0])
            else:
                picks.append(int(rng.integers(len(options))))
        return picks

    # ------------------------------------------------------------------ setting
    def set_task(self, ctx: SetterContext, rng: np.random.Generator) -> COPProposal:
        kind = self.choose_kind(ctx, rng)
        target = self.target_difficulty(ctx, rng)
        code = self._write_program(kind, target, rng)
        answer = self.oracle(code)
        distractors = programs.make_distractors(answer if answer else "0", self.spec.n_distractors, rng)
        # Sloppiness fades on retries: the setter has been told what went wrong.
        if rng.random() < self.sloppiness * 0.5 ** (ctx.attempt - 1):
            code, distractors = self._add_flaw(str(rng.choice(FLAWS)), code, distractors, answer, rng)
        return COPProposal(code=code, distractors=distractors)

    def _write_program(self, kind: str, target: float, rng: np.random.Generator) -> str:
        """Draft a few programs near the target and keep the one whose difficulty is closest."""
        drafts = [programs.generate_program(kind, float(np.clip(target + rng.normal(0, 0.1), 0, 1)), rng)
                  for _ in range(4)]
        return min(drafts, key=lambda c: abs(programs.code_difficulty(c) - target))

    def _own_items(self, ctx: SetterContext) -> list[HistoryItem]:
        return sorted((h for h in ctx.history if h.setter == self.name), key=lambda h: h.number)

    def choose_kind(self, ctx: SetterContext, rng: np.random.Generator) -> str:
        kinds = list(programs.KINDS)
        banned = {programs.kind_of(f.text) for f in ctx.failed if f.reason is FailReason.NOT_UNIQUE}
        allowed = [k for k in kinds if k not in banned] or kinds
        weights = np.ones(len(allowed))
        used: dict[str, int] = defaultdict(int)
        for h in self._own_items(ctx):
            used[programs.kind_of(h.prompt) or ""] += 1
        advantage = self._kind_advantage(ctx)
        for i, k in enumerate(allowed):
            weights[i] /= (1.0 + used[k]) ** 2  # spread over the kinds used least so far
            weights[i] *= math.exp(4.0 * advantage.get(k, 0.0))
        return str(allowed[int(rng.choice(len(allowed), p=weights / weights.sum()))])

    def _kind_advantage(self, ctx: SetterContext) -> dict[str, float]:
        """Mean (own p - rivals' mean p) per kind, from every scored item that shows rivals."""
        diffs: dict[str, list[float]] = defaultdict(list)
        for h in ctx.history:
            if not h.p_correct or self.name not in h.p_correct or len(h.p_correct) < 2:
                continue
            rivals = [p for n, p in h.p_correct.items() if n != self.name]
            diffs[programs.kind_of(h.prompt) or ""].append(h.p_correct[self.name] - float(np.mean(rivals)))
        return {k: float(np.mean(v)) for k, v in diffs.items()}

    def target_difficulty(self, ctx: SetterContext, rng: np.random.Generator) -> float:
        prior = self.skill + self.pitch
        scored = [h for h in self._own_items(ctx) if h.p_correct and self.name in h.p_correct]
        scored = scored[-HISTORY_WINDOW:]
        if scored:
            aim = AIM_OWN_P if ctx.strategy == "hist_perf" else AIM_OWN_P_COMPETITIVE
            d = np.array([self.difficulty(h.prompt) for h in scored])
            p = np.array([h.p_correct[self.name] for h in scored])
            # Too easy for myself (p above aim) -> harder; too hard -> easier.
            estimate = float(d.mean() + 0.5 * (p.mean() - aim))
            w = len(scored) / (len(scored) + 2.0)
            prior = (1 - w) * prior + w * estimate
        return float(np.clip(prior + rng.normal(0.0, 0.05), 0.02, 0.98))

    @staticmethod
    def _add_flaw(flaw: str, code: str, distractors: list[str], answer: str | None,
                  rng: np.random.Generator) -> tuple[str, list[str]]:
        if flaw == "crash":
            return code + "\nprint(undefined_result)\n", distractors
        if flaw == "silent":
            return code.replace("print(", "str("), distractors
        if flaw == "nondeterministic":
            return code + "\nprint(__import__('os').urandom(6).hex())\n", distractors
        # few_distractors: repeats and the real answer itself among the wrong options
        k = max(1, len(distractors) // 2)
        bad = distractors[:k] + distractors[:k] + ([answer] if answer else [])
        return code, bad[: len(distractors)]


def build_simulated(roster: Sequence[Any], spec: GameSpec, sandbox: Sandbox, seed: int) -> list[Player]:
    """Players from the ``players.simulated`` config list, sharing one sandbox oracle."""
    oracle = SandboxOracle(sandbox)
    return [SimulatedPlayer(name=p.name, skill=float(p.skill), spec=spec, oracle=oracle, seed=seed,
                            topic_skill={str(k): float(v) for k, v in dict(p.topic_skill).items()},
                            pitch=float(p.pitch), sloppiness=float(p.sloppiness), noise=float(p.noise))
            for p in roster]
