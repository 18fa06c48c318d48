"""p(correct) estimators: each asks a player's graded samples on one task and says how often it is right.

| module | what it holds |
|---|---|
| ``base`` | the :class:`Sampler` (queries and grades through the game), the estimator interface (:class:`Estimator`, :class:`TaskContext`), the shared statistics (``binomial_std``, ``wilson``), :class:`EstimatorConfig`, the ``estimator`` registry |
| ``algorithm1`` | the SKATE paper's adaptive estimator (and the batch stopping rule's check) |
| ``fixed_n`` | exactly ``n`` samples per (task, player) |
| ``greedy`` | one answer at temperature 0 per (task, player), as ArxivRoll scores |
| ``logprobs`` | p(correct) read from the model's own probabilities (multiple-choice games) |
| ``decided``, ``adaptive`` | the joint estimators: sample until the outcomes are settled; sample where the ranking is unsure |

An estimator is one module here: its settings dataclass (whose ``check`` returns the problems of
its own fields, added to ``super().check()``'s) and its class, built from those settings (a
:class:`~skate.registry.Component`: ``FixedN(FixedNConfig(n=4))`` or ``FixedN(n=4)``, read as
``self.settings``, each default written once, in the schema), registered with
``@estimator.register("<name>", <Name>Config)`` (capabilities are class attributes of
:class:`~skate.estimators.base.Estimator`: ``joint``, ``uses_order``, ``decides_outcomes``, ...),
plus ``conf/estimator/<name>.yaml`` where it sets values of its own.
"""
