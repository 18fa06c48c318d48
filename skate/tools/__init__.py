"""The libraries behind skate's analysis commands, above the runner: they compose the config,
play or read finished runs, and are called by the command line (:mod:`skate.cli`), which holds
only argument handling."""
