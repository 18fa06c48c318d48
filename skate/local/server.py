"""llama.cpp's own server (``llama-server``), built from the llama.cpp that the pinned
llama-cpp-python release vendors, and how ``skate local`` runs it.

Why this server: ``llama-server`` keeps a prompt cache per slot and a host-memory cache of prompts
it has seen (``--cache-ram``), so the rules a setter is sent every round and the program an
answerer is shown in every sample are processed once, not again whenever another request came
between; it serves several slots with continuous batching; it answers ``n`` > 1 samples of one
request from one pass over the prompt; and it reports, per request, how many prompt tokens came
from its cache (``usage.prompt_tokens_details.cached_tokens``). llama-cpp-python's server (the
one ``skate local`` served before) keeps only the last prompt.

The source is llama-cpp-python's sdist (:data:`SOURCE_PIN`, checked against :data:`SOURCE_SHA256`),
whose ``vendor/llama.cpp`` holds llama.cpp with its server; it is built with CMake (the one on
``PATH``, else one installed from PyPI into the cache) into one static binary. Nothing is
downloaded at build time: the web UI's assets are not fetched (the UI is off when serving).

How each model is served (slots, threads, batch sizes, prompt cache) is :class:`ServerSettings`,
chosen per model by measurement on 2 cores (``bench/bench_server.py``; docs/real-models.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from skate.local.models import LocalError, LocalModel, ServerSettings

SOURCE_PIN = "llama-cpp-python==0.3.36"  # the same release skate's other server is built from
SOURCE_SDIST = "llama_cpp_python-0.3.36.tar.gz"
SOURCE_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
VENDORED = "llama_cpp_python-0.3.36/vendor/llama.cpp"
CMAKE_PIN = "cmake==3.31.6"  # from PyPI, where the machine has no cmake
BINARY = "llama-server"
MARK = ".skate-built"

# llama.cpp's own CMake switches: only the server, no tests or examples, no web UI download, no
# TLS (loopback only), one static binary.
SERVER_CMAKE = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
)


# CPU features that ggml has kernels for, as /proc/cpuinfo names them, and the CMake switch of each.
# AMX is never switched on: its kernels crashed llama.cpp at the first request on these virtual
# machines (docs/real-models.md).
_CPU_FEATURES = (
    ("avx", "GGML_AVX"),
    ("avx2", "GGML_AVX2"),
    ("fma", "GGML_FMA"),
    ("f16c", "GGML_F16C"),
    ("bmi2", "GGML_BMI2"),
    ("avx_vnni", "GGML_AVX_VNNI"),
    ("avx512f", "GGML_AVX512"),
    ("avx512vbmi", "GGML_AVX512_VBMI"),
    ("avx512_vnni", "GGML_AVX512_VNNI"),
    ("avx512_bf16", "GGML_AVX512_BF16"),
)


def cpu_flags(cpuinfo: str | None = None) -> set[str] | None:
    """The CPU's feature flags (Linux ``/proc/cpuinfo``), or None where they cannot be read."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return None
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return None


def cpu_build_args(flags: set[str] | None = None) -> str:
    """CMake switches for this CPU's own instruction sets (AVX2 and, where it has them, AVX-512
    and VNNI: 1.5-1.9x the prompt speed of an AVX2 build on these machines), AMX off; a CPU whose
    flags cannot be read gets llama.cpp's native detection."""
    flags = cpu_flags() if flags is None else flags
    if not flags:
        return "-DGGML_NATIVE=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
    on = [f"-D{switch}={'ON' if feature in flags else 'OFF'}" for feature, switch in _CPU_FEATURES]
    return " ".join(["-DGGML_NATIVE=OFF", *on, "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF"])


def build_args(env: Mapping[str, str] | None = None) -> str:
    """The CMake switches llama-server is built with: the user's ``CMAKE_ARGS``, else this CPU's
    (:func:`cpu_build_args`). Recorded in the build's mark: a cache moved to a CPU with other
    instruction sets builds again."""
    env = os.environ if env is None else env
    return env.get("CMAKE_ARGS") or cpu_build_args()


