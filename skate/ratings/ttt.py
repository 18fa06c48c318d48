"""TrueSkill Through Time (Dangauthier et al. 2007; Landfried & Mocskos 2021, the
``trueskillthroughtime`` package): TrueSkill's model, fitted on all the outcomes at once.

**Model.** The same as TrueSkill's: player *i* has a skill s_i with prior N(μ, σ²); in a game
each player performs at s_i + N(0, β²), the higher performance wins, and performances closer
than a margin draw (the margin that makes a draw between two prior players as likely as
``draw_probability``, as TrueSkill sets it; the package cannot model a draw at 0 and fails on
draws below about 0.01, so it is clamped to [0.01, 0.95]). A draw is an equal result for both.
With ``time: round`` each round of the game is a time step (read from the task id, ``r003-...``; an
id without one fits everything as one step, with a warning) and a skill may drift between steps:
s_i(t+1) = s_i(t) + N(0, γ²) per round elapsed.

**Why the order of games does not matter.** TrueSkill updates online: each game moves two ratings
and is then forgotten, so the same games in another order give other ratings. Here every
outcome is one factor of a single model, and expectation propagation passes messages between
the factors and the skills, sweep after sweep, until nothing moves by more than ``epsilon`` (at
most ``iterations`` sweeps). With ``time: none`` all outcomes are one batch (one time step), so the
fixed point is a function of the set of outcomes alone; with ``time: round`` only the order of
games within a round is free, and it does not matter either. The table reports each player's
posterior μ and σ (at its last round, with ``time: round``).

One detail of the fit. Outcomes say only who is better than whom, so the overall level of the
skills (of each group of players joined by outcomes, at each time step) is held by the prior
alone; at the fixed point it is exactly where the prior puts it (with ``time: none``: the players'
mean μ is the prior μ). With hundreds of outcomes that weak anchor makes the package's sweeps
pull a wrong level back very slowly: thousands of sweeps, and after its default 30 the table of
160 outcomes still depends on their order by a tenth of a point. Before each sweep this backend
therefore shifts the messages from the outcomes, one amount per group and time step, to where
the level equations of the fixed point put them (a small linear solve), and passes the messages
between time steps again. That restarts the same iteration closer to its fixed point; it does
not change the model: the fixed point is the package's own (tested against its long-run fit), and
it is reached in about four sweeps instead of thousands.

**Scale.** μ, σ and β are trueskill.yaml's (25, 25/3, 25/6), so the numbers read like
TrueSkill's: the score is μ, the interval μ ± 2σ, ranks follow the score, and
:meth:`~TrueSkillThroughTimeRating.order_confidence` is TrueSkill's Φ((μa − μb) / √(σa² + σb²)).
A player with no games keeps the prior.

**Cost.** The package is pure Python (some 70 µs per outcome per sweep), and the table refits
every outcome so far whenever it is asked for after a new outcome (repeated calls reuse the fit).
Measured (one fit, six players): 1,800 outcomes (a 20-round game) 0.6 s with ``time: none``,
1.1 s with ``time: round``; 10,000 outcomes 3.7 s (none), 6–8 s (round, 20–100 rounds).
"""

from __future__ import annotations

import math
import re
import time as _time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import trueskillthroughtime as ttt

from skate.errors import Problem, require
from skate.ratings.base import OrderPair, RatingBackend, RatingRow, adjacent_pairs, normal_above, rank_by_score, rating
from skate.ratings.config import OutcomeRuleConfig, positive
from skate.ratings.outcomes import PairOutcome

TIMES = ("none", "round")
# The package needs p_draw > 0 to model a draw at all, and below about 0.01 its draw update is
# wrong or fails (its erfc is a 1e-7 approximation, and the truncated-normal variance of a narrow
# draw window cancels to less than that: "math domain error" at 1e-4).
MIN_DRAW, MAX_DRAW = 0.01, 0.95
ROUND_ID = re.compile(r"r(\d{3,})(?:-|$)")  # "r003-player", "r003-q0012" (round:03d, so 1000+ has 4)


def task_round(task_id: str) -> int | None:
    """The round in a task id ("r003-player" -> 3), or None when the id has none."""
    m = ROUND_ID.match(task_id)
    return int(m.group(1)) if m else None


