"""Tests of SCP's building blocks: corpus, fragments and questions."""
