"""PyJail's jails of known strength and the attacks that break them.

Start at :mod:`skate.games.pyjail.generator`: its docstring describes the model (rules,
techniques, difficulty) and it re-exports the public names. Each module imports only from those
above it in this table.

| module | what it holds |
|---|---|
| ``model`` | :data:`KINDS`, :data:`FLAWS`, the attack :data:`TECHNIQUES`, :class:`Rules` and :class:`JailInfo`; the jail's input checks mirrored |
| ``payloads`` | attack payload text: fragments, styles and the builder that spells one payload for some rules |
| ``attacks`` | every way through some rules (the jail's difficulty); :func:`probe`, :func:`breaker`, :func:`attack_inputs` |
| ``wording`` | the pools jails are written from: names of constants, functions and locals, messages, flavour text |
| ``spelling`` | ``_Spelling``, the writer's base: its choices from an rng and how it spells names, literals, messages, constants and each input check |
| ``writer`` | ``_Writer``: renders some rules as jail source, every surface detail drawn from an rng |
| ``reader`` | :func:`read_jail` (rules, kind and difficulty from the source), :func:`difficulty`, :func:`guess_difficulty` |
| ``maker`` | the rules for a kind and strength; :func:`make_jail` (written and read back) and :func:`flawed_jail` |
"""