def server_dir(root: Path) -> Path:
    return root / "llama-server"


def binary_path(root: Path) -> Path:
    return server_dir(root) / "bin" / BINARY


def mark_text(cmake_args: str) -> str:
    return f"{SOURCE_PIN} sha256={SOURCE_SHA256}\nCMAKE_ARGS={cmake_args}"


def built(root: Path, cmake_args: str) -> bool:
    """Whether ``llama-server`` was built here from :data:`SOURCE_PIN` with ``cmake_args``."""
    mark = server_dir(root) / MARK
    return binary_path(root).is_file() and mark.is_file() and mark.read_text().strip() == mark_text(cmake_args)


def say(msg: str) -> None:
    print(f"skate.local: {msg}", flush=True)


def tail(path: Path, lines: int = 20) -> str:
    """The last ``lines`` lines of a log, for an error message."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.rstrip().splitlines()[-lines:]) or "(empty log)"


def run_logged(
    cmd: Sequence[str | os.PathLike[str]], log: Path, env: dict[str, str] | None = None, cwd: Path | None = None
) -> int:
    """Run ``cmd`` with its output appended to ``log``; its exit status."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(map(str, cmd))}\n")
        out.flush()
        return subprocess.run([str(c) for c in cmd], stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd).returncode


def missing_toolchain(which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """The C/C++ compilers a source build needs and this machine lacks (cmake is not among them: it
    comes from PyPI where missing)."""
    missing = []
    if not (os.environ.get("CC") and which(os.environ["CC"].split()[0])) and not (which("cc") or which("gcc")):
        missing.append("a C compiler (cc)")
    if not (os.environ.get("CXX") and which(os.environ["CXX"].split()[0])) and not (which("c++") or which("g++")):
        missing.append("a C++ compiler (c++)")
    return missing


def _cmake(root: Path, pip: Sequence[str], log: Path) -> str:
    """A cmake to build with: the machine's, else one from PyPI in ``root/build-tools``."""
    found = shutil.which("cmake")
    if found:
        return found
    tools = root / "build-tools"
    exe = tools / "bin" / "cmake"
    if not exe.exists():
        say(f"no cmake on PATH: installing {CMAKE_PIN} from PyPI into {tools}")
        if run_logged(
            [*pip, "install", "--quiet", "--disable-pip-version-check", "--target", str(tools / "lib"), CMAKE_PIN], log
        ):
            raise LocalError(
                f"no cmake on PATH and pip could not install {CMAKE_PIN} (Debian: apt-get install cmake)"
                f"\n--- last lines of {log} ---\n{tail(log)}"
            )
        found_in = sorted((tools / "lib").glob("cmake/data/bin/cmake"))
        if not found_in:
            raise LocalError(
                f"{CMAKE_PIN} from PyPI has no cmake binary where expected (Debian: apt-get install cmake)"
            )
        exe.parent.mkdir(parents=True, exist_ok=True)
        exe.symlink_to(found_in[0])
    return str(exe)


def sha256_file(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def fetch_source(root: Path, pip: Sequence[str], log: Path) -> Path:
    """The pinned sdist in ``root/downloads`` (downloaded once, checked every time)."""
    folder = root / "downloads"
    sdist = folder / SOURCE_SDIST
    if not sdist.exists():
        folder.mkdir(parents=True, exist_ok=True)
        say(f"downloading the source of {SOURCE_PIN} (76 MB, it vendors llama.cpp) from PyPI")
        if (
            run_logged(
                [
                    *pip,
                    "--disable-pip-version-check",
                    "download",
                    "--no-deps",
                    "--no-binary",
                    ":all:",
                    "--no-cache-dir",
                    "--dest",
                    str(folder),
                    SOURCE_PIN,
                ],
                log,
            )
            or not sdist.exists()
        ):
            raise LocalError(
                f"pip could not download the source of {SOURCE_PIN}: is PyPI reachable from here "
                f"(proxy, PIP_INDEX_URL)?\n--- last lines of {log} ---\n{tail(log)}"
            )
    got = sha256_file(sdist)
    if got != SOURCE_SHA256:
        sdist.unlink()
        raise LocalError(
            f"checksum mismatch for {SOURCE_SDIST}: expected sha256 {SOURCE_SHA256}, got {got}; the "
            "download is damaged or the package changed (it was deleted: run install again)"
        )
    return sdist


def _extract(sdist: Path, into: Path) -> Path:
    """``vendor/llama.cpp`` of the sdist under ``into``; its path."""
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.name == VENDORED or m.name.startswith(VENDORED + "/")]
        if not members:
            raise LocalError(f"{SOURCE_SDIST} has no {VENDORED}: the package changed")
        tar.extractall(into, members=members, filter="data")
    return into / VENDORED


def build(root: Path, cmake_args: str, pip: Sequence[str], jobs: int | None = None) -> Path:
    """Build ``llama-server`` into ``root/llama-server/bin`` (once per ``cmake_args``); its path.

    A failed build raises :class:`LocalError` with what is missing or the log's last lines, and
    leaves whatever was installed before (llama-cpp-python's server among it) as it was."""
    if built(root, cmake_args):
        say(f"server: {BINARY} already built in {server_dir(root)}")
        return binary_path(root)
    missing = missing_toolchain()
    if missing:
        raise LocalError(
            f"cannot build {BINARY}: no {' and no '.join(missing)} on this machine "
            "(Debian/Ubuntu: apt-get install build-essential cmake; macOS: xcode-select --install)"
        )
    root.mkdir(parents=True, exist_ok=True)
    log = root / "build-llama-server.log"
    log.unlink(missing_ok=True)
    t0 = time.monotonic()
    cmake = _cmake(root, pip, log)
    sdist = fetch_source(root, pip, log)
    work = root / "llama-server-build"
    shutil.rmtree(work, ignore_errors=True)
    try:
        src = _extract(sdist, work / "src")
        jobs = jobs or int(os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or os.cpu_count() or 1)
        say(f"building {BINARY} from the llama.cpp in {SOURCE_PIN} (4-8 min on 2 cores; log: {log})")
        args = [*SERVER_CMAKE, *cmake_args.split()]
        if run_logged([cmake, "-S", src, "-B", work / "build", *args], log):
            raise _build_failure("configuring the build", log)
        if run_logged([cmake, "--build", work / "build", "--target", BINARY, "-j", str(jobs)], log):
            raise _build_failure("compiling", log)
        exe = work / "build" / "bin" / BINARY
        if not exe.exists():
            raise _build_failure(f"the build made no {BINARY}", log)
        dest = binary_path(root)
        shutil.rmtree(server_dir(root), ignore_errors=True)
        dest.parent.mkdir(parents=True)
        shutil.copy2(exe, dest)
        (server_dir(root) / MARK).write_text(mark_text(cmake_args) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    say(f"{BINARY} built in {time.monotonic() - t0:.0f} s; {dest.stat().st_size / 1e6:,.0f} MB at {dest}")
    return dest


def _build_failure(what: str, log: Path) -> LocalError:
    text = tail(log, 30)
    low = text.lower()
    if "no cmake_c_compiler" in low or "no cmake_cxx_compiler" in low:
        hint = "CMake found no C/C++ compiler (Debian/Ubuntu: apt-get install build-essential)"
    elif "could not find" in low or "not found" in low:
        hint = "a tool or library the build needs is missing (see the log)"
    elif "killed" in low or "out of memory" in low:
        hint = "the compiler ran out of memory: set CMAKE_BUILD_PARALLEL_LEVEL=1 and install again"
    else:
        hint = "see the log"
    return LocalError(f"building {BINARY} failed while {what}: {hint}\n--- last lines of {log} ---\n{text}")


# ------------------------------------------------------------------------------------ serving
def kv_bytes(model: LocalModel, settings: ServerSettings) -> int:
    """The KV cache the server allocates: every slot's context, at f16."""
    return model.kv_bytes_per_token * model.n_ctx * settings.slots


def memory_needed(model: LocalModel, settings: ServerSettings) -> int:
    """A bound on what serving ``model`` with ``settings`` holds in memory: the weights, the KV
    cache of every slot, the prompt cache in RAM, and 256 MB of compute buffers."""
    return model.size + kv_bytes(model, settings) + settings.cache_ram_mib * 2**20 + 256 * 2**20


def available_memory() -> int | None:
    """``MemAvailable`` in bytes (Linux), or None."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def check_memory(plan: Sequence[tuple[LocalModel, ServerSettings]], available: int | None = None) -> None:
    """Refuse, before any server starts, slots the machine cannot hold: :class:`LocalError`
    naming each model's share when the servers together need more than the memory available."""
    available = available_memory() if available is None else available
    if available is None:
        return
    need = {m.name: memory_needed(m, s) for m, s in plan}
    if sum(need.values()) > available:
        parts = ", ".join(
            f"{name} {n / 2**30:.1f} GiB ({s.slots} slot(s) of {m.n_ctx} tokens)"
            for (m, s), (name, n) in zip(plan, need.items(), strict=True)
        )
        raise LocalError(
            f"the servers would need {sum(need.values()) / 2**30:.1f} GiB and {available / 2**30:.1f} GiB "
            f"is available: {parts}; serve fewer slots (--slots) or fewer models (--models)"
        )


def settings_for(
    model: LocalModel, slots: int | None = None, threads: int | None = None, **more: Any
) -> ServerSettings:
    """The model's measured settings, with the user's ``slots`` and ``threads`` where given (and
    any other :class:`ServerSettings` field in ``more``, as a bench tries them)."""
    s = replace(model.server, **more) if more else model.server
    if slots is not None:
        if slots < 1:
            raise LocalError(f"--slots {slots}: give at least 1")
        s = replace(s, slots=slots)
    if threads is not None:
        if threads < 1:
            raise LocalError(f"--threads {threads}: give at least 1")
        s = replace(s, threads=threads)
    return s


# Sampling defaults a request does not set: llama.cpp's own, no repeat penalty. The 1.1 over the last 64
# tokens that llama-cpp-python's server applies counts the prompt's tokens too, so it pushes a
# one-letter answer away from the options the request named last (Qwen2.5-Coder 1.5B on one COP
# query: option A sampled 87% of the time where its probabilities give 52%, and 53% without the
# penalty). The local cohort asks for it in its setting requests only (players.llm's
# setter_extra_body in conf/players/local_cohort.yaml), where it keeps the Qwen models from
# looping or copying the rules to max_tokens.
SAMPLING = ("--repeat-penalty", "1.0")


def command(
    binary: Path | str,
    model: LocalModel,
    path: Path,
    port: int,
    host: str = "127.0.0.1",
    settings: ServerSettings | None = None,
) -> list[str]:
    """The ``llama-server`` command line serving ``model`` (its file at ``path``) on ``host:port``."""
    s = settings or model.server
    cmd = [
        str(binary),
        "--model",
        str(path),
        "--alias",
        model.name,
        "--host",
        host,
        "--port",
        str(port),
        "--ctx-size",
        str(model.n_ctx * s.slots),
        "--parallel",
        str(s.slots),
        "--kv-unified",
        "--threads",
        str(s.threads),
        "--threads-batch",
        str(s.threads_batch or s.threads),
        "--batch-size",
        str(s.batch),
        "--ubatch-size",
        str(s.ubatch),
        "--cache-ram",
        str(s.cache_ram_mib),
        "--poll",
        str(s.poll),
        "--no-webui",
        "--metrics",
        *SAMPLING,
    ]
    if s.cache_reuse:
        cmd += ["--cache-reuse", str(s.cache_reuse)]
    if s.swa_full:
        cmd += ["--swa-full"]
    if model.chat_format:  # the same named template llama-cpp-python's server was given (a name is read as a
        cmd += ["--no-jinja", "--chat-template", model.chat_format]  # built-in template only without jinja)
    return cmd
