"""Answer formats: small helpers a game picks to make a query and grade a reply.

- :mod:`skate.answers.choice`: multiple choice. A query shows the task and a shuffled set of
  options, the real answer among them; a reply is the index of an option.
- :mod:`skate.answers.exact`: a free-form answer compared with the known one after
  normalising (numbers: separators, ``\\boxed{}``, "the answer is ...").

The engine and the estimators know none of them: they ask the game for a query and a grade.
"""
