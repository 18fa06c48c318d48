"""A game against small models served on this machine (``skate local play`` and ``cohort``; the
command line is :mod:`skate.cli.local`, the game's own command line :mod:`skate.cli.local_game`):
the environment the players read each server's address from, and the game run as ``python -m
skate ...`` in its own process while the servers run, stopped with them."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skate.llm import client as llm_client  # its rule is read at each call (tests may swap it)
from skate.local.models import COHORT_PORT, COHORT_THREADS, LocalError, LocalModel, base_env
from skate.local.serving import DEFAULT_SERVER, LLAMA_SERVER, ServerProcess, say, serving, serving_many, tail

# What llama-cpp-python 0.3.36's server answers a request whose response_format is OpenAI's
# json_schema form (it takes a schema only inside {"type": "json_object", "schema": ...}): HTTP
# 500, not the 400 other servers give.
LLAMA_CPP_REFUSAL = (
    'HTTP 500: {"error":{"message":"1 validation error:\\n  {\'type\': \'literal_error\', '
    "'loc': ('body', 'response_format', 'type'), 'msg': \\\"Input should be 'text' or "
    "'json_object'\\\", 'input': 'json_schema'}\",\"type\":\"internal_server_error\"}}"
)


def client_falls_back_on_llama_cpp() -> bool:
    """Whether skate's client takes llama-cpp-python's answer to a json_schema response_format
    (:data:`LLAMA_CPP_REFUSAL`) as a refusal, and so falls back to the json_object form."""
    return bool(
        llm_client.is_format_refusal(llm_client.CallFailed("server", LLAMA_CPP_REFUSAL, retryable=True, status=500))
    )


def game_env(server: ServerProcess, model: LocalModel, env: dict[str, str] | None = None) -> dict[str, str]:
    return {**(os.environ if env is None else env), "LOCAL_LLM_API_BASE": server.base, "LOCAL_LLM_MODEL": model.name}


def cohort_env(servers: dict[str, ServerProcess], env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment ``players=local_cohort`` reads each served model's api_base from."""
    return {**(os.environ if env is None else env), **{base_env(name): s.base for name, s in servers.items()}}


class _Watchdog:
    """Stops the game (SIGINT: it ends cleanly and can be resumed) when one of its servers dies."""

    def __init__(self, game: subprocess.Popen, servers: Sequence[ServerProcess], poll_s: float = 0.5) -> None:
        self.game, self.servers, self.poll_s = game, list(servers), poll_s
        self.dead: ServerProcess | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> _Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(self.poll_s):
            for s in self.servers:
                if s.proc is not None and s.proc.poll() is not None:
                    self.dead = s
                    if self.game.poll() is None:
                        with contextlib.suppress(ProcessLookupError):
                            self.game.send_signal(signal.SIGINT)
                    return


def _run_game(
    cmd: list[str],
    env: dict[str, str],
    servers: Sequence[ServerProcess],
    cwd: str | Path | None = None,
    run_dir: Path | None = None,
    again: str = "",
) -> int:
    say("playing: " + " ".join(cmd[1:]))
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd)
    with _Watchdog(proc, servers) as dog:
        try:
            code = proc.wait()
        except KeyboardInterrupt:  # the game got the Ctrl-C too: let it stop cleanly
            code = proc.wait()
        except BaseException:  # SIGTERM (SystemExit) or an error here: stop the game as well
            proc.terminate()
            proc.wait()
            raise
    peaks = [rss for s in servers if (rss := s.rss_mb(peak=True))]
    say(
        f"game finished with status {code} in {time.monotonic() - t0:.0f} s"
        + (f"; servers' peak {sum(peaks):,.0f} MB resident" if peaks else "")
        + (f"; run folder {run_dir}" if run_dir else "")
    )
    if dog.dead is not None:
        raise LocalError(
            f"the server at {dog.dead.base} stopped with status {dog.dead.process.returncode} mid-game "
            f"(log: {dog.dead.log}); the game was stopped, nothing is rated on the calls it did not "
            f"answer; resume with: {again} resume={run_dir}"
        )
    return code


def falls_back() -> bool:
    """Whether skate's client falls back from the json_schema form on llama-cpp-python's server
    (said in one line when it does not: structured output is then turned off)."""
    falls_back = client_falls_back_on_llama_cpp()
    if not falls_back:
        say(
            "this skate's client does not take llama-cpp-python's HTTP 500 for a json_schema "
            "response_format as a refusal: structured output off unless llm.structured is given"
        )
    return falls_back


def play_against(
    server: ServerProcess,
    model: LocalModel,
    game: Sequence[str],
    run_dir: Path | None = None,
    cwd: str | Path | None = None,
) -> int:
    """Play ``python -m skate <game>`` (``players=local_tiny ...``: the command line's,
    :mod:`skate.cli.local_game`) against a running ``server``, into ``run_dir``; its exit status."""
    return _run_game(
        [sys.executable, "-m", "skate", *game],
        game_env(server, model),
        [server],
        cwd,
        run_dir,
        f"skate local play --model {model.name}",
    )