def _number(key: str, value: Any, ok: str, test) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"rating.{key}={value!r}: give {ok}") from None
    if isinstance(value, bool) or not math.isfinite(x) or not test(x):
        raise ValueError(f"rating.{key}={value!r}: give {ok}")
    return x


# The settings (conf/rating/ttt.yaml extends them: /schema/rating/ttt).
@dataclass
class TTTConfig(OutcomeRuleConfig):
    """TrueSkill Through Time (skate.ratings.ttt): TrueSkill's model fitted on every outcome at
    once, so the table does not depend on the order of games."""

    _target_: str = "skate.ratings.ttt.TrueSkillThroughTimeRating"
    mu: float = 25.0  # prior mean skill (as TrueSkill)
    sigma: float = 25.0 / 3.0  # prior sd of skill
    beta: float = 25.0 / 6.0  # sd of one performance around the skill
    gamma: float = 0.0  # skill drift (sd) per round elapsed, with time=round; 0 = skills fixed
    # Sets the model's draw margin, as TrueSkill's; clamped to [0.01, 0.95] (the package fails on
    # draws below about 0.01).
    draw_probability: float = 0.10
    time: str = "none"  # none: all outcomes one batch (order-free); round: each task's round is a time step
    iterations: int = 30  # at most this many sweeps (time=round: backward-forward passes)
    epsilon: float = 1e-4  # stop once no player's mu or sigma moves by this much in a sweep

    def check(self) -> list[Problem]:
        dp = self.draw_probability
        return [
            *super().check(),
            *positive(self, "sigma", "beta"),
            *require(
                isinstance(dp, (int, float)) and 0.0 <= dp < 1.0, "draw_probability", dp, "give a number in [0, 1)"
            ),
            *require(
                self.time in TIMES,
                "time",
                self.time,
                "give none (every outcome one batch) or round (each round a time step)",
            ),
        ]


