"""Before round 1: is every model there, does its key work, does its server answer?

A run whose model name is misspelt, whose key is refused or whose server cannot be reached would
otherwise play the whole game with every call void (and rank that player at the prior).
:func:`preflight` checks each *distinct* model and endpoint once, before anything is spent, and
raises :class:`PreflightError` with one line per failed model, naming the player(s), the model,
the endpoint and the cause::

    player 'ace' (openai/acee at http://127.0.0.1:8000/v1): the server does not serve this model (HTTP 404: The model `acee` does not exist or you do not have access to it.; did you mean 'ace'?)
    player 'claude' (anthropic/claude-3-haiku-20240307): the key was refused (HTTP 401: invalid x-api-key); check ANTHROPIC_API_KEY
    player 'qwen' (hosted_vllm/Qwen/Qwen2.5-7B-Instruct at http://gpu-box:8000/v1): cannot reach http://gpu-box:8000/v1: the host name does not resolve

The last line of the message ends with "(llm.preflight=false skips this check)".
:class:`PreflightError` is a :class:`skate.settings.config.ConfigError`, so the command line prints it
and exits with status 2 like any other configuration mistake.

**The probe.** One request per distinct check: a chat completion of one token (``max_tokens=1``,
temperature 0, the user message ``Reply with OK.``) sent through the client's own transport
(:func:`skate.llm.transport.send`: a JSON POST to ``{api_base}/chat/completions`` for
OpenAI-compatible servers, LiteLLM for the others), so it goes the way the game's calls go, with
the same key, headers and extra body. A completion rather than the server's model list, because
a list proves less: a server can list a model it cannot run (a failed GPU, a model still loading
into a broken state, a ``down`` fake model), and a hosted key may list models its project is not
allowed to call. ``GET {api_base}/models`` is only asked after a 404, to say which models the
server does serve (and the closest to the name asked for). On a hosted API the probe costs about
ten prompt tokens and one completion token, a few millionths of a dollar (below a hundredth of
a cent even at the dearest prices); on a local server nothing.

Players sharing a model and endpoint (same ``provider/model``, ``api_base``, key variable and
headers; e.g. ``ace`` and its ``ace-default`` twin under ``optimizer.compare``) are checked once;
a failure names all of them. The distinct checks run concurrently, each in its own thread, so six
providers take as long as the slowest one, not six times the timeout.

**Not the client's calls.** The probe bypasses :meth:`LLMClient.complete`: it never reads or
writes the response cache (a cached success must not hide a server that is dead now, and the
probe's reply is no game answer), it is not retried by the client's retry policy (one attempt
with a short timeout: ``timeout_s``, 15 s by default, or the model's own ``timeout_s`` if
shorter), it takes no concurrency slot and it is not counted in ``client.usage`` (so the game's
call counts, cache hits and void samples stay the game's) nor against ``llm.budget_usd``. Its
own calls, tokens and cost (priced with the client's ``llm.prices``) are in the returned
:class:`PreflightReport`.

**What stops the run** (a *problem*) and what does not (a *warning*, logged):

- connection refused, a host name that does not resolve, no route, no connection within the
  timeout: ``cannot reach <url>: <reason>`` (problem);
- 401 / 403: ``the key was refused (HTTP 401: ...); check <ENV VAR>`` (problem); a hosted model
  whose key variable is unset: ``no key: set <ENV VAR>`` (problem);
- 404: ``the server does not serve this model (HTTP 404: ...; did you mean 'ace'?)``, or ``...; it
  serves a, b, c)``, or ``..., or api_base is wrong`` when it lists nothing; ``the server lists this
  model but its chat endpoint answered HTTP 404 (...); check api_base`` when it does list the name
  (problem);
- 5xx (and 408/409): asked once more after ``retry_delay_s`` (1 s); if it fails again, ``the server
  failed twice (HTTP 500: ...)`` (problem): a server that fails twice in a row on a one-token
  request would void most of the game;
- other 4xx (400, 402, 422...): ``the server refused the request (HTTP 400: ...)`` (problem): the
  game's requests carry the same parameters and would all be refused the same way;
- 429: a rate limit means the key and the model exist: a warning, the run goes on (the client's
  retries honour ``Retry-After`` during the game) -- unless the body says the account's quota or
  credit is used up (OpenAI answers 429 ``insufficient_quota``), which no retry will mend
  (problem: ``the account has no quota left``);
- connected but no reply within the timeout: a warning (a local server loading a large model can
  take longer than that on its first request), the run goes on;
- a 200 whose body is unreadable (e.g. a reasoning model's empty one-token answer): the model
  answered, so it passes.
"""

