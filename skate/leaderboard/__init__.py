"""A standing leaderboard: a bank of the tasks players wrote, and the models rated on it.

``skate leaderboard import RUN_DIR...`` banks every rated task of finished runs, with every
model's graded samples on each (:mod:`skate.leaderboard.store`, a SQL database: a SQLite file by
default, PostgreSQL when given its URL); ``skate leaderboard refit`` fits the item-response model
over the bank (:mod:`skate.leaderboard.fit`: abilities and task difficulties, on a scale anchored
so that models already rated keep their scores); ``skate leaderboard show`` prints the board
(``--html``: also as one static page, :mod:`skate.leaderboard.page`).
"""
