"""``skate sandbox FILE [overrides...]``: run one program through the configured sandbox.

Prints what the program printed (stdout to stdout, stderr to stderr), then one line on stderr
with the outcome, the time and the sandbox used. Takes the same Hydra overrides as ``python -m
skate``, e.g. ``sandbox=bwrap sandbox.limits.timeout_s=2``. ``FILE`` may be ``-`` for stdin.

Exit status: 0 the program ran fine; 1 it failed (error, time, memory or output limit);
2 bad usage or configuration; 3 the sandbox itself failed or is unavailable.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from pathlib import Path

from hydra.errors import HydraException
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from skate.cli import parse_with_overrides
from skate.cli.compose import compose_config
from skate.errors import ConfigError
from skate.sandbox.base import Outcome
from skate.sandbox.config import SandboxConfig, validate_sandbox
from skate.sandbox.jail import SandboxUnavailable
from skate.settings.build import build_sandbox


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="skate sandbox", description="Run a Python file through the configured sandbox and report what happened."
    )
    parser.add_argument("file", help="the program to run ('-' reads it from stdin)")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. sandbox=bwrap sandbox.limits.timeout_s=2")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument("-v", "--verbose", action="store_true", help="log which sandbox is chosen")
    args = parse_with_overrides(parser, argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )

    try:
        code = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"skate.sandbox: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2

    try:
        cfg = compose_config(args.overrides)
        settings = OmegaConf.to_object(cfg.sandbox)  # the composed section, typed
        if not isinstance(settings, SandboxConfig):
            raise ConfigError(f"sandbox: a section of settings is expected, not {settings!r}")
        validate_sandbox(settings)
    except (HydraException, OmegaConfBaseException, ConfigError, ValueError) as exc:
        print(f"skate.sandbox: config error: {exc}", file=sys.stderr)
        return 2

    try:
        sandbox = build_sandbox(settings)
    except SandboxUnavailable as exc:
        print(f"skate.sandbox: no usable sandbox: {exc}", file=sys.stderr)
        return 3
    except ValueError as exc:
        print(f"skate.sandbox: config error: {exc}", file=sys.stderr)
        return 2
    try:
        res = sandbox.run(code)
    finally:
        sandbox.close()

    if args.json:
        print(
            json.dumps(
                {
                    "outcome": res.outcome.value,
                    "stdout": res.stdout,
                    "stderr": res.stderr,
                    "returncode": res.returncode,
                    "duration_s": round(res.duration_s, 6),
                    "sandbox": sandbox.name,
                    "limits": dataclasses.asdict(sandbox.limits),
                }
            )
        )
    else:
        sys.stdout.write(res.stdout)
        sys.stdout.flush()
        if res.stderr:
            sys.stderr.write(res.stderr if res.stderr.endswith("\n") else res.stderr + "\n")
        print(
            f"-- {res.outcome.value} in {res.duration_s:.3f} s (sandbox {sandbox.name}, exit status {res.returncode})",
            file=sys.stderr,
        )
    if res.outcome is Outcome.OK:
        return 0
    return 3 if res.outcome is Outcome.SANDBOX_ERROR else 1