from __future__ import annotations

import dataclasses
import difflib
import errno
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from skate.errors import ConfigError
from skate.llm.client import LLMClient
from skate.llm.shaping import ParameterRefused, refusal, shaped
from skate.llm.spec import LITELLM_KEYS, OPENAI_COMPATIBLE, ModelConfigError, ModelSpec
from skate.llm.wire import CallFailed

log = logging.getLogger(__name__)

PROBE_MESSAGES = [{"role": "user", "content": "Reply with OK."}]
PROBE_THINKING_TOKENS = 64  # a model that thinks: room to begin (its reply may still be cut while it thinks)
# A thinking model's refusal of a probe too short to finish in (OpenAI's words): it answered.
_OUTPUT_LIMIT = re.compile(r"could not finish the message because max_tokens|output limit was reached", re.IGNORECASE)
SKIP_HINT = "(llm.preflight=false skips this check)"


# ------------------------------------------------------------------------------------ results
@dataclass
class PreflightProblem:
    """What one check found: a ``fatal`` problem stops the run, the others are warnings."""

    players: tuple[str, ...]  # every player using this model and endpoint
    model: str  # "provider/model"
    endpoint: str  # the api_base, or "" for a LiteLLM provider's own endpoint
    kind: str  # unreachable | no_key | key | model | server | refused | quota | rate_limit | slow
    cause: str  # e.g. "cannot reach http://127.0.0.1:9/v1: connection refused"
    fatal: bool = True
    status: int | None = None  # the HTTP status, if there was one

    @property
    def line(self) -> str:
        names = ", ".join(repr(p) for p in self.players)
        who = f"player {names}" if len(self.players) == 1 else f"players {names}"
        where = f"{self.model} at {self.endpoint}" if self.endpoint else self.model
        return f"{who} ({where}): {self.cause}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "players": list(self.players),
            "model": self.model,
            "endpoint": self.endpoint,
            "kind": self.kind,
            "cause": self.cause,
            "fatal": self.fatal,
            "status": self.status,
        }


@dataclass
class PreflightReport:
    checks: int = 0  # distinct models and endpoints checked
    players: int = 0  # players covered
    problems: list[PreflightProblem] = field(default_factory=list)  # fatal
    warnings: list[PreflightProblem] = field(default_factory=list)  # not fatal
    calls: int = 0  # requests sent (chat probes, retries and model lists)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def message(self) -> str:
        """One line per problem; the last ends with the hint to skip the check."""
        lines = [p.line for p in self.problems]
        if lines:
            lines[-1] += f" {SKIP_HINT}"
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "checks": self.checks,
            "players": self.players,
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "elapsed_s": round(self.elapsed_s, 3),
            "problems": [p.as_dict() for p in self.problems],
            "warnings": [p.as_dict() for p in self.warnings],
        }


class PreflightError(ConfigError):
    """Some model cannot be used; the message has one line per such model (player, model, cause)."""

    def __init__(self, report: PreflightReport) -> None:
        super().__init__(report.message())
        self.report = report
        self.problems = report.problems

    @property
    def down(self) -> bool:
        """Whether every model that failed is one whose server did not answer (unreachable, or
        failing with 5xx): for a run already under way, the outage it stopped for, not a setting
        to fix (``skate play resume=`` exits 75 for it, as the run's own stop did)."""
        return bool(self.problems) and all(p.kind in ("unreachable", "server") for p in self.problems)


# ------------------------------------------------------------------------------------- public
def preflight(
    client: LLMClient, players: Iterable[Any], timeout_s: float = 15.0, retry_delay_s: float = 1.0
) -> PreflightReport:
    """Check every distinct model the players use; raise :class:`PreflightError` if any fails.

    ``players``: ``(name, ModelSpec)`` pairs, or player objects with ``name`` and a
    :class:`ModelSpec` ``spec`` (anything else, e.g. a simulated player, is skipped), so the
    runner can pass its whole cohort. Warnings (rate limits, slow replies) are logged; the report
    says what was checked and what it cost.
    """
    report = check_models(client, players, timeout_s=timeout_s, retry_delay_s=retry_delay_s)
    for w in report.warnings:
        log.warning("preflight: %s", w.line)
    if report.checks:
        log.info(
            "preflight: %d model(s) of %d player(s) checked in %.1fs (%d call(s), $%.6f)%s",
            report.checks,
            report.players,
            report.elapsed_s,
            report.calls,
            report.cost_usd,
            f": {len(report.problems)} failed" if report.problems else "",
        )
    if report.problems:
        raise PreflightError(report)
    return report


