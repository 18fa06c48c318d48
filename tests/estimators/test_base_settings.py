"""Every estimator is built from its settings (skate.registry.Component): an instance of its
schema, as the registry builds a game's, or the schema's keys as keywords; each default is the
schema's alone."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from skate.errors import SettingError
from skate.estimators.base import estimator

ENTRIES = estimator.entries()


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_every_estimator_is_built_from_its_schema_or_its_keys(entry):
    cls, schema = entry.component, entry.schema
    built = estimator.build(schema())
    assert type(built) is cls and built.settings == schema()
    assert cls().settings == schema()  # its keys left out: the schema's defaults
    # no parameter of its constructor restates a setting (nor a default of one)
    fields = {f.name for f in dataclasses.fields(schema)}
    assert not fields & set(inspect.signature(cls.__init__).parameters)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_a_misspelt_key_is_an_error_naming_the_settings(entry):
    with pytest.raises(SettingError, match=f"not a setting of {entry.schema.__name__}"):
        entry.component(nsamples=3)


def test_keys_given_beside_an_instance_replace_its_own():
    from skate.estimators.fixed_n import FixedN, FixedNConfig

    assert FixedN(FixedNConfig(n=3), n=5).settings.n == 5
    assert FixedN(n=5).settings == FixedNConfig(n=5)
