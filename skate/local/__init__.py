"""Small real models on this machine, with no key and no GPU (``skate local``): the models and
where they come from (:mod:`skate.local.models`), llama.cpp's server built and run
(:mod:`skate.local.server`), installing, fetching and serving (:mod:`skate.local.serving`), and
a game played against the served models (:mod:`skate.local.play`). The command line is
:mod:`skate.cli.local`."""
