"""MkDocs hooks of the documentation site (mkdocs.yml): the pages speak of one another as `docs/NAME.md` and
of the API by dotted names (`mechsym.studies.sweep.sweep`), in plain Markdown that reads well on its own;
the site turns those mentions into links, and a mention that leads nowhere is a warning, which the strict
build turns into a failure:

- `docs/NAME.md` (in text or a code span, pages and docstrings alike) links to that page; a page that does
  not exist is a warning;
- a code span that is a whole dotted name under `mechsym.` or `mechanisms.` links to its entry in the API
  reference; a name that is not there is a warning (autorefs reports it);
- a mention of a file outside the repository (a relative path that climbs above it, the design notes the
  repository does not contain) is a warning: what users rely on is stated in docs/conventions.md.
"""
from __future__ import annotations

import importlib
import logging
import posixpath
import re
from pathlib import Path

from mkdocs.utils import get_relative_url

log = logging.getLogger("mkdocs.plugins.mechsym")

PAGE = re.compile(r"\bdocs/((?:[\w-]+/)*[\w-]+\.(?:md|ipynb))\b")
API_NAME = re.compile(r"<code>((?:mechsym|mechanisms)(?:\.[A-Za-z_]\w*)+)</code>")
OUTSIDE_FILES = ("CONTRACTS", "DESIGN.md")  # the design notes, which the repository does not hold
CLIMB = re.compile(r"(?:\.\./)+[\w./-]+")
TAG = re.compile(r"(<[^>]+>)")
SKIPPED = {"pre", "a", "h1", "h2", "h3", "h4", "h5", "h6", "autoref"}
BRACKETS = re.compile(r'<autoref [^>]*\bidentifier="([^"]*)"[^>]*>(.*?)</autoref>', re.S)
IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*")


def top_level_names() -> dict[str, str]:
    """`mechsym.NAME` of each name the package loads on first use -> the module that defines it."""
    lazy = importlib.import_module("mechsym")._LAZY
    return {f"mechsym.{name}": f"{module}.{name}" for name, module in lazy.items()}


TOP_LEVEL = top_level_names()


def on_page_content(html, page, config, files):
    """Warn of mentions of files outside the repository; link the mentions of pages and of API names outside
    code blocks, links and headings."""
    parts = TAG.split(html)
    open_tags: list[str] = []
    for i, part in enumerate(parts):
        if part.startswith("<"):
            name = part.strip("</>").split()[0].lower() if part.strip("</>") else ""
            if name in SKIPPED:
                if part.startswith("</"):
                    if name in open_tags:
                        open_tags.remove(name)
                elif not part.endswith("/>"):
                    open_tags.append(name)
            continue
        warn_outside(part, page, config)
        if not open_tags:
            parts[i] = PAGE.sub(lambda m: page_link(m, page, files), part)
    html = "".join(parts)
    return link_api_names(BRACKETS.sub(literal_brackets, html))


def literal_brackets(match) -> str:
    """Brackets in a docstring's formula (`[H -J^T; J 0][v+; Lam]`) as written: Markdown took them for a
    cross-reference, but only a dotted name is one."""
    return match[0] if IDENTIFIER.fullmatch(match[1]) else f"[{match[2]}][{match[1]}]"


def warn_outside(text, page, config):
    """Warn of each mention in `text` of a file outside the repository."""
    for name in OUTSIDE_FILES:
        if re.search(rf"\b{name}\b", text):
            log.warning("%s names %s, a file outside the repository: cite docs/conventions.md",
                        page.file.src_path, name)
    root = Path(config["docs_dir"]).parent
    here = posixpath.dirname("docs/" + page.file.src_path)
    for path in CLIMB.findall(text):
        inside = posixpath.normpath(posixpath.join(here, path.rstrip(".")))
        if inside.startswith("..") or not (root / inside).exists():
            log.warning("%s names %s, a path outside the repository", page.file.src_path, path)


def page_link(match, page, files) -> str:
    """A link to the page `docs/NAME` from `page`; the text as it was, and a warning, where it does not exist."""
    target = files.get_file_from_path(match[1])
    if target is None:
        log.warning("%s names docs/%s, which does not exist", page.file.src_path, match[1])
        return match[0]
    return f'<a href="{get_relative_url(target.url, page.url)}">{match[0]}</a>'


def link_api_names(html: str) -> str:
    """Each code span that is a dotted mechsym name, outside code blocks, links and headings, made a
    cross-reference that autorefs resolves (or reports). In a table the reference is optional: a table may
    list the names a module had before it moved."""
    out, depth, tables, last = [], 0, 0, 0
    for match in re.finditer(r"<(/?)(pre|a|h[1-6]|autoref|table)\b[^>]*>|" + API_NAME.pattern, html):
        if match[2] == "table":
            tables += -1 if match[1] else 1
            continue
        if match[2]:
            depth += -1 if match[1] else 1
            continue
        if depth > 0:
            continue
        name = match[3]
        optional = " optional" if tables else ""
        out.append(html[last:match.start()])
        out.append(f'<autoref identifier="{TOP_LEVEL.get(name, name)}"{optional}>{match[0]}</autoref>')
        last = match.end()
    out.append(html[last:])
    return "".join(out)
