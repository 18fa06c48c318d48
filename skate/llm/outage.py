"""Waiting out a model's endpoint that stops answering (an *outage*) instead of voiding its calls.

An endpoint here is one model at one address (``LLMClient._endpoint``: the model and its
``api_base``), shared by every player and thread that calls it. A call whose failures are those of
an endpoint that does not answer (:func:`unreachable`: no connection, a dropped one, DNS, no reply
in time, HTTP 5xx or 408) and outlast the retry policy marks its endpoint *down*, unless the
endpoint answered a request sent after the call's first failure: then the call fails on its own (a
request the server cannot take) and is void, as before.

While an endpoint is down its calls wait instead of being sent: a call that fails, or is about to
be sent, joins the endpoint's held calls, and one at a time goes out again as the *probe*, each
held call in its turn (so one request the server cannot take does not hide a server that answers
the others), the first after ``first_probe_s`` (the client's: the backoff its retries would wait
next), each later one after twice the last, up to ``max_probe_s`` (the client's: 10 s), with
jitter. The probe is a real call, not a cheap request beside it: a server whose model list answers
while its chat completions fail (an inference engine down behind its API, a provider's incident)
is still down, and a probe that gets through is that call's answer. The first request answered ends the outage: every held call is sent again, each with a
fresh retry budget, and the round goes on as though the endpoint had never gone. A probe that
gets another answer (a 4xx, a 429, an unreadable body) ends it too: the server is there, and that
call follows the usual rules.

If the endpoint has not answered ``wait_s`` seconds after the outage began, the call that probed
last raises :class:`ModelUnreachable` (a :class:`~skate.runlog.records.StopRun`: the run stops
cleanly and can be resumed), and from then on so does every call, held or new, whatever its
endpoint: the run is stopping. ``wait_s`` 0 turns all this off: a call that outlasts its retries
is void, as before. Each change is told to ``on_outage`` as a dict (``state``: down, waiting (as
each probe goes out), up or gave_up; the model, the endpoint, the player whose call found it, the
last failure, seconds down, probes, calls held).
"""

from __future__ import annotations

import logging
import random
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skate.llm.wire import CallFailed
from skate.runlog.records import StopRun

log = logging.getLogger(__name__)

Key = tuple[str, str]  # (model, endpoint)


def unreachable(exc: CallFailed) -> bool:
    """Whether a failure is one an endpoint that does not answer gives: no connection (refused,
    reset, DNS), no reply in time, or HTTP 5xx or 408 (a server or gateway that cannot serve).
    A 429, another 4xx or an unreadable reply comes from a server that is there."""
    if exc.kind in ("transport", "timeout"):
        return True
    return exc.kind == "server" and exc.status is not None and (exc.status >= 500 or exc.status == 408)


class ModelUnreachable(StopRun):
    """A model's endpoint did not answer for ``llm.outage_wait_s``: the run stops cleanly, and
    ``resume=`` goes on with the round it stopped in."""

    def __init__(self, message: str, model: str = "", endpoint: str = "", waited_s: float = 0.0) -> None:
        super().__init__(message)
        self.model, self.endpoint, self.waited_s = model, endpoint, waited_s


def short(detail: str) -> str:
    """A failure's detail for a one-line message: the system's reason where it gives one
    (``Connection refused``, ``Name or service not known``), else its first 80 characters."""
    errno = re.search(r"\[Errno -?\d+\] ([^'\")\]]+)", detail)
    return errno.group(1).strip() if errno else " ".join(detail.split())[:80]


def seconds(s: float) -> str:
    """A duration for a message: ``"40 s"``, ``"2.5 s"``."""
    return f"{s:.0f} s" if s >= 10 else f"{s:.1f} s"


class Call:
    """One call's standing towards its endpoint (made by :meth:`Outages.call`)."""

    __slots__ = ("key", "player", "failing_since", "outage", "probing")

    def __init__(self, key: Key, player: str) -> None:
        self.key, self.player = key, player
        self.failing_since: float | None = None  # when its current run of failures began
        self.outage: _Outage | None = None  # the outage it is held in
        self.probing = False  # out as its endpoint's probe


