"""docs/architecture.md cannot go stale silently: it names every module of mechsym under the layer that holds
it, in the order tests/test_layers.py enforces, and every file of the C runtime; and everything it names (a
dotted name of mechsym or mechanisms, a runtime file, a test, a page) exists. Each check is shown to fail on
a page that breaks it."""
import importlib
import re
from pathlib import Path

import pytest

import test_layers

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"
RUNTIME = ROOT / "mechsym" / "codegen" / "runtime"
PRINTED = {"ms_constants.h"}  # runtime files printed from mechsym.codegen.constants, not stored
SPAN = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(r"(?:mechsym|mechanisms)(?:\.[A-Za-z_]\w*)+")
HEADING = re.compile(r"^### (.*)$", re.M)


def section(text: str, title: str) -> str:
    """The text of the `## title` section, up to the next `## ` heading."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"docs/architecture.md has no section '## {title}'"
    return match[1]


def layer_blocks(text: str) -> list[tuple[list[str], str]]:
    """(packages of mechsym the heading names, the block's text) of each `### ` heading of the Layers section,
    in the page's order; a heading naming no package of mechsym (the shipped models) is left out."""
    layers = section(text, "The layers")
    heads = list(HEADING.finditer(layers))
    blocks = []
    for i, head in enumerate(heads):
        packages = re.findall(r"`mechsym/(\w+)/`", head[1])
        if packages:
            end = heads[i + 1].start() if i + 1 < len(heads) else len(layers)
            blocks.append((packages, layers[head.end():end]))
    return blocks


def modules(root: Path) -> list[str]:
    """Every module and subpackage of mechsym below its layer packages (the layer packages themselves and the
    package's own __init__ and __main__ are named by their headings)."""
    found = []
    for path in sorted((root / "mechsym").rglob("*.py")):
        name = test_layers.module_name(path, root)
        if name.count(".") >= 2:
            found.append(name)
    return found


def unplaced_modules(text: str, root: Path) -> list[str]:
    """The modules of mechsym that the page does not name as a code span under their own layer's heading."""
    named = {}
    for packages, block in layer_blocks(text):
        for span in SPAN.findall(block):
            if DOTTED.fullmatch(span) and span.split(".")[0] == "mechsym":
                named.setdefault(span, set()).update(packages)
    return [m for m in modules(root) if m.split(".")[1] not in named.get(m, ())]


def layer_order_problems(text: str, root: Path) -> list[str]:
    """Where the page's layer headings disagree with tests/test_layers.py: a package missing, a package under
    a heading with a package of another layer, or the headings out of the layers' order."""
    problems, last = [], -1
    blocks = layer_blocks(text)
    listed = [p for packages, _ in blocks for p in packages]
    present = sorted(p.parent.name for p in (root / "mechsym").glob("*/__init__.py"))
    problems += [f"mechsym/{p}/ has no heading" for p in present if p not in listed]
    problems += [f"mechsym/{p}/ is not a package" for p in listed if p not in present]
    problems += [f"mechsym/{p}/ under more than one heading" for p in sorted(set(listed)) if listed.count(p) > 1]
    for packages, _ in blocks:
        levels = {test_layers.layer(f"mechsym.{p}") for p in packages}
        if len(levels) > 1:
            problems.append(f"{', '.join(packages)}: one heading for packages of different layers")
        elif min(levels) <= last:
            problems.append(f"{', '.join(packages)}: below the heading before it in tests/test_layers.py's order")
        else:
            last = min(levels)
    return problems


def _resolves(name: str) -> bool:
    """Whether a dotted name is a module, or an attribute reached from one."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attribute in parts[i:]:
            if not hasattr(obj, attribute):
                return False
            obj = getattr(obj, attribute)
        return True
    return False


def missing_names(text: str, root: Path) -> list[str]:
    """The dotted names, runtime files, tests and pages the page names that do not exist. In the table of old
    import paths only the new column is read (the old names are gone by design)."""
    old = section(text, "Old import paths")
    spans = SPAN.findall(text.replace(old, ""))
    for row in old.splitlines():
        cells = row.strip("|").split("|")
        if row.startswith("|") and len(cells) >= 2:
            spans += SPAN.findall(cells[1])
    missing = [s for s in spans if DOTTED.fullmatch(s) and not _resolves(s)]
    runtime = {p.name for p in (root / "mechsym" / "codegen" / "runtime").iterdir()} | PRINTED
    missing += [s for s in spans if re.fullmatch(r"(ms_\w+|hard_contact)\.[ch]", s) and s not in runtime]
    for path, test in re.findall(r"\b(tests/[\w/]+\.py)(?:::(\w+))?", text):
        if not (root / path).is_file():
            missing.append(path)
        elif test and not re.search(rf"^def {test}\(", (root / path).read_text(), re.M):
            missing.append(f"{path}::{test}")
    missing += [p for p in re.findall(r"\bdocs/[\w/-]+\.md\b", text) if not (root / p).is_file()]
    return sorted(set(missing))


def unnamed_runtime_files(text: str, root: Path) -> list[str]:
    """The files of the C runtime (and those printed into it) that the page does not name as a code span."""
    spans = set(SPAN.findall(section(text, "The backend")))
    files = {p.name for p in (root / "mechsym" / "codegen" / "runtime").iterdir() if p.suffix in (".h", ".c")}
    return sorted(f for f in files | PRINTED if f not in spans)


# -- the page as it is --------------------------------------------------------------------------------------
def test_every_module_is_named_under_its_layer():
    missing = unplaced_modules(PAGE.read_text(), ROOT)
    assert not missing, ("modules of mechsym not named (as `mechsym.x.y`) under their layer's heading in "
                         "docs/architecture.md:\n" + "\n".join(missing))


def test_the_layers_are_in_the_order_the_layer_test_enforces():
    problems = layer_order_problems(PAGE.read_text(), ROOT)
    assert not problems, "docs/architecture.md's layers:\n" + "\n".join(problems)


def test_every_file_of_the_c_runtime_is_described():
    missing = unnamed_runtime_files(PAGE.read_text(), ROOT)
    assert not missing, "C runtime files not named in docs/architecture.md (The C runtime):\n" + "\n".join(missing)


def test_everything_the_page_names_exists():
    missing = missing_names(PAGE.read_text(), ROOT)
    assert not missing, "docs/architecture.md names what does not exist:\n" + "\n".join(missing)


# -- the checks are not vacuous -----------------------------------------------------------------------------
def _tree(tmp_path) -> Path:
    """A package of three layers: core (errors), codegen (spec, runtime/ms_a.h) and planar (model)."""
    for rel in ("mechsym/__init__.py", "mechsym/core/__init__.py", "mechsym/core/errors.py",
                "mechsym/codegen/__init__.py", "mechsym/codegen/spec.py", "mechsym/planar/__init__.py",
                "mechsym/planar/model.py", "mechsym/codegen/runtime/ms_a.h"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    return tmp_path


GOOD = """# Architecture

## The layers

### 1. `mechsym/core/`: the bottom

- `mechsym.core.errors`: errors.

### 2. `mechsym/codegen/`: code

- `mechsym.codegen.spec`: the spec.

### 3. `mechsym/planar/`: mechanisms

- `mechsym.planar.model`: the declaration.

## The backend

| `ms_a.h` | a | `ms_constants.h` | printed |

## Old import paths

| old | new |
|---|---|
| `mechsym.model` | `mechsym.planar.model` |
"""


def test_a_good_page_passes(tmp_path):
    root = _tree(tmp_path)
    assert unplaced_modules(GOOD, root) == [] and layer_order_problems(GOOD, root) == []
    assert unnamed_runtime_files(GOOD, root) == [] and missing_names(GOOD, root) == []
    also = GOOD.replace("- `mechsym.codegen.spec`: the spec.\n",
                        "- `mechsym.codegen.spec`, beside `mechsym.planar.model`.\n")
    assert unplaced_modules(also, root) == []   # a module may be named elsewhere too, once under its layer


@pytest.mark.parametrize("edit, check, found", [
    (("- `mechsym.planar.model`: the declaration.\n", ""), unplaced_modules, ["mechsym.planar.model"]),
    (("- `mechsym.planar.model`: the declaration.\n", "- `mechsym.codegen.spec`.\n"),
     unplaced_modules, ["mechsym.planar.model"]),
    (("### 2. `mechsym/codegen/`: code", "### 2. `mechsym/codegen/` and `mechsym/planar/`: code"),
     layer_order_problems, ["mechsym/planar/ under more than one heading",
                            "codegen, planar: one heading for packages of different layers"]),
    (("### 1. `mechsym/core/`: the bottom", "### 1. `mechsym/studies/`: the bottom"), layer_order_problems,
     ["mechsym/core/ has no heading", "mechsym/studies/ is not a package",
      "codegen: below the heading before it in tests/test_layers.py's order",
      "planar: below the heading before it in tests/test_layers.py's order"]),
    (("| `ms_a.h` | a ", ""), unnamed_runtime_files, ["ms_a.h"]),
])
def test_each_check_finds_what_breaks_it(tmp_path, edit, check, found):
    root = _tree(tmp_path)
    page = GOOD.replace(*edit)
    assert page != GOOD
    assert check(page, root) == found


def test_a_misordered_layer_is_found(tmp_path):
    root = _tree(tmp_path)
    page = GOOD.replace("### 2. `mechsym/codegen/`: code\n\n- `mechsym.codegen.spec`: the spec.\n\n", "")
    page = page.replace("## The backend",
                        "### 4. `mechsym/codegen/`: code\n\n- `mechsym.codegen.spec`.\n\n## The backend")
    assert layer_order_problems(page, root) == ["codegen: below the heading before it in tests/test_layers.py's order"]


def test_names_that_do_not_exist_are_found(tmp_path):
    root = _tree(tmp_path)
    (root / "tests").mkdir()
    (root / "tests" / "test_layers.py").write_text("def test_here():\n    pass\n")
    page = GOOD.replace("- `mechsym.core.errors`: errors.",
                        "- `mechsym.core.errors.NoSuchError`, `ms_gone.h`, tests/test_layers.py::no_such_test, "
                        "tests/test_gone.py, docs/gone.md")
    page = page.replace("| `mechsym.planar.model` |", "| `mechsym.planar.gone` |")
    assert missing_names(page, root) == sorted(["mechsym.core.errors.NoSuchError", "ms_gone.h", "mechsym.planar.gone",
                                                "tests/test_layers.py::no_such_test", "tests/test_gone.py",
                                                "docs/gone.md"])
    assert missing_names(GOOD, root) == []      # the old column's `mechsym.model` is not read
