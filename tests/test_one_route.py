"""One way from sympy to code: outside mechsym/codegen no module of mechsym or mechanisms calls sympy's
lambdify, uses a sympy code printer, compiles code text itself (exec/eval/compile), or takes a printer of
mechsym.codegen apart from the renderers of a codegen spec. A new route from expressions to code therefore
goes through a Spec (mechsym.codegen.spec) and its printers, or this test names it."""
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# sympy's routes from expressions to code
SYMPY = ("lambdify", "autowrap", "ufuncify", "ccode", "pycode", "cxxcode", "fcode", "octave_code", "rust_code",
         "Printer")
# what a module outside mechsym/codegen may take from the C printer: renderers of a whole Spec
C_SOURCE_ALLOWED = {"render", "render_straight", "render_functions", "generate", "HEADER"}


def offences(path: Path) -> list[str]:
    """Where `path` turns expressions into code other than through a codegen spec."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("sympy") and any(w in (node.module + " " + " ".join(a.name for a in node.names))
                                                       for w in ("printing", "lambdify", "autowrap", "codegen")):
                found.append(f"{where}: from {node.module} import ...")
            if node.module == "mechsym.codegen.c_source":
                found += [f"{where}: takes c_source.{a.name}" for a in node.names if a.name not in C_SOURCE_ALLOWED]
        elif isinstance(node, ast.Import):
            found += [f"{where}: import {a.name}" for a in node.names
                      if a.name.startswith("sympy.") and any(w in a.name for w in ("printing", "utilities", "codegen"))]
        elif isinstance(node, ast.Attribute) and any(w in node.attr for w in SYMPY):
            found.append(f"{where}: .{node.attr}")
        elif isinstance(node, ast.Name) and node.id in ("exec", "eval", "compile"):
            found.append(f"{where}: {node.id}()")
    return found


def test_no_route_from_sympy_to_code_outside_codegen():
    files = [p for d in ("mechsym", "mechanisms") for p in sorted((ROOT / d).rglob("*.py"))
             if "codegen" not in p.relative_to(ROOT).parts[:2]]
    assert len(files) > 40
    found = [o for p in files for o in offences(p)]
    assert not found, "routes from sympy to code outside mechsym/codegen:\n" + "\n".join(found)


def test_the_check_finds_each_kind_of_route(tmp_path, monkeypatch):
    """The scan is not vacuous: each kind of route it forbids is found in a module written for the purpose."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    bad = tmp_path / "bad.py"
    bad.write_text("import sympy as sp\nfrom sympy.printing.c import C99CodePrinter\n"
                   "from mechsym.codegen.c_source import per_sample_function, render_straight\n"
                   "f = sp.lambdify([], [])\ng = sp.ccode(1)\nexec('x = 1')\n")
    found = offences(bad)
    assert [o.split(": ", 1)[1] for o in found] == [
        "from sympy.printing.c import ...", "takes c_source.per_sample_function", ".lambdify", ".ccode", "exec()"]
