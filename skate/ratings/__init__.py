"""Rating backends: each turns what the game measured into a ranking with uncertainty.

| module | what it holds |
|---|---|
| ``base`` | the backend interface (:class:`RatingBackend`), table rows, adjacent-pair confidences |
| ``config`` | every backend's config schema and range checks (``conf/rating/*.yaml``) |
| ``outcomes`` | how p(correct) becomes pairwise outcomes (relative, absolute, setter vs solver) |
| ``trueskill_backend``, ``bradley_terry``, ``elo``, ``ttt`` | the pairwise backends |
| ``irt`` | the item-response model fitted on the graded samples themselves |
| ``rerate`` | a finished run's games rated again from its event log (``python -m skate.rate``) |
"""
