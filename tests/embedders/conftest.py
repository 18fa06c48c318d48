from __future__ import annotations

import pytest

from skate.llm.fake_server import FakeLLMServer, FakeModel


@pytest.fixture
def server():
    """The loopback fake server; any model name is served (embeddings included)."""
    with FakeLLMServer({"*": FakeModel()}) as srv:
        yield srv
