"""The docs: the site under docs/ builds in strict mode, and the README stays short and links right.

``mkdocs build --strict`` (mkdocs.yml turns a broken link or anchor and a page left out of the
nav into warnings, which strict mode makes errors) is run into a temporary folder, once as the
docs are and once on a copy with a broken link and a page missing from the nav, which must fail.
The README (and BENCHMARKS.md, the index of the benchmark pages) may only link to files that
exist, and to headings that exist in them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import markdown
import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 250
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_docs_build_in_strict_mode(tmp_path):
    res = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert res.returncode == 0, f"mkdocs build --strict failed:\n{res.stdout}\n{res.stderr}"
    assert (tmp_path / "site" / "index.html").is_file()


def test_strict_build_fails_on_a_broken_link_and_a_page_missing_from_the_nav(tmp_path):
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    index = tmp_path / "docs" / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + "\n[gone](no-such-page.md)\n", encoding="utf-8")
    (tmp_path / "docs" / "orphan.md").write_text("# Not in the nav\n", encoding="utf-8")
    res = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert res.returncode != 0
    out = res.stdout + res.stderr
    assert "no-such-page.md" in out and "orphan.md" in out, out


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines; keep it to {README_MAX_LINES} (move the rest to docs/)"
    )


def _anchors(page: Path) -> set[str]:
    """The heading ids mkdocs gives a page (the same toc extension and slugs)."""
    md = markdown.Markdown(extensions=["toc", "tables", "fenced_code"])
    html = md.convert(page.read_text(encoding="utf-8"))
    return set(re.findall(r'id="([^"]+)"', html))


@pytest.mark.parametrize("name", ["README.md", "BENCHMARKS.md"])
def test_relative_links_resolve(name):
    source = ROOT / name
    text = source.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # links inside code blocks are not links
    broken = []
    targets = LINK.findall(text)
    assert targets, f"{name} links to nothing"
    for target in targets:
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        page = (source.parent / path).resolve() if path else source
        if not page.is_file():
            broken.append(f"{target}: no file {page.relative_to(ROOT) if page.is_relative_to(ROOT) else page}")
        elif anchor and page.suffix == ".md" and anchor not in _anchors(page):
            broken.append(f"{target}: no heading #{anchor} in {page.relative_to(ROOT)}")
    assert not broken, f"broken links in {name}:\n" + "\n".join(broken)