@dataclass(eq=False)
class _Outage:
    key: Key
    player: str  # whose call found it
    began: float  # time.monotonic()
    error: CallFailed  # the last failure
    next_probe: float
    delay: float  # the wait after the next failed probe (before jitter)
    held: deque[Call] = field(default_factory=deque)  # the next to probe first
    probing: Call | None = None
    probes: int = 0  # held calls sent again to see whether it answers


class Outages:
    """The outages of one client's endpoints (see the module's docstring); thread-safe."""

    def __init__(
        self,
        wait_s: float = 0.0,
        first_probe_s: float = 1.0,
        max_probe_s: float = 30.0,
        on_outage: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        if wait_s < 0:
            raise ValueError(
                f"outage_wait_s={wait_s}: must be >= 0 (0: no waiting, a call that outlasts its retries is void)"
            )
        self.wait_s = float(wait_s)
        self.max_probe_s = max(0.01, float(max_probe_s))
        self.first_probe_s = min(self.max_probe_s, max(0.01, float(first_probe_s)))
        self.on_outage = on_outage
        self._cond = threading.Condition()
        self._down: dict[Key, _Outage] = {}
        self._answered: dict[Key, float] = {}  # endpoint -> when the latest request it answered was sent
        self._stop: tuple[str, str, str, float] | None = None  # (message, model, endpoint, waited) once one gave up
        self._closed = False
        self._rand = random.Random()

    @property
    def enabled(self) -> bool:
        return self.wait_s > 0

    def call(self, key: Key, player: str) -> Call:
        return Call(key, player)

    def down(self) -> list[Key]:
        """The endpoints down now."""
        with self._cond:
            return sorted(self._down)

    # -- the steps of a call (LLMClient._retrying)
    def before(self, call: Call) -> None:
        """Before each try of ``call``: return at once while its endpoint is up; while it is down,
        hold the call until it goes out as the probe or the endpoint answers. Raises
        :class:`ModelUnreachable` once an outage gave up."""
        if not self.enabled:
            return
        with self._cond:
            while True:
                self._raise_if_stopped(call)
                o = self._down.get(call.key)
                if o is None:
                    if call.outage is not None:  # released: its failures start again
                        call.outage, call.failing_since = None, None
                    return
                if self._closed:
                    self._leave(call)
                    waited = time.monotonic() - o.began
                    raise ModelUnreachable(
                        f"stopped while waiting for {call.key[0]} (down {seconds(waited)})", *call.key, waited
                    )
                if call.outage is not o:
                    self._leave(call)
                    o.held.append(call)
                    call.outage = o
                now = time.monotonic()
                turn = o.held[0] is call and o.probing is None
                if turn and now >= o.next_probe:
                    o.probing, call.probing = call, True
                    o.probes += 1
                    self._tell(o, "waiting", now)
                    return
                self._cond.wait(min(1.0, max(0.001, o.next_probe - now)) if turn else 1.0)

    def answered(self, call: Call, sent: float) -> None:
        """A try of ``call`` sent at ``sent`` (``time.monotonic()``) got an answer from its endpoint
        (a reply, or a refusal of something it asked for): an outage of it is over."""
        if not self.enabled:
            return
        with self._cond:
            if sent > self._answered.get(call.key, float("-inf")):
                self._answered[call.key] = sent
            call.failing_since = None
            self._end_probe(call)
            o = self._down.get(call.key)
            if o is not None and sent > o.began:
                self._up(o, time.monotonic())

    def failed(self, call: Call, exc: CallFailed, exhausted: bool) -> bool:
        """A try of ``call`` failed with ``exc``: True when the call is to wait for its endpoint
        (:meth:`before` holds it), False when the usual rules go on (retry, or void once
        ``exhausted``: the retry policy gives up). Raises :class:`ModelUnreachable` when the call
        was its endpoint's probe and the wait is over."""
        if not self.enabled:
            return False
        now = time.monotonic()
        with self._cond:
            self._raise_if_stopped(call)  # another outage stopped the run: one gives up, not each
            o = self._down.get(call.key)
            probe = o if o is not None and o.probing is call else None
            self._end_probe(call)
            if not unreachable(exc):
                if probe is not None:  # the server is there: an answer of its own, under the usual rules
                    self._up(probe, now)
                return False
            if self._closed:  # the run is stopping: no call waits, no new outage is told
                raise ModelUnreachable(f"stopped while {call.key[0]} did not answer", *call.key, 0.0)
            if call.failing_since is None:
                call.failing_since = now
            if probe is not None:
                probe.error = exc
                if now - probe.began >= self.wait_s:
                    self._give_up(probe, now)
                probe.held.remove(call)  # to the back: the next held call probes next
                probe.held.append(call)
                probe.next_probe = min(now + probe.delay * (0.5 + self._rand.random() / 2), probe.began + self.wait_s)
                probe.delay = min(self.max_probe_s, probe.delay * 2)
                self._cond.notify_all()
                return True
            if o is not None:
                o.error = exc
                return True  # down already: it waits with the others, no retries spent
            if not exhausted or self._answered.get(call.key, float("-inf")) > call.failing_since:
                return False  # retries left, or the endpoint answers others: this call fails on its own
            first = self.first_probe_s
            o = _Outage(
                call.key,
                call.player,
                now,
                exc,
                next_probe=now + first * (0.5 + self._rand.random() / 2),
                delay=min(self.max_probe_s, 2 * first),
            )
            self._down[call.key] = o
            self._tell(o, "down", now)
            return True

    def leave(self, call: Call) -> None:
        """``call`` is done (answered, void, or ended by an exception): it is held no longer."""
        if self.enabled and (call.outage is not None or call.probing):
            with self._cond:
                self._end_probe(call)
                self._leave(call)

    def close(self) -> None:
        """The run is stopping or the client closing: every held call ends, and so does every call
        whose endpoint is down (:class:`ModelUnreachable`); calls to the others go on."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # -- inside the lock
    def _leave(self, call: Call) -> None:
        o, call.outage = call.outage, None
        if o is not None:
            if call in o.held:
                o.held.remove(call)
            self._cond.notify_all()

    def _end_probe(self, call: Call) -> None:
        if call.probing:
            call.probing = False
            o = self._down.get(call.key)
            if o is not None and o.probing is call:
                o.probing = None
                self._cond.notify_all()

    def _up(self, o: _Outage, now: float) -> None:
        del self._down[o.key]
        self._tell(o, "up", now)
        self._cond.notify_all()

    def _give_up(self, o: _Outage, now: float) -> None:
        waited = now - o.began
        message = (
            f"{o.key[0]} at {o.key[1] or 'its provider'} did not answer for {seconds(waited)} "
            f"(llm.outage_wait_s={self.wait_s:g}; last: {o.error.kind}: {short(o.error.detail)})"
        )
        self._stop = (message, *o.key, waited)
        self._tell(o, "gave_up", now)
        self._cond.notify_all()
        raise ModelUnreachable(*self._stop)

    def _raise_if_stopped(self, call: Call) -> None:
        if self._stop is not None:
            self._leave(call)
            raise ModelUnreachable(*self._stop)

    def _tell(self, o: _Outage, state: str, now: float) -> None:
        model, endpoint = o.key
        down = now - o.began
        if state == "down":
            log.warning(
                "%s at %s does not answer (%s: %s, past its retries): its calls wait for it and are "
                "sent again when it answers; the run stops if it does not within %s (llm.outage_wait_s)",
                model,
                endpoint or "its provider",
                o.error.kind,
                short(o.error.detail),
                seconds(self.wait_s),
            )
        elif state == "up":
            log.warning(
                "%s answers again after %s down (%d probes); its %d held calls go on",
                model,
                seconds(down),
                o.probes,
                len(o.held),
            )
        elif state == "waiting":
            log.debug(
                "waiting for %s (down %s, gives up at %s): probe %d",
                model,
                seconds(down),
                seconds(self.wait_s),
                o.probes,
            )
        if self.on_outage is not None and not self._closed:  # (a call abandoned at the stop tells nothing)
            self.on_outage(
                {
                    "state": state,
                    "model": model,
                    "endpoint": endpoint,
                    "player": o.player,
                    "kind": o.error.kind,
                    "status": o.error.status,
                    "detail": o.error.detail[:300],
                    "down_s": round(down, 3),
                    "probes": o.probes,
                    "held": len(o.held),
                    "wait_s": self.wait_s,
                }
            )
