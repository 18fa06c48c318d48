"""Load (issue 14): 20 LLM players against the loopback server, 20% injected faults, 64 requests in
flight; the game completes and nothing is lost.

"Nothing lost" is checked from both ends: the server's own log of requests (each with the fault it
was served, if any) against the client's usage and the run's event log. Every fault was retried or
ended in a logged void call; every sample asked for was served, or void; every (task, player) pair
has an estimate whose void samples are counted as void, never as wrong answers; every valid task
was rated between the players that have a p(correct) for it.

About 5 s on 2 cores (1 COP round, 20 tasks, 400 estimates of 2 samples, ~1,000 requests of
0.1 s each); ``bench/bench_load.py llm`` plays the same game at a larger size.
"""

from __future__ import annotations

from collections import Counter

from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.runlog.events import (
    AttemptMade,
    Estimated,
    ModelCallVoid,
    PlayerVoid,
    RoundEnded,
    RoundStarted,
    RunEnded,
    RunFailed,
    RunStarted,
    RunStopped,
    TaskRated,
    TaskSet,
    UnknownEvent,
    read_run,
)
from skate.runner import run_game
from tests.llm.conftest import llm_config

# 20% of requests fail, each a fault that a retry can get past (429 with Retry-After, 500, a 200
# whose body is not JSON).
FAULTS = {"rate_limit": 0.07, "server_error": 0.07, "malformed": 0.06}
NAMES = tuple(f"m{i:02d}" for i in range(20))
ROUNDS, N, IN_FLIGHT, MAX_RETRIES = 1, 2, 64, 4


def test_twenty_flaky_llm_players_with_64_requests_in_flight_lose_nothing(tmp_path):
    models = {n: FakeModel(round(0.10 + 0.85 * i / (len(NAMES) - 1), 3), dict(FAULTS)) for i, n in enumerate(NAMES)}
    # A little latency so that requests overlap: 64 in flight need the engine to keep 64 waiting.
    with FakeLLMServer(models, latency_s=0.1, retry_after_s=0.01) as srv:
        cfg = llm_config(
            srv.api_base,
            tmp_path / "cache",
            {"game.rounds": ROUNDS, "estimator.n": N, "llm.concurrency": IN_FLIGHT, "llm.max_retries": MAX_RETRIES},
            names=NAMES,
        )
        result = run_game(cfg, tmp_path / "run")
        # The game's requests: the preflight's probes (one token each) bypass the client. They draw
        # the first faults of each model's stream (fault_seed 0): none gets two 500s in a row, which
        # the preflight would take for a broken server.
        served = [r for r in srv.log if r["max_tokens"] != 1]
        max_in_flight = srv.stats.max_in_flight

    # The game completed: every round, then run_end; the log is well-formed.
    run = read_run(tmp_path / "run")
    assert isinstance(run.events[0], RunStarted) and isinstance(run.events[-1], RunEnded)
    assert not run.of(UnknownEvent) and not run.of(RunStopped) and not run.of(RunFailed)
    assert all(e.ts is not None for e in run.events)
    assert (
        [e.round for e in run.of(RoundStarted)] == [e.round for e in run.of(RoundEnded)] == list(range(1, ROUNDS + 1))
    )
    assert not run.of(PlayerVoid)  # no player lost a whole round to failed calls
    table = run.final_ratings()
    assert sorted(r["player"] for r in table) == sorted(NAMES) and not any(r.get("no_data") for r in table)

    # 64 requests really were in flight at once, and never more.
    assert 32 <= max_in_flight <= IN_FLIGHT

    # About 20% of requests faulted, of each kind.
    faults = Counter(r["fault"] for r in served if r["fault"])
    assert set(faults) == set(FAULTS)
    assert 0.12 <= sum(faults.values()) / len(served) <= 0.28

    usage = result.summary.usage["total"]
    voids = run.of(ModelCallVoid)
    # Every request the client sent reached the server; every fault was retried, or was the last
    # try of a call that exhausted its retries and was logged as void.
    assert usage["calls"] == len(served)
    assert usage["retries"] > 0
    assert sum(faults.values()) == usage["retries"] + len(voids)
    assert all(v.attempts == MAX_RETRIES + 1 and v.kind in ("rate_limit", "server", "malformed") for v in voids)
    assert usage["void"] == sum(v.samples for v in voids)
    # A call is void only after 5 faults in a row (0.2^5, about 1 in 3,000 calls): a few at most.
    assert usage["void"] <= 4
    # Every sample asked for was served by the server (one choice per sample of a request that got
    # through), came from the cache, or is void.
    assert sum(r["n"] for r in served if not r["fault"]) == usage["samples"] - usage["cached"] - usage["void"]

    # Every (task, player) pair has exactly one estimate of N samples, void ones counted as void.
    tasks = run.of(TaskSet)
    estimates = run.of(Estimated)
    assert len(tasks) >= ROUNDS * len(NAMES) * 0.8
    assert Counter((e.task_id, e.player) for e in estimates) == Counter(
        {(t.task_id, n): 1 for t in tasks for n in NAMES}
    )
    assert all(e.n + e.void == N for e in estimates)
    assert all((e.p is None) == (e.n == 0) for e in estimates)
    assert all(e.p is None or e.p == e.correct / e.n for e in estimates)  # void samples are not wrong answers
    void_attempts = [a for a in run.of(AttemptMade) if a.reason == "void"]
    assert sum(e.void for e in estimates) + len(void_attempts) == usage["void"]  # COP's setters make one call
    assert result.summary.void_samples == sum(e.void for e in estimates)
    assert result.summary.void_estimates == sum(1 for e in estimates if e.p is None) <= 2

    # Every valid task was rated, once per pair of players with a p(correct) for it.
    rated = {e.task_id: e for e in run.of(TaskRated)}  # the ratings once per task
    for t in tasks:
        measured = {e.player for e in estimates if e.task_id == t.task_id and e.p is not None}
        if len(measured) < 2:
            assert t.task_id not in rated
            continue
        assert rated[t.task_id].updates == len(measured) * (len(measured) - 1) // 2
        assert set(rated[t.task_id].state["mu"]) == measured
    assert sum(r.updates for r in rated.values()) == run.update_count == result.summary.updates
