from __future__ import annotations

import pytest

from skate.sandbox import Limits, SubprocessSandbox


@pytest.fixture(scope="session")
def sandbox() -> SubprocessSandbox:
    return SubprocessSandbox(Limits(timeout_s=2.0, cpu_s=2, memory_mb=256, max_output_bytes=4096))
