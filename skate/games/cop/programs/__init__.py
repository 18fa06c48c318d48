"""The COP program generator: programs of twelve kinds at a chosen difficulty.

Start at :mod:`skate.games.cop.generator`, which re-exports the public names.

| module | what it holds |
|---|---|
| ``kit`` | :data:`KINDS`; name pools, random choices, source writer and variant registry for templates |
| one per kind: ``arithmetic``, ``strings``, ... | that kind's templates (variants) and their helpers |
| ``drafting`` | :func:`generate_program` and the checks a draft must pass; :func:`predict_output`, :func:`kind_of` |

The kind modules are ``arithmetic``, ``strings``, ``slicing``, ``dicts``, ``recursion``,
``closures``, ``sorting``, ``bitwise``, ``generators``, ``exceptions``, ``classes`` and
``comprehensions``, one for each entry of :data:`~skate.games.cop.programs.kit.KINDS`.
"""
