"""skate: LLMs evaluate one another by setting verifiable tasks for each other."""

__version__ = "0.1.0"
