"""Run loggers (the ``logger`` config group): progress on the console, and Weights & Biases.

| module | what it holds |
|---|---|
| ``base`` | the hooks the runner and engine call (:class:`RunLogger`), :class:`LoggerConfig`, ``logger=none``, the ``logger`` registry and ``logs_to_wandb`` |
| ``console`` | ``logger=console``: a rich progress bar on a terminal, plain log lines otherwise (CI, pipes, log files) |
| ``wandb_logger`` | ``logger=wandb`` (the default): the console's progress plus one W&B run per game, offline unless configured otherwise; ``ratings_table``, ``log_figures`` and ``log_sweep`` |

A logger is one module here: its settings dataclass and its class, registered with
``@logger.register("<name>", <Name>Config)`` (its capability ``logs_to_wandb`` a class
attribute), plus ``conf/logger/<name>.yaml``.
"""
