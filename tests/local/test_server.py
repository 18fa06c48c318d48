"""llama.cpp's own server as skate builds and runs it (skate.local.server): the build from the
pinned source (a small CMake project standing in for llama.cpp, built for real), what a failed
build says and leaves, the command line per model, and slots the machine cannot hold."""

from __future__ import annotations

import io
import sys
import tarfile
from pathlib import Path

import pytest

from skate.local import server as local_server
from skate.local import serving as local_serving
from skate.local.models import COHORT, MODELS, LocalError, ServerSettings

MAIN_C = '#include <stdio.h>\nint main(void) { puts("llama-server stand-in"); return 0; }\n'
CMAKE_OK = """cmake_minimum_required(VERSION 3.16)
project(standin C)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
add_executable(llama-server main.c)
"""
CMAKE_MISSING = """cmake_minimum_required(VERSION 3.16)
project(standin C)
message(FATAL_ERROR "Could NOT find OpenMP (missing: OpenMP_C_FLAGS)")
"""


def _sdist(tmp_path: Path, cmakelists: str) -> Path:
    """A tarball laid out as llama-cpp-python's sdist, its vendored llama.cpp a tiny CMake project."""
    path = tmp_path / local_server.SOURCE_SDIST
    with tarfile.open(path, "w:gz") as tar:
        for name, text in (("CMakeLists.txt", cmakelists), ("main.c", MAIN_C)):
            data = text.encode()
            info = tarfile.TarInfo(f"{local_server.VENDORED}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def source(tmp_path, monkeypatch):
    """Build from a stand-in source instead of the 76 MB download."""

    def use(cmakelists: str) -> None:
        sdist = _sdist(tmp_path, cmakelists)
        monkeypatch.setattr(local_server, "fetch_source", lambda root, pip, log: sdist)

    return use


def test_the_server_is_built_once_and_runs(source, tmp_path, monkeypatch):
    import subprocess

    source(CMAKE_OK)
    root = tmp_path / "cache"
    exe = local_server.build(root, "-DGGML_NATIVE=OFF", [sys.executable, "-m", "pip"], jobs=2)
    assert exe == local_server.binary_path(root) and exe.is_file()
    assert subprocess.run([str(exe)], capture_output=True, text=True).stdout.strip() == "llama-server stand-in"
    assert local_server.built(root, "-DGGML_NATIVE=OFF")
    assert not local_server.built(root, "-DGGML_NATIVE=ON")  # other flags: build again
    assert not (root / "llama-server-build").exists()  # the source and build tree are gone
    monkeypatch.setattr(local_server, "run_logged", lambda *a, **k: pytest.fail("built again"))
    assert local_server.build(root, "-DGGML_NATIVE=OFF", []) == exe


def test_a_failed_build_says_what_is_missing_and_leaves_the_other_server(source, tmp_path):
    source(CMAKE_MISSING)
    root = tmp_path / "cache"
    venv = local_serving.venv_dir(root)  # llama-cpp-python's server, installed before
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    (venv / local_serving.INSTALLED_MARK).write_text(local_serving.install_mark())
    with pytest.raises(LocalError) as exc:
        local_serving.install(root, server=local_serving.LLAMA_SERVER)
    text = str(exc.value)
    assert "building llama-server failed while configuring the build" in text
    assert "Could NOT find OpenMP" in text and "--server llama-cpp-python" in text
    assert local_serving.installed(root, local_serving.PYTHON_SERVER) and not local_serving.installed(
        root, local_serving.LLAMA_SERVER
    )
    assert not local_server.binary_path(root).exists()


def test_without_a_compiler_nothing_is_downloaded(monkeypatch, tmp_path):
    monkeypatch.setattr(local_server, "missing_toolchain", lambda: ["a C++ compiler (c++)"])
    monkeypatch.setattr(local_server, "fetch_source", lambda *a: pytest.fail("downloaded"))
    with pytest.raises(LocalError, match=r"no a C\+\+ compiler .*build-essential"):
        local_server.build(tmp_path, "", [])


def test_a_damaged_source_download_is_deleted_and_named(tmp_path):
    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / local_server.SOURCE_SDIST).write_bytes(b"not the sdist")
    with pytest.raises(LocalError, match="checksum mismatch for llama_cpp_python-0.3.36.tar.gz"):
        local_server.fetch_source(tmp_path, [], tmp_path / "log")
    assert not (folder / local_server.SOURCE_SDIST).exists()


def test_the_command_line_serves_each_model_as_measured():
    model = MODELS["gemma3-270m"]
    settings = ServerSettings(slots=3, threads=2, batch=256, ubatch=128, cache_ram_mib=512, cache_reuse=64, poll=0)
    cmd = local_server.command("/b/llama-server", model, Path("/m/g.gguf"), 8123, settings=settings)
    args = {a: b for a, b in zip(cmd, [*cmd[1:], ""], strict=False) if a.startswith("--") and not b.startswith("--")}
    assert cmd[0] == "/b/llama-server" and args["--model"] == "/m/g.gguf" and args["--alias"] == "gemma3-270m"
    assert args["--ctx-size"] == str(model.n_ctx * 3) and args["--parallel"] == "3"
    assert args["--threads"] == args["--threads-batch"] == "2" and args["--batch-size"] == "256"
    assert args["--cache-ram"] == "512" and args["--cache-reuse"] == "64" and args["--poll"] == "0"
    assert cmd[-3:] == ["--no-jinja", "--chat-template", "gemma"]  # a named template needs jinja off
    assert args["--repeat-penalty"] == "1.0" and "--no-webui" in cmd
    for name in COHORT:  # every model of the cohort has settings the machine of the docs holds
        m = MODELS[name]
        assert local_server.memory_needed(m, m.server) < 4 * 2**30


def test_user_slots_and_threads_replace_the_measured_ones_and_bad_ones_are_refused():
    model = MODELS["qwen2.5-coder-1.5b"]
    s = local_server.settings_for(model, slots=3, threads=2)
    assert (s.slots, s.threads, s.batch) == (3, 2, model.server.batch)
    with pytest.raises(LocalError, match="--slots 0"):
        local_server.settings_for(model, slots=0)


def test_slots_the_machine_cannot_hold_are_refused_before_any_server_starts(tmp_path, monkeypatch):
    monkeypatch.setattr(local_server, "available_memory", lambda: 3 * 2**30)
    monkeypatch.setattr(local_serving, "install", lambda *a, **k: pytest.fail("installed"))
    models = [MODELS[n] for n in COHORT]
    with pytest.raises(LocalError) as exc:
        with local_serving.serving_many(tmp_path, models, server=local_serving.LLAMA_SERVER, slots=64):
            pytest.fail("served")
    text = str(exc.value)
    assert "GiB is available" in text and "qwen2.5-coder-1.5b" in text and "64 slot(s)" in text
    assert "serve fewer slots (--slots)" in text
    with pytest.raises(LocalError, match="llama-cpp-python's server has one slot"):
        with local_serving.serving_many(tmp_path, models, server=local_serving.PYTHON_SERVER, slots=2):
            pytest.fail("served")