def check_models(
    client: LLMClient, players: Iterable[Any], timeout_s: float = 15.0, retry_delay_s: float = 1.0
) -> PreflightReport:
    """Probe each distinct model and endpoint once, concurrently; never raises for a failed check."""
    start = time.perf_counter()
    groups: dict[tuple, tuple[ModelSpec, list[str]]] = {}
    for name, spec in _pairs(players):
        groups.setdefault(check_key(spec), (spec, []))[1].append(name)
    report = PreflightReport(checks=len(groups), players=sum(len(n) for _, n in groups.values()))
    results: list[_Outcome | None] = [None] * len(groups)

    def run(i: int, spec: ModelSpec, names: list[str]) -> None:
        try:
            results[i] = _Probe(client, spec, tuple(names), timeout_s, retry_delay_s).run()
        except Exception as exc:  # noqa: BLE001 - a bug here must not hide the other checks
            results[i] = _Outcome(
                PreflightProblem(
                    tuple(names),
                    spec.model,
                    _endpoint(spec),
                    "error",
                    f"the check failed: {type(exc).__name__}: {exc}"[:300],
                )
            )

    threads = [
        threading.Thread(target=run, args=(i, spec, names), daemon=True, name=f"preflight-{i}")
        for i, (spec, names) in enumerate(groups.values())
    ]
    for t in threads:
        t.start()
    # Each probe is bounded by its timeouts; the deadline only guards against a transport that
    # ignores them (a stuck thread is a daemon and does not keep the process alive).
    deadline = time.monotonic() + 2 * timeout_s + retry_delay_s + 30.0
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    for i, (spec, names) in enumerate(groups.values()):
        out = results[i] or _Outcome(
            PreflightProblem(
                tuple(names),
                spec.model,
                _endpoint(spec),
                "unreachable",
                f"cannot reach {_where(spec)}: no answer within {2 * timeout_s + retry_delay_s + 30.0:g}s",
            )
        )
        report.calls += out.calls
        report.prompt_tokens += out.prompt_tokens
        report.completion_tokens += out.completion_tokens
        report.cost_usd += out.cost_usd
        if out.problem is not None:
            (report.problems if out.problem.fatal else report.warnings).append(out.problem)
    report.elapsed_s = time.perf_counter() - start
    return report


def check_key(spec: ModelSpec) -> tuple:
    """What makes two players' checks the same check: model, endpoint, key variable, headers."""
    return (
        spec.model,
        spec.base_url,
        key_env(spec),
        tuple(sorted(spec.extra_headers.items())),
        json.dumps(spec.extra_body, sort_keys=True, default=str),
    )


def key_env(spec: ModelSpec) -> str:
    """The environment variable the model's key is read from ("" if none)."""
    return spec.api_key_env or OPENAI_COMPATIBLE.get(spec.provider, ("", ""))[1] or LITELLM_KEYS.get(spec.provider, "")


# ------------------------------------------------------------------------------------ probing
@dataclass
class _Outcome:
    problem: PreflightProblem | None = None
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


def _pairs(players: Iterable[Any]) -> list[tuple[str, ModelSpec]]:
    out = []
    for p in players:
        if isinstance(p, tuple) and len(p) == 2 and isinstance(p[1], ModelSpec):
            out.append((str(p[0]), p[1]))
        elif isinstance(getattr(p, "spec", None), ModelSpec):
            out.append((str(p.name), p.spec))
    return out


def _endpoint(spec: ModelSpec) -> str:
    return spec.base_url


def _where(spec: ModelSpec) -> str:
    return spec.base_url or f"{spec.provider}'s API"


