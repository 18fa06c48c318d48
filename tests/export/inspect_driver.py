"""Run exported Inspect tasks and print each log's model, task and accuracy as JSON.

Runs in Inspect's own environment (``.venv/inspect``, made by ``scripts/setup.sh test``), never
in skate's: ``.venv/inspect/bin/python tests/export/inspect_driver.py LOG_DIR MODEL[,MODEL] FILE...``.
Not a test module: tests/export/test_export.py starts it.
"""

import json
import sys

from inspect_ai import eval as inspect_eval

log_dir, models, *files = sys.argv[1:]
logs = inspect_eval(files, model=models.split(","), display="none", log_dir=log_dir)
print(
    json.dumps(
        [
            {
                "status": log.status,
                "model": log.eval.model,
                "task": log.eval.task,
                "accuracy": log.results.scores[0].metrics["accuracy"].value if log.results else None,
            }
            for log in logs
        ]
    )
)
