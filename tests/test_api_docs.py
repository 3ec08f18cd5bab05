"""Every public module, class, function, method and property of mechsym has a docstring, the API reference
of the documentation site (docs/reference/, written from the docstrings by mkdocstrings) takes in every
public module, and the repository cites its own conventions (docs/conventions.md), never a design file
that is not part of it. The site's build itself (`mkdocs build --strict`, .ci/run) fails on a broken link,
a name missing from the reference or a path outside the repository."""
import importlib
import inspect
import pkgutil
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import mechsym

ROOT = Path(__file__).resolve().parent.parent


def public_modules():
    names = ["mechsym"] + [m.name for m in pkgutil.walk_packages(mechsym.__path__, "mechsym.")]
    return [n for n in names if not any(part.startswith("_") for part in n.split(".")[1:])]


def public_objects():
    """(qualified name, object) of every public class and function defined in a public module, and of the
    public methods and properties of those classes."""
    for name in public_modules():
        module = importlib.import_module(name)
        yield name, module
        for attr, obj in vars(module).items():
            if attr.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if obj.__module__ != name:
                continue
            yield f"{name}.{attr}", obj
            if inspect.isclass(obj):
                for member, value in vars(obj).items():
                    fn = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
                    if not member.startswith("_") and inspect.isfunction(fn):
                        yield f"{name}.{attr}.{member}", fn


def test_every_public_name_has_a_docstring():
    missing = [name for name, obj in public_objects() if not (obj.__doc__ or "").strip()]
    assert not missing, "public names without a docstring:\n" + "\n".join(missing)


def test_api_reference_takes_in_every_public_module():
    """A `::: NAME` block renders NAME and, being a package, its submodules (mkdocs.yml: show_submodules),
    unless the block turns that off; every public module is under one."""
    blocks = []
    for page in (ROOT / "docs" / "reference").glob("*.md"):
        text = page.read_text()
        for match in re.finditer(r"^::: ([\w.]+)\n((?:    .*\n)*)", text, re.M):
            blocks.append((match[1], "show_submodules: false" not in match[2]))
    covered = [name for name in public_modules()
               if any(name == block or deep and name.startswith(block + ".") for block, deep in blocks)]
    assert blocks and sorted(set(public_modules()) - set(covered)) == []


def test_no_tracked_file_cites_the_design_input_outside_the_repository():
    """What users and code rely on is stated in docs/conventions.md; a citation of the outside design file
    (its name spelled in two parts here so that this file does not cite it) points a reader nowhere."""
    outside = "CONTRACTS" + ".md"
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True)
    citing = [name for name in tracked.stdout.decode().split("\0")
              if name and (ROOT / name).is_file() and outside.encode() in (ROOT / name).read_bytes()]
    assert citing == []
    assert (ROOT / "docs" / "conventions.md").is_file()
