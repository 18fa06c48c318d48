"""Rating backends: each turns what the game measured into a ranking with uncertainty.

| module | what it holds |
|---|---|
| ``base`` | the backend interface (:class:`RatingBackend`), table rows, adjacent-pair confidences, and the ``rating`` registry |
| ``config`` | the outcome rule's settings every pairwise backend shares (and their check), the schemas' shared checks |
| ``outcomes`` | how p(correct) becomes pairwise outcomes (relative, absolute, setter vs solver) |
| ``trueskill_backend``, ``bradley_terry``, ``elo``, ``ttt`` | the pairwise backends, each with its settings schema |
| ``irt`` | the item-response model fitted on the graded samples themselves |

A backend is one module here: its settings dataclass (whose ``check`` returns the problems of its
own fields, added to ``super().check()``'s) and its class, built from an instance of it
(``__init__(self, settings=None, /, **values)`` hands both to ``super().__init__`` and reads
``self.settings``: :class:`~skate.registry.Component`) and registered with
``@rating.register("<name>", <Name>Config)`` (capabilities are class attributes: ``says_order``,
``uses_counts``; the config's messages list backends by them), plus ``conf/rating/<name>.yaml``
(``defaults: [/schema/rating/<name>@_here_, _self_]``).
| ``rerate`` | a finished run's games rated again from its event log (``skate rate``) |
"""
