"""SCP (sequencing, cloze, prediction): questions from documents no model has seen (issue 12).

This package so far holds only SCP's building blocks: :mod:`.corpus` (documents read from a
folder, plus the shipped PEP corpus), :mod:`.fragments` (paragraphs, sentences and the fragments
questions are cut from) and :mod:`.questions` (building and checking the three question types).
The game itself is still to come (issue 12), so nothing is registered here yet, and importing
this package stays cheap: the submodules are imported only when asked for.
"""
