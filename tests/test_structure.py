"""The shape of the code: no import circle, nothing from scripts/ below it, short functions and lines."""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("model", "dataset", "trainer", "scripts")
LIBRARY = ("model", "dataset", "trainer")  # what scripts/ builds on; it may not import scripts/


def project_modules() -> dict:
    """module name -> path, for every .py file of the project's packages."""
    out = {}
    for pkg in PACKAGES:
        for name in sorted(os.listdir(os.path.join(ROOT, pkg))):
            if name.endswith(".py") and name != "__init__.py":
                out[f"{pkg}.{name[:-3]}"] = os.path.join(ROOT, pkg, name)
    return out


def imports_of(path: str, modules) -> set:
    """The project modules a file imports, at any depth of the file (function-level imports count too)."""
    found = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        found |= {n for n in names if n in modules}
    return found


def find_cycle(graph: dict):
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == "open":
                return stack[stack.index(n):] + [n]
            if n not in state:
                cycle = visit(n)
                if cycle:
                    return cycle
        state[m] = "done"
        stack.pop()
        return None

    for m in sorted(graph):
        if m not in state:
            cycle = visit(m)
            if cycle:
                return cycle
    return None


def test_no_import_circle_and_nothing_from_scripts_below_it():
    modules = project_modules()
    graph = {m: imports_of(p, modules) - {m} for m, p in modules.items()}
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))
    upward = {m: sorted(n for n in deps if n.startswith("scripts.")) for m, deps in graph.items()
              if m.startswith(LIBRARY)}
    assert not any(upward.values()), {m: d for m, d in upward.items() if d}


def test_the_checker_finds_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def functions(path):
    tree = ast.parse(open(path, encoding="utf-8").read())
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


MAX_LINE = 110  # the line length of trainer/, model/ and dataset/


def test_short_functions_and_lines_in_the_library():
    long_functions, long_lines = [], []
    for m, path in project_modules().items():
        if not m.startswith(LIBRARY):
            continue
        if m.startswith("trainer."):
            long_functions += [f"{m}.{f.name} ({f.end_lineno - f.lineno + 1} lines)" for f in functions(path)
                               if f.end_lineno - f.lineno + 1 > 80]
        template = False  # the chat template's source is the shipped template, byte for byte
        for i, line in enumerate(open(path, encoding="utf-8").read().split("\n"), start=1):
            template = template or line.startswith("CHAT_TEMPLATE = ")
            if template and line.lstrip().startswith('"""'):
                template = False
            if len(line) > MAX_LINE and not template:
                long_lines.append(f"{m}:{i} ({len(line)})")
    assert not long_functions, long_functions
    assert not long_lines, long_lines


# the tutorial's size: what a reader can hold (the README's "Read the code" path runs through these files)
MAX_LINES = {"trainer/train_agent.py": 900, "trainer/rollout_engine.py": 300, "README.md": 250}
MAX_DOCS_FILES, MAX_DOCS_BYTES = 40, 3_000_000


def test_the_lesson_files_stay_short():
    too_long = {}
    for rel, limit in MAX_LINES.items():
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            n = len(f.read().splitlines())
        if n > limit:
            too_long[rel] = f"{n} lines, limit {limit}"
    assert not too_long, too_long


def test_docs_hold_prose_and_figures_each_linked_from_the_readme():
    docs = os.path.join(ROOT, "docs")
    files = [os.path.join(dirpath, name) for dirpath, _, names in os.walk(docs) for name in names]
    assert len(files) <= MAX_DOCS_FILES, f"docs/ has {len(files)} files, limit {MAX_DOCS_FILES}"
    size = sum(os.path.getsize(p) for p in files)
    assert size <= MAX_DOCS_BYTES, f"docs/ holds {size:,} bytes, limit {MAX_DOCS_BYTES:,}"
    assert not [p for p in files if os.path.dirname(p) != docs], "docs/ has subfolders: raw run output"
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    unlinked = [name for name in sorted(os.listdir(docs)) if name.endswith(".md") and f"](docs/{name})" not in readme]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


def test_rl_train_epoch_reads_on_one_screen():
    (epoch,) = [f for f in functions(project_modules()["trainer.train_agent"]) if f.name == "rl_train_epoch"]
    assert epoch.end_lineno - epoch.lineno + 1 <= 70
