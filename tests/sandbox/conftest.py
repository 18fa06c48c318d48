"""Every sandbox implementation this machine can run, built once per test session."""

from __future__ import annotations

import warnings

import pytest

from skate.sandbox import (
    BwrapSandbox,
    NsjailSandbox,
    SandboxUnavailable,
    SubprocessSandbox,
    UnsafeSandboxWarning,
    probe,
)
from tests.conftest import REQUIRED_SANDBOXES, TEST_LIMITS

JAILS = {"nsjail": NsjailSandbox, "bwrap": BwrapSandbox}
ALL = {**JAILS, "subprocess": SubprocessSandbox}


@pytest.fixture(scope="session")
def built():
    """name -> a working sandbox, or the reason it cannot run here."""
    out = {}
    for name, cls in ALL.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnsafeSandboxWarning)
                sb = cls(limits=TEST_LIMITS, workers=2)
            probe(sb)
            out[name] = sb
        except SandboxUnavailable as exc:
            out[name] = str(exc)
    yield out
    for sb in out.values():
        if not isinstance(sb, str):
            sb.close()


def _get(built, name):
    sb = built[name]
    if isinstance(sb, str):
        if name in REQUIRED_SANDBOXES:
            pytest.fail(f"sandbox {name} is required here but does not work: {sb}")
        pytest.skip(f"sandbox {name} does not work on this machine: {sb}")
    return sb


@pytest.fixture(params=sorted(ALL))
def any_sandbox(request, built):
    """Each implementation in turn: the conformance suite runs against all of them."""
    return _get(built, request.param)


@pytest.fixture(params=sorted(JAILS))
def jail(request, built):
    """Each hardened implementation in turn: the hostile-code suite runs against these."""
    return _get(built, request.param)
