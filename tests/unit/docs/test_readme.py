"""The README is a user's first map: it links every feature page of the documentation."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_readme_links_every_feature_page() -> None:
    readme = (ROOT / "README.md").read_text()
    pages = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "features").glob("*.md"))
    assert pages, "no feature pages found"
    assert [page for page in pages if f"({page})" not in readme] == []
