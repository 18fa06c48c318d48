"""``python -m skate``: compose the Hydra config, play one game, print the ratings table."""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from skate.config import CONF_DIR, ConfigError, register_configs

register_configs()


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="config")
def _app(cfg: DictConfig) -> None:
    from skate.runner import format_table, run_game
    from skate.sandbox import SandboxUnavailable

    hc = HydraConfig.get()
    out_dir = Path(hc.runtime.output_dir)
    try:
        result = run_game(cfg, out_dir)
    except (ConfigError, SandboxUnavailable) as exc:
        what = "config error" if isinstance(exc, ConfigError) else "no usable sandbox"
        print(f"skate: {what}: {exc}", file=sys.stderr)
        if hc.mode == RunMode.MULTIRUN:
            # In a sweep, exiting would take the launcher (and the other jobs) down with it:
            # fail this job only; the sweep reports it once the others have finished.
            raise
        sys.exit(2)
    if cfg.print_table:
        print(format_table(result.table, result.summary))
        s = result.summary
        print(f"\n{s['tasks']} valid tasks from {s['attempts']} attempts, {s['samples']} answer samples, "
              f"{s['updates']} rating updates in {s['elapsed_s']:.1f}s")
        if s.get("sandbox_executions"):
            rate = s["sandbox_executions"] / max(s["elapsed_s"], 1e-9)
            print(f"sandbox executions: {s['sandbox_executions']} ({rate:.1f} per second)")
        if "usage" in s:
            u = s["usage"]["total"]
            print(f"model calls: {u['calls']} for {u['samples']} samples ({u['cached']} from the cache, "
                  f"{u['void']} void, {u['retries']} retries); tokens {u['prompt_tokens']} in, "
                  f"{u['completion_tokens']} out; cost ${u['cost_usd']:.4f}")
        if s.get("optimization"):
            from skate import events as ev
            from skate.optimize import format_results

            print("\nprompt optimisation before the game:")
            print(format_results([ev.Optimized(**{k: v for k, v in r.items()}) for r in s["optimization"]]))
        if s.get("prompt_optimization"):
            print("\nrating change from optimised prompts (optimised - default, 95% interval):")
            for r in s["prompt_optimization"]:
                print(f"  {r['model']:<20} {r['gain']:+8.2f}  [{r['lo']:+.2f}, {r['hi']:+.2f}]  "
                      f"(optimised {r['optimized']:.2f}, default {r['default']:.2f})")
        if "stopped" in s:
            print(f"stopped early: {s['stopped']}")
        print(f"results: {out_dir}")


def main() -> None:
    _app()


if __name__ == "__main__":
    main()
