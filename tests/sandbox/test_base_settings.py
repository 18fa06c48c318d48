"""Every sandbox is built from its settings (skate.registry.Component): an instance of its schema,
as the sandbox registry builds it (``build_sandbox``), or the schema's keys as keywords; each
default is the schema's alone. ``sandbox=auto`` builds the first jail that works from the settings
every jail shares."""

from __future__ import annotations

import dataclasses
import inspect
import warnings

import pytest

import skate
from skate.errors import ConfigError, SettingError
from skate.sandbox import AutoSandbox, JailSandbox, Limits, SandboxUnavailable, UnsafeSandboxWarning, auto_sandbox
from skate.sandbox.config import AutoSandboxConfig, JailSettingsConfig, sandbox
from skate.settings.build import build_sandbox
from skate.settings.options import settle
from tests.conftest import REQUIRED_SANDBOXES, TEST_LIMITS

ENTRIES = sandbox.entries()
KINDS = [e for e in ENTRIES if e.name != "auto"]  # auto builds one of the others


def _built(make):
    """A sandbox ``make`` builds, or a skip where its jail program is missing here."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnsafeSandboxWarning)
            return make()
    except SandboxUnavailable as exc:
        if REQUIRED_SANDBOXES:
            pytest.fail(f"sandboxes {REQUIRED_SANDBOXES} are required here: {exc}")
        pytest.skip(f"not on this machine: {exc}")


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_no_constructor_parameter_restates_a_setting(entry):
    fields = {f.name for f in dataclasses.fields(entry.schema)}
    assert entry.component.schema is entry.schema
    assert not fields & set(inspect.signature(entry.component.__init__).parameters)
    assert not fields & set(inspect.signature(entry.component).parameters)  # auto's __new__ too


@pytest.mark.parametrize("entry", KINDS, ids=lambda e: e.name)
def test_every_sandbox_is_built_from_its_schema_or_its_keys(entry):
    cls, schema = entry.component, entry.schema
    settings = schema(workers=1, limits=TEST_LIMITS)
    built = _built(lambda: build_sandbox(settings))
    try:
        assert type(built) is cls and built.settings is settings
        assert built.limits == TEST_LIMITS and built.workers == 1
    finally:
        built.close()
    default = _built(cls)  # its keys left out: the schema's defaults
    try:
        assert default.settings == schema() and default.limits == schema().limits
    finally:
        default.close()


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_a_misspelt_key_is_an_error_naming_the_settings(entry):
    with pytest.raises(SettingError, match=f"not a setting of {entry.schema.__name__}"):
        entry.component(worker=1)


def test_a_jail_reads_its_settings():
    settings = sandbox.get("nsjail").schema(workers=1, tmp_mb=32, tmp_inodes=100, warm=False, memory_bound="rlimit")
    jail = _built(lambda: build_sandbox(settings))
    try:
        assert (jail.tmp_mb, jail.tmp_inodes, jail.warm, jail.cgroup_parent) == (32, 100, False, None)
        assert "tmpfs of 32 MiB and 100 inodes" in jail.bounds["tmp"]
    finally:
        jail.close()


def test_settings_a_sandbox_cannot_take_are_one_line_config_errors():
    with pytest.raises(ConfigError, match="sandbox.limits.memory_gb is not a setting of Limits .did you mean"):
        skate.config(sandbox="subprocess", values={"sandbox.limits.memory_gb": 1})
    with pytest.raises(ConfigError, match="sandbox.limits.cpu_s=0 is invalid: must be a positive number"):
        settle(skate.SkateConfig(sandbox=sandbox.get("subprocess").schema(limits=Limits(cpu_s=0))))
    with pytest.raises(ConfigError, match="sandbox: sandbox.memory_bound='lots'"):
        build_sandbox(sandbox.get("nsjail").schema(memory_bound="lots"))
    with pytest.raises(ConfigError, match="sandbox: sandbox.prefer: unknown \\['subprocess'\\]"):
        build_sandbox(AutoSandboxConfig(prefer=["subprocess"]))


def test_auto_builds_the_first_working_jail_from_the_settings_every_jail_shares():
    assert auto_sandbox is AutoSandbox  # the name the auto schema's _target_ (and recorded runs) give
    settings = AutoSandboxConfig(workers=1, limits=TEST_LIMITS, tmp_mb=32, warm=False)
    jail = _built(lambda: build_sandbox(settings))
    try:
        assert isinstance(jail, JailSandbox) and jail.name == settings.prefer[0]
        assert type(jail.settings) is sandbox.get(jail.name).schema  # the jail's own schema
        shared = [f.name for f in dataclasses.fields(JailSettingsConfig) if f.name != "_target_"]
        assert {k: getattr(jail.settings, k) for k in shared} == {k: getattr(settings, k) for k in shared}
        assert jail.settings.binary == ""  # found, as with sandbox=<jail> and no binary given
        assert jail.limits == TEST_LIMITS and jail.workers == 1 and jail.tmp_mb == 32 and not jail.warm
    finally:
        jail.close()