@rating.register("ttt", TTTConfig)
class TrueSkillThroughTimeRating(RatingBackend):
    settings: TTTConfig

    def __init__(self, settings: TTTConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        s = self.settings
        self.mu = _number("mu", s.mu, "a finite number", lambda x: True)
        self.sigma = _number("sigma", s.sigma, "a number > 0", lambda x: x > 0)
        self.beta = _number("beta", s.beta, "a number > 0", lambda x: x > 0)
        self.gamma = _number("gamma", s.gamma, "a number >= 0 (0: skills fixed)", lambda x: x >= 0)
        self.draw_probability = _number(
            "draw_probability", s.draw_probability, "a number in [0, 1)", lambda x: 0 <= x < 1
        )
        if s.time not in TIMES:
            raise ValueError(f"rating.time={s.time!r}: give none or round")
        self.time = str(s.time)
        self.iterations = int(
            _number("iterations", s.iterations, "an integer >= 1", lambda x: x >= 1 and x.is_integer())
        )
        self.epsilon = _number("epsilon", s.epsilon, "a number > 0", lambda x: x > 0)
        self.n_updates = 0
        # The last fit: (outcomes it covers, {player: (mu, sigma)}), and how it went.
        self._fit: tuple[int, dict[str, tuple[float, float]]] = (0, {})
        self.fit_info: dict[str, Any] = {}
        self._warned: set[str] = set()

    @property
    def keeps_history(self) -> bool:
        return True  # every table refits all the outcomes

    @property
    def p_draw(self) -> float:
        return min(max(self.draw_probability, MIN_DRAW), MAX_DRAW)

    def _add(self, name: str) -> None:
        pass  # a player with no outcome keeps the prior; the fit covers the others

    def apply(self, o: PairOutcome) -> dict[str, Any]:
        self.n_updates += 1  # the fit waits for the table
        return {
            "update": self.n_updates,
            "task_id": o.task_id,
            "a": o.a,
            "b": o.b,
            "p_a": o.p_a,
            "p_b": o.p_b,
            "result": o.result,
        }

    # ------------------------------------------------------------------------------- the fit
    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, RuntimeWarning, stacklevel=3)

    def _times(self) -> list[int]:
        n = len(self.history)
        if self.time == "none":
            return [0] * n
        rounds = [task_round(o.task_id) for o in self.history]
        known = [r for r in rounds if r is not None]
        if len(known) < n:
            bad = next(o.task_id for o, r in zip(self.history, rounds, strict=False) if r is None)
            self._warn_once(
                "time",
                f"rating.time=round: task id {bad!r} names no round (rNNN-...); all outcomes fitted as one batch",
            )
            return [0] * n
        return known

    def _components(self) -> list[set[str]]:
        """The groups of players joined by outcomes (each has its own overall level)."""
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            parent.setdefault(x, x)
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for o in self.history:
            parent[find(o.a)] = find(o.b)
        groups: dict[str, set[str]] = {}
        for x in list(parent):
            groups.setdefault(find(x), set()).add(x)
        return list(groups.values())

    def _anchor(self, history: ttt.History, groups: list[set[str]]) -> None:
        """Move the messages from the outcomes so that the overall level of each group of players
        (at each time step, with drift) is where the fixed point has it.

        Outcomes are the same if every player of a group who played at one step is moved by the
        same amount at that step (with ``gamma`` 0, or one step: at every step at once), so the
        data say nothing about those moves and the posterior keeps the prior's view of them: at
        the fixed point, for each such direction u, uᵀ Q (μ − μ₀) = 0, Q being the prior precision
        of a player's skills over its steps (a random walk from N(μ₀, σ²)). Given each step's
        message from the outcomes (precision λ, mean ν), the posterior means are linear in a
        shift δ of those messages along the directions: solve for δ, shift, and pass the messages
        between steps again. The sweeps then only have the contrasts between players left to
        settle, which they do fast.
        """
        batches = history.batches
        pi0 = self.sigma**-2
        collapse = self.gamma == 0 or len(batches) == 1  # one skill per player, one direction per group
        # Each player's nodes, one per step it played: (batch, elapsed steps, λ, λν)
        nodes: dict[str, list[tuple[int, float, float, float]]] = {}
        for t, b in enumerate(batches):
            for a, skill in b.skills.items():
                lik = skill.likelihood
                lam = lik.pi if math.isfinite(lik.sigma) else 0.0
                nodes.setdefault(a, []).append((t, float(skill.elapsed), lam, lam * lik.mu if lam else 0.0))
        shift: dict[tuple[str, int], float] = {}  # (player, batch) -> δ
        for group in groups:
            players = sorted(group)
            steps = [0] if collapse else sorted({t for a in players for t, *_ in nodes[a]})
            col = {t: i for i, t in enumerate(steps)}
            m = np.zeros((len(steps), len(steps)))
            r = np.zeros(len(steps))
            for a in players:
                chain = nodes[a]
                if collapse:
                    lam = np.array([sum(n[2] for n in chain)])
                    nu = np.array([sum(n[3] for n in chain) / lam[0] if lam[0] else 0.0])
                    q = np.array([[pi0]])
                    u = np.ones((1, 1))
                else:
                    k = len(chain)
                    lam = np.array([n[2] for n in chain])
                    nu = np.array([n[3] / n[2] if n[2] else 0.0 for n in chain])
                    q = np.zeros((k, k))
                    q[0, 0] = pi0
                    for i in range(1, k):
                        p = 1.0 / (self.gamma**2 * chain[i][1])
                        q[i - 1, i - 1] += p
                        q[i, i] += p
                        q[i - 1, i] -= p
                        q[i, i - 1] -= p
                    u = np.zeros((k, len(steps)))
                    u[np.arange(k), [col[n[0]] for n in chain]] = 1.0
                prior = np.zeros(len(lam))
                prior[0] = pi0 * self.mu
                a_inv = np.linalg.inv(q + np.diag(lam))
                mean = a_inv @ (prior + lam * nu)  # the posterior means, messages as they are
                r += u.T @ (q @ (mean - self.mu))
                m += u.T @ (q @ a_inv @ (lam[:, None] * u))
            try:
                delta = np.linalg.solve(m, -r)
            except np.linalg.LinAlgError:
                continue
            for a in players:
                for t, *_ in nodes[a]:
                    shift[(a, t)] = float(delta[0 if collapse else col[t]])
        if not any(shift.values()):
            return

        def moved(g: ttt.Gaussian, d: float) -> ttt.Gaussian:
            return ttt.Gaussian(g.mu + d, g.sigma) if d and math.isfinite(g.sigma) else g

        for t, b in enumerate(batches):
            for event in b.events:
                for team in event.teams:
                    for item in team.items:
                        item.likelihood = moved(item.likelihood, shift.get((item.name, t), 0.0))
            for a, skill in b.skills.items():
                skill.likelihood = moved(skill.likelihood, shift.get((a, t), 0.0))
        # The messages between steps, passed again without sweeps (the two halves of
        # History.iteration): backward from the outcomes after, forward from the prior and before.
        agents = history.agents
        ttt.clean(agents)
        for j in reversed(range(len(batches) - 1)):
            for a in batches[j + 1].skills:
                agents[a].message = batches[j + 1].backward_prior_out(a)
            for a, skill in batches[j].skills.items():
                skill.backward = agents[a].message
        ttt.clean(agents)
        for j, b in enumerate(batches):
            if j:
                for a in batches[j - 1].skills:
                    agents[a].message = batches[j - 1].forward_prior_out(a)
            for a, skill in b.skills.items():
                skill.forward = agents[a].receive(skill.elapsed)

    @staticmethod
    def _posteriors(history: ttt.History) -> list[tuple[float, float]]:
        return [(g.mu, g.sigma) for b in history.batches for g in (b.posterior(a) for a in sorted(b.skills))]

    def fit(self) -> dict[str, tuple[float, float]]:
        """Each player's posterior (μ, σ) at its last time step, from every outcome so far (the
        fit is kept until an outcome is added; a player with no outcome is not in it)."""
        n = len(self.history)
        if self._fit[0] == n:
            return self._fit[1]
        start = _time.perf_counter()
        if not n:
            self._fit, self.fit_info = (0, {}), {"outcomes": 0}
            return {}
        composition = [[[o.a], [o.b]] for o in self.history]
        results = [[o.result, 1.0 - o.result] for o in self.history]  # a draw: equal results
        history = ttt.History(
            composition,
            results,
            times=self._times(),
            mu=self.mu,
            sigma=self.sigma,
            beta=self.beta,
            gamma=self.gamma,
            p_draw=self.p_draw,
        )
        groups = self._components()
        before = self._posteriors(history)
        step, sweeps = math.inf, 0
        while step >= self.epsilon and sweeps < self.iterations:
            self._anchor(history, groups)
            if len(history.batches) == 1:
                history.batches[0].iteration()  # one sweep (History.iteration would run 20)
            else:
                history.iteration()  # one backward and one forward pass over the time steps
            sweeps += 1
            after = self._posteriors(history)
            step = max(max(abs(m - m0), abs(s - s0)) for (m, s), (m0, s0) in zip(after, before, strict=False))
            before = after
        last: dict[str, tuple[float, float]] = {}
        for b in history.batches:
            for a in b.skills:
                g = b.posterior(a)
                last[a] = (g.mu, g.sigma)
        self.fit_info = {
            "outcomes": n,
            "batches": len(history.batches),
            "sweeps": sweeps,
            "step": step,
            "converged": step < self.epsilon,
            "seconds": _time.perf_counter() - start,
        }
        if step >= self.epsilon:
            self._warn_once(
                "converge",
                f"TrueSkill Through Time: still moving by {step:.2g} after "
                f"rating.iterations={self.iterations} sweeps "
                f"(rating.epsilon={self.epsilon:g})",
            )
        self._fit = (n, last)
        return last

    # ----------------------------------------------------------------------------- the table
    def order_confidence(self) -> list[OrderPair]:
        """P(skill_a > skill_b) = Φ((μ_a − μ_b) / √(σ_a² + σ_b²)) for each adjacent pair (the
        μ and σ of the table)."""
        rows = {r.player: r for r in self.table()}
        return adjacent_pairs(
            list(rows.values()),
            lambda a, b: normal_above(rows[a].mu, rows[b].mu, rows[a].sigma ** 2 + rows[b].sigma ** 2),
        )

    def _table(self) -> list[RatingRow]:
        fitted = self.fit()
        mu = {n: fitted.get(n, (self.mu, self.sigma))[0] for n in self.players}
        sigma = {n: fitted.get(n, (self.mu, self.sigma))[1] for n in self.players}
        ranks = rank_by_score([(n, mu[n]) for n in self.players])
        return sorted(
            (
                RatingRow(
                    n,
                    mu[n],
                    mu[n] - 2 * sigma[n],
                    mu[n] + 2 * sigma[n],
                    ranks[n],
                    {"mu": mu[n], "sigma": sigma[n], "games": self.games.get(n, 0)},
                )
                for n in self.players
            ),
            key=lambda r: r.rank or 10**9,
        )
