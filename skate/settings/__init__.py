"""A run's settings: the config's schemas, composed with Hydra and built once into typed
settings (:mod:`skate.settings.config`, :mod:`skate.settings.compose`), a finished run's settings read
back (:mod:`skate.settings.recorded`), and the one assembly of a run's parts from them
(:mod:`skate.settings.build`)."""