class _Probe:
    """One check: a one-token completion, once more after a 5xx, the model list after a 404."""

    def __init__(
        self, client: LLMClient, spec: ModelSpec, players: tuple[str, ...], timeout_s: float, retry_delay_s: float
    ) -> None:
        self.client, self.players = client, players
        self.timeout_s = min(float(timeout_s), spec.timeout_s)
        self.retry_delay_s = retry_delay_s
        self.original = spec
        # A model that thinks is given room to begin its answer (an empty reply cut while it thinks
        # passes too), at its own temperature.
        thinks = spec.thinks
        room = PROBE_THINKING_TOKENS + (spec.thinking_budget or 0)  # a budget must stay below max_tokens
        self.spec = dataclasses.replace(
            spec,
            max_tokens=room if thinks else 1,
            temperature=spec.temperature if thinks else 0.0,
            timeout_s=self.timeout_s,
        )
        self.out = _Outcome()

    def problem(self, kind: str, cause: str, status: int | None = None, fatal: bool = True) -> _Outcome:
        self.out.problem = PreflightProblem(
            self.players, self.original.model, _endpoint(self.original), kind, cause, fatal, status
        )
        return self.out

    def run(self) -> _Outcome:
        try:
            self.spec.api_key()
        except ModelConfigError:
            return self.problem(
                "no_key", f"no key: set {key_env(self.spec)} (or api_key_env to the variable that holds the key)"
            )
        send = self.client._transport_for(self.spec)
        shaper, player = self.client.shaper, self.players[0]
        attempt, learnt = 0, 0
        while attempt < 2:
            attempt += 1
            self.out.calls += 1
            opts, _ = shaped(self.spec, shaper.shape(self.original, player), None)
            try:
                if opts:
                    reply = send(self.spec, PROBE_MESSAGES, 1, 0, options=opts)
                else:
                    reply = send(self.spec, PROBE_MESSAGES, 1, 0)
            except ModelConfigError as exc:
                return self.problem("no_key", str(exc))
            except CallFailed as exc:
                # A parameter the model does not take: learnt (once per parameter) and asked again.
                try:
                    change = (
                        shaper.learn(self.original, player, exc, self.client._sent(self.spec, 1, None, opts))
                        if refusal(exc) is not None and learnt < 8
                        else None
                    )
                except ParameterRefused as refused:
                    return self.problem(
                        "refused", str(refused).split(": ", 1)[-1].removesuffix(", then resume"), exc.status
                    )
                if change is not None:
                    learnt += 1
                    attempt -= 1
                    continue
                if exc.status == 400 and _OUTPUT_LIMIT.search(_message(exc)):
                    return self.out  # a thinking model that could not finish within the probe's tokens: it is there
                if attempt == 1 and _is_server_failure(exc) and not _unreachable(exc):
                    log.debug("preflight %s: %s; asking once more", self.spec.model, exc)
                    time.sleep(self.retry_delay_s)
                    continue
                return self.classify(exc)
            price = self.client.price(self.original)
            self.out.prompt_tokens += reply.prompt_tokens
            self.out.completion_tokens += reply.completion_tokens
            self.out.cost_usd += price.cost(reply.prompt_tokens, reply.completion_tokens)
            return self.out
        raise AssertionError("unreachable")  # pragma: no cover

    def classify(self, exc: CallFailed) -> _Outcome:
        status, detail = exc.status, _message(exc)
        reason = _unreachable(exc)
        if reason is not None:
            return self.problem("unreachable", f"cannot reach {_where(self.spec)}: {reason}", status)
        if exc.kind == "timeout":
            return self.problem(
                "slow",
                f"connected, but no reply within {self.timeout_s:g}s; going on (the game's "
                f"calls wait up to {self.original.timeout_s:g}s)",
                fatal=False,
            )
        if exc.kind == "malformed":
            return self.out  # a 200 came back: the server, the key and the model are there
        if status in (401, 403):
            env = key_env(self.spec)
            fix = f"check {env}" if env else "set api_key_env to the variable holding the server's key"
            return self.problem("key", f"the key was refused (HTTP {status}: {detail}); {fix}", status)
        if status == 404:
            return self.problem("model", self.not_served(detail), status)
        if status == 429:
            if re.search(r"quota|billing|credit|insufficient", detail, re.IGNORECASE):
                return self.problem("quota", f"the account has no quota left (HTTP 429: {detail})", status)
            return self.problem(
                "rate_limit", f"rate-limited (HTTP 429: {detail}); the model is there, going on", status, fatal=False
            )
        if _is_server_failure(exc):
            what = f"HTTP {status}: {detail}" if status else detail
            return self.problem("server", f"the server failed twice ({what})", status)
        if status is not None:
            return self.problem("refused", f"the server refused the request (HTTP {status}: {detail})", status)
        return self.problem("refused", f"the request failed ({exc.kind}: {detail})", status)

    def not_served(self, detail: str) -> str:
        """The 404 cause, with the models the server lists (and the nearest) when it lists some."""
        cause = f"the server does not serve this model (HTTP 404: {detail}"
        served = self.list_models()
        if served and self.spec.name in served:
            return (
                f"the server lists this model but its chat endpoint answered HTTP 404 ({detail}); "
                f"check api_base (the chat URL is {self.spec.base_url}/chat/completions)"
            )
        if served:
            near = difflib.get_close_matches(self.spec.name, served, n=1, cutoff=0.6)
            if near:
                return cause + f"; did you mean {near[0]!r}?)"
            shown = ", ".join(served[:8]) + (f" and {len(served) - 8} more" if len(served) > 8 else "")
            return cause + f"; it serves {shown})"
        if self.spec.openai_compatible:  # nothing listed: maybe the URL is not the API's
            return cause + "), or api_base is wrong"
        return cause + ")"

    def list_models(self) -> list[str] | None:
        """The model ids ``GET {base}/models`` lists; None when it cannot be asked or read."""
        if not self.spec.openai_compatible or self.client._transport is not None or not self.spec.base_url:
            return None
        import urllib3

        headers = {"Authorization": f"Bearer {self.spec.api_key()}", **self.spec.extra_headers}
        self.out.calls += 1
        try:
            resp = urllib3.request(
                "GET",
                self.spec.base_url + "/models",
                headers=headers,
                retries=False,
                timeout=urllib3.Timeout(total=min(5.0, self.timeout_s)),
            )
            if resp.status != 200:
                return None
            data = json.loads(resp.data)["data"]
            return [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")]
        except (urllib3.exceptions.HTTPError, ValueError, KeyError, TypeError):
            return None


# ------------------------------------------------------------------------- what went wrong
def _is_server_failure(exc: CallFailed) -> bool:
    return exc.kind == "server" or (exc.status is not None and (exc.status >= 500 or exc.status in (408, 409)))


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and not any(cur is s for s in seen) and len(seen) < 20:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    return seen


_REACH_TEXT = [
    (r"connection refused", "connection refused"),
    (
        (
            r"name or service not known|nodename nor servname|temporary failure in name resolution|"
            r"failed to resolve|getaddrinfo failed|name resolution"
        ),
        "the host name does not resolve",
    ),
    (r"network is unreachable", "the network is unreachable"),
    (r"no route to host", "no route to host"),
    (r"connection reset", "the connection was reset"),
]


def _unreachable(exc: CallFailed) -> str | None:
    """Why the server could not be reached (None if it was reached): from the exception chain,
    whichever layer raised it (urllib3, httpx under LiteLLM, which may even report a refused
    connection as an HTTP 500)."""
    chain = _chain(exc)
    for e in chain:
        if isinstance(e, ConnectionRefusedError):
            return "connection refused"
        if isinstance(e, socket.gaierror):
            return "the host name does not resolve"
        if isinstance(e, OSError) and e.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return e.strerror.lower() if e.strerror else "no route to host"
    names = {type(e).__name__ for e in chain}
    text = " ".join(str(e) for e in chain).lower()
    for pattern, reason in _REACH_TEXT:
        if re.search(pattern, text):
            return reason
    if names & {"ConnectTimeoutError", "ConnectTimeout"} and not names & {"NewConnectionError"}:
        return "no connection within the timeout"
    if names & {"NewConnectionError", "NameResolutionError", "ConnectError"} or exc.kind == "transport":
        detail = _message(exc)
        return detail or "the connection failed"
    return None


def _message(exc: CallFailed) -> str:
    """The provider's own words, short: the ``error.message`` of a JSON body when there is one."""
    text = exc.detail
    text = re.sub(r"^HTTP \d+: ", "", text)
    m = re.search(r"\{.*\}", text, re.DOTALL)
    if m:
        try:
            body = json.loads(m.group(0))
            err = body.get("error", body) if isinstance(body, dict) else None
            msg = err.get("message") if isinstance(err, dict) else (err if isinstance(err, str) else None)
            if isinstance(msg, str) and msg.strip():
                text = msg
        except ValueError:
            pass
    text = re.sub(r"\s+", " ", text).strip()
    return text[:160] + ("..." if len(text) > 160 else "")


__all__ = ["PreflightError", "PreflightProblem", "PreflightReport", "check_key", "check_models", "key_env", "preflight"]
