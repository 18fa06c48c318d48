"""MathQuiz's word problems: the template language, the story families, the reader and the writer.

Start at :mod:`skate.games.mathquiz.generator`: its docstring describes how problems are written
and read, and it re-exports the public names. Each module imports only from those above it in
this table.

| module | what it holds |
|---|---|
| ``templates`` | the vocabulary, the operations (:data:`WEIGHTS`, their arithmetic), the sentence-template language, :class:`Family` |
| ``families`` | the ten story families' templates: :data:`FAMILIES`, :data:`KINDS` |
| ``reader`` | :func:`solve` and :func:`kind_of` (read a question back), :func:`question_difficulty` |
| ``writer`` | :func:`generate_question` (worked backwards from the target), :func:`wrong_answers` |
"""
