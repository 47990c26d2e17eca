"""The import rules that keep the code livable (docs/design.md, "Layers"): no import cycle among
the project's modules, no upward import, research policy without I/O, no module over 600 lines.
The graph is built with `ast` from the files themselves, lazy (function-level) imports included."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 600

# Which layer each module belongs to, by dotted name (first matching prefix wins).
LAYER_OF = (
    ("utils.cli.", "cli"),
    ("utils.research.", "research"),
    ("utils.engine.", "engine"),
    ("utils.web.", "web"),
    ("utils.kb.", "kb"),
    ("utils.runtime", "app"),
    ("utils.sessions", "app"),
    ("utils.api", "app"),  # what the Python API and the MCP server share
    ("utils.steps", "app"),  # what each tool does in a step (the tool nodes' work)
    ("utils.", "base"),  # config, errors, text, urls, clients, checkout
    ("nodes", "nodes"),
    ("flow", "flow"),
    ("main", "main"),
    ("__main__", "entry"),
    ("__init__", "entry"),
)
LOWER = {"base", "research", "engine", "web", "kb", "app"}
ALLOWED = {  # layer -> layers it may import (the package __init__ files are empty)
    "base": {"base"},
    "research": {"base", "research"},
    "engine": {"base", "research", "engine"},
    "web": {"base", "web"},
    "kb": {"base", "web", "kb"},
    "app": LOWER,
    "cli": LOWER | {"cli"},
    "nodes": LOWER,
    "flow": LOWER | {"nodes"},
    "main": {"cli", "flow"},
    "entry": {"main", "flow", "app", "base"},  # __init__ is the Python API: it runs the graph
}
IO_MODULES = {"os", "io", "socket", "sqlite3", "subprocess", "shutil", "tempfile", "pathlib", "requests", "urllib3"}
IO_MODULES |= {"http", "chromadb", "google", "openai", "ddgs", "pypdf", "lxml", "threading", "concurrent"}


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    mods = {p.stem: p for p in root.glob("*.py")}
    for p in (root / "utils").rglob("*.py"):
        parts = p.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = p
    return mods


def _in_main_guard(node: ast.AST, parents: dict) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return True
    return False


def imports_of(name: str, path: Path, mods: dict[str, Path]) -> tuple[set[str], set[str]]:
    """(project modules imported, top-level external modules imported) by one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    is_pkg = path.name == "__init__.py"
    package = name.split(".") if is_pkg else name.split(".")[:-1]
    if name in ("__init__", "__main__"):
        package = []
    project, external = set(), set()
    for node in ast.walk(tree):
        if _in_main_guard(node, parents):  # the checkout bootstrap in main.py, run as a script only
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                external.add(a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                top = (node.module or "").split(".")[0]
                assert top not in ("utils", "nodes", "flow", "main", "sleuth"), (
                    f"{name}: absolute project import '{node.module}' (use a relative import)"
                )
                external.add(top)
                continue
            base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            target = base + (node.module.split(".") if node.module else [])
            for a in node.names:
                full = ".".join([*target, a.name])
                mod = full if full in mods else ".".join(target)
                assert mod in mods or mod == "", f"{name}: import of unknown project module {mod}"
                if mod and mod != name:
                    project.add(mod)
    return project, external


def layer(name: str) -> str:
    for prefix, lay in LAYER_OF:
        if name == prefix.rstrip(".") or name.startswith(prefix):
            return lay
    raise AssertionError(f"{name} has no layer: add it to LAYER_OF and to docs/design.md")


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    mods = project_modules(root)
    return {n: imports_of(n, p, mods)[0] for n, p in mods.items()}


def find_cycle(g: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(g.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if m not in state and (found := visit(m)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(g):
        if n not in state and (found := visit(n)):
            return found
    return None


def upward_imports(g: dict[str, set[str]]) -> list[str]:
    bad = []
    for n, deps in g.items():
        for m in deps:
            same = layer(m) == layer(n) and layer(n) not in ("main", "entry")
            if layer(m) not in ALLOWED[layer(n)] and not same:
                bad.append(f"{n} ({layer(n)}) imports {m} ({layer(m)})")
    return sorted(bad)


def test_no_import_cycles():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_upward_imports():
    bad = upward_imports(graph())
    assert not bad, "\n".join(bad)


def test_nothing_imports_main_flow_or_nodes_from_utils():
    bad = [f"{n} -> {m}" for n, deps in graph().items() if n.startswith("utils") for m in deps if "." not in m]
    assert not bad, bad


def test_research_policy_does_no_io():
    mods = project_modules()
    for n, p in mods.items():
        if layer(n) == "research":
            _, external = imports_of(n, p, mods)
            assert not (external & IO_MODULES), f"{n} imports I/O modules {sorted(external & IO_MODULES)}"


def test_no_module_over_600_lines():
    long = {n: len(p.read_text().splitlines()) for n, p in project_modules().items()}
    assert not {n: k for n, k in long.items() if k > MAX_LINES}, sorted(long.items(), key=lambda x: -x[1])[:5]


def test_the_checker_catches_a_utility_that_imports_the_graph(tmp_path):
    """The rules can fail: in a tiny tree where utils/text.py imports nodes, both are reported."""
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "nodes.py").write_text("from .utils.text import fold\n")
    (tmp_path / "utils" / "text.py").write_text("def fold(s):\n    from ..nodes import Node\n    return s\n")
    g = graph(tmp_path)
    assert find_cycle(g) in (["nodes", "utils.text", "nodes"], ["utils.text", "nodes", "utils.text"])
    assert upward_imports(g) == ["utils.text (base) imports nodes (nodes)"]


def test_only_the_tool_registry_spells_an_action_name():
    """Each action is named once, in utils/registry.py; code, bench scripts and prompts use its constants
    (a tool added to the registry reaches the graph, the schema, the prompt and the policy from there)."""
    import re

    from sleuth.utils.registry import ACTIONS

    spelled = re.compile(r"\b(" + "|".join(map(re.escape, ACTIONS)) + r")\b")
    files = [*ROOT.glob("*.py"), *(ROOT / "utils").rglob("*.py"), *(ROOT / "bench").glob("*.py")]
    files += [*(ROOT / "prompts").glob("*.md")]
    bad = [
        f"{p.relative_to(ROOT)}:{i}: {m.group(0)}"
        for p in files
        if p != ROOT / "utils" / "registry.py"
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        for m in spelled.finditer(line)
    ]
    assert not bad, "an action name spelled outside utils/registry.py:\n" + "\n".join(bad)


def _literals(path: Path):
    """(line, string constant, parent node) for every string constant of a module, docstrings aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            parent = parents.get(node)
            if isinstance(parent, ast.Expr):
                continue  # a docstring
            yield node.lineno, node.value, parent, parents


# Words that are a stop reason and also something else: a setting's name, a UI field, a session status.
OTHER_MEANINGS = {("utils/config.py", "time_limit"), ("utils/api.py", "time_limit"), ("utils/cli/ui.py", "budget")}
STATUS_TOO = {"interrupted"}


def test_only_the_loop_data_spells_a_stop_reason_or_a_text_form():
    """Stop reasons and the forms of a text (snippet, page, kb) are enums spelled once, in
    utils/research/loopdata.py; code and bench scripts use their members, so a misspelt
    `stop_reason` or `form` cannot compare unequal in silence."""
    from sleuth.utils.research.loopdata import Form, StopReason

    reasons, forms = set(StopReason), set(Form)
    files = [*ROOT.glob("*.py"), *(ROOT / "utils").rglob("*.py"), *(ROOT / "bench").glob("*.py")]
    bad = []
    for p in files:
        rel = str(p.relative_to(ROOT))
        if rel == "utils/research/loopdata.py":
            continue
        for line, value, parent, parents in _literals(p):
            if value in reasons and (rel, value) not in OTHER_MEANINGS and value not in STATUS_TOO:
                bad.append(f"{rel}:{line}: stop reason {value!r}")
            if value not in forms:
                continue
            # a form: compared with or given as an item's or a fact's `form`
            holder = parents.get(parent) if isinstance(parent, ast.Tuple) else parent
            if isinstance(holder, ast.keyword) and holder.arg == "form":
                bad.append(f"{rel}:{line}: form {value!r}")
            elif isinstance(holder, ast.Compare) and any(
                isinstance(x, ast.Attribute) and x.attr == "form" for x in [holder.left, *holder.comparators]
            ):
                bad.append(f"{rel}:{line}: form {value!r}")
    assert not bad, "spelled outside utils/research/loopdata.py (use StopReason / Form):\n" + "\n".join(bad)
