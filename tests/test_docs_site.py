"""The documentation site's checks (docs/hooks.py under `mkdocs build --strict`, as .ci/run builds docs/):
on a small site of its own, a mention of a page that does not exist, of the design notes outside the
repository, of a path that climbs out of it, or of a mechsym name the reference does not hold fails the
build, each named; a clean page builds, its mention of another page made a link."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocs_autorefs")

ROOT = Path(__file__).resolve().parent.parent


def build(tmp_path, page):
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "docs" / "index.md").write_text(page)
    (tmp_path / "docs" / "other.md").write_text("# Other\n\nA page.\n")
    (tmp_path / "mkdocs.yml").write_text(f"site_name: check\nstrict: true\nhooks:\n  - {ROOT / 'docs' / 'hooks.py'}\n"
                                         "plugins:\n  - autorefs\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


def test_a_bad_mention_fails_the_build_and_is_named(tmp_path):
    page = ("# Home\n\nSee docs/missing.md, the CONTRACTS file, `../shared/reference/spec.md` and "
            "`mechsym.core.results.NoSuchTable`.\n")
    run = build(tmp_path, page)
    assert run.returncode != 0
    for named in ("docs/missing.md, which does not exist", "names CONTRACTS, a file outside the repository",
                  "../shared/reference/spec.md, a path outside the repository", "mechsym.core.results.NoSuchTable"):
        assert named in run.stderr, run.stderr


def test_a_clean_page_builds_with_its_links(tmp_path):
    run = build(tmp_path, "# Home\n\nSee docs/other.md.\n\n```\nmechsym params docs/missing.md\n```\n")
    assert run.returncode == 0, run.stderr
    html = (tmp_path / "site" / "index.html").read_text()
    assert '<a href="other/">docs/other.md</a>' in html