def play_cohort_against(
    servers: dict[str, ServerProcess], game: Sequence[str], run_dir: Path | None = None, cwd: str | Path | None = None
) -> int:
    """Play ``python -m skate <game>`` (``players=local_cohort ...`` cut down to the served models)
    against running ``servers`` (model name -> server), into ``run_dir``; its exit status."""
    return _run_game(
        [sys.executable, "-m", "skate", *game],
        cohort_env(servers),
        list(servers.values()),
        cwd,
        run_dir,
        f"skate local cohort --models {','.join(servers)}",
    )


def cohort_threads(threads: int | None, server: str) -> int | None:
    """Threads per server when several serve at once: the user's, else the model's own setting
    (llama-server), else :data:`COHORT_THREADS` (llama-cpp-python's server)."""
    return threads if threads is not None or server == LLAMA_SERVER else COHORT_THREADS


def play(
    root: Path,
    model: LocalModel,
    game: Sequence[str],
    run_dir: Path | None = None,
    port: int | None = None,
    threads: int | None = None,
    server: str = DEFAULT_SERVER,
    slots: int | None = None,
) -> int:
    """Serve ``model``, play the game ``python -m skate <game>`` against it, stop the server; the
    game's exit status."""
    with serving(root, model, port, threads=threads, server=server, slots=slots) as running:
        code = play_against(running, model, game, run_dir)
        say("stopping the server")
    return code


def _serving_cohort(
    root: Path, models: Sequence[LocalModel], threads: int | None, port: int | None, server: str, slots: int | None
) -> contextlib.AbstractContextManager[dict[str, ServerProcess]]:
    """A server per model on the cohort's ports (from ``port``, else :data:`COHORT_PORT`)."""
    return serving_many(
        root,
        models,
        threads=cohort_threads(threads, server),
        first_port=port or COHORT_PORT,
        server=server,
        slots=slots,
    )


def play_cohort(
    root: Path,
    models: Sequence[LocalModel],
    game: Sequence[str],
    run_dir: Path | None = None,
    threads: int | None = None,
    port: int | None = None,
    server: str = DEFAULT_SERVER,
    slots: int | None = None,
) -> int:
    """Serve ``models`` (a server each), play the game ``python -m skate <game>`` among them, stop the
    servers; its exit status."""
    if len(models) < 2:
        raise LocalError(
            "a cohort needs at least two models (--models a,b); for one model beside simulated "
            "players use play --model NAME"
        )
    # The same ports every time (those conf/players/local_cohort.yaml names): the response cache
    # keys on a request's api_base, so a resumed game finds the replies it already had.
    with _serving_cohort(root, models, threads, port, server, slots) as servers:
        code = play_cohort_against(servers, game, run_dir)
        say("stopping the servers")
    return code


# ------------------------------------------------------------------------------------ CLI


def serve(
    root: Path,
    models: Sequence[LocalModel],
    port: int | None = None,
    threads: int | None = None,
    server: str = DEFAULT_SERVER,
    slots: int | None = None,
    cohort_game: Sequence[str] = (),
) -> None:
    """Serve ``models`` until Ctrl-C (or until a server stops), printing how to play against them
    (several: ``python -m skate <cohort_game>``, the cohort's overrides)."""
    if len(models) == 1:
        (model,) = models
        with serving(root, model, port, threads=threads, server=server, slots=slots) as running:
            print(f"api_base: {running.base}   (model {model.name}; Ctrl-C stops the server)", flush=True)
            print(
                f"try: LOCAL_LLM_API_BASE={running.base} LOCAL_LLM_MODEL={model.name} "
                "python -m skate players=local_tiny",
                flush=True,
            )
            _wait_for(running)
        return
    with _serving_cohort(root, models, threads, port, server, slots) as servers:
        for name, one in servers.items():
            print(f"{base_env(name)}={one.base}", flush=True)
        print(
            "try: (export the lines above, then) python -m skate " + " ".join(shlex.quote(o) for o in cohort_game),
            flush=True,
        )
        print("Ctrl-C stops the servers", flush=True)
        while all(s.process.poll() is None for s in servers.values()):
            try:
                time.sleep(0.5)
            except KeyboardInterrupt:
                return
        for one in servers.values():
            _wait_for(one, block=False)


def _wait_for(server: ServerProcess, block: bool = True) -> None:
    if block:
        with contextlib.suppress(KeyboardInterrupt):
            server.process.wait()
    code = server.process.poll()
    if code not in (None, 0, -signal.SIGTERM):
        raise LocalError(f"the server stopped with status {code}\n{tail(server.log)}")
