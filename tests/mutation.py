r"""A small AST mutation tester: do the topic's fast-tier tests kill deliberate bugs in its sources?

Usage (from the repository root; not collected by pytest)::

    python -m tests.mutation --topic eos --tree /tmp/steplab-mut [--make-tree] [--n 12] [--seed 0]

It NEVER edits the working tree it is started from: every mutant is written into ``--tree``, a
private copy of the repository (``--make-tree`` creates it with ``git worktree add --detach TREE
HEAD``; any copy works, e.g. ``cp -r``). Each mutant is one small change to ``theory/<topic>.py`` (or a
module of the package ``theory/<topic>/``) or ``sims/<topic>*.py`` (or ``sims/<topic>/``): the topic's theory
and simulators:

* arithmetic operator swapped (``+``/``-``, ``*``/``/``, ``**`` -> ``*``);
* comparison flipped (``<``/``<=``, ``>``/``>=``, ``<``/``>``, ``==``/``!=``), ``and``/``or`` swapped;
* numeric constant changed (an integer off by one, a float doubled, 0 -> 1);
* a term dropped (``a + b`` -> ``a``, ``a - b`` -> ``a``), a unary minus removed.

Sites are sampled with ``--seed`` (docstrings, string constants, the argument-validation calls and the
size guards' byte estimates are left alone: the bad-input battery covers validation, and an estimate
changed by a small factor changes no result). For each mutant the topic's fast-tier
tests run in the copy with ``-x`` (stop at the first failure): ``tests/test_<topic>*.py``, the
topic's contract rows, its claims in ``tests/test_power.py`` and its bad-input rows, in a
subprocess with its own ``STEPLAB_RESULTS``. A failing run (or one past ``--timeout``) kills the
mutant; a passing one means it survived. The unmutated copy (re-printed by ``ast.unparse``) must pass
first. The report lists the score and every survivor (file, line, the change).

``--claims-only`` measures the *claims'* sensitivity instead (the claim sensitivity score): for each
mutant only the claims that test the topic's code run -- its own and the other topics' claims that declare
``uses=(T,)`` -- at the quick budget, with nothing cached (``python -m paper_checks --claim ... --budget quick
--no-cache --json``), and the mutant is killed when
any claim's status differs from the unmutated copy's (a passed claim turning failed, inconclusive or
error; a verdict against a paper appearing or disappearing). The unit tests are not run, so a mutant
that only a unit test catches survives here: that is the point of the score. Code that only the full budget
runs (a paper's own setting too costly for the fast tier) is measured with ``--budget full``, ``--claim`` naming
the claims that run it and ``--file`` restricting the sample to its source file.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

_SWAP_BIN = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.Pow: ast.Mult,
             ast.FloorDiv: ast.Div, ast.Mod: ast.FloorDiv}
_SWAP_CMP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
_FLIP_CMP = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}
_VALIDATION = {"V", "val", "validate"}  # names under which theory.validate is imported


@dataclass(frozen=True)
class Mutant:
    file: str       # path relative to the tree
    index: int      # which candidate site of the file (in ast.walk order)
    kind: str
    line: int
    text: str       # human-readable change

    def describe(self) -> str:
        return f"{self.file}:{self.line} {self.kind}: {self.text}"


def _is_validation_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id in _VALIDATION)


def _is_guard_name(name: str) -> bool:
    """A size guard: ``check_bytes`` itself, or a module's helper around it (``_guard``, ``_<what>_bytes``)."""
    return name == "_guard" or name.endswith("_bytes")


def _is_guard_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return _is_guard_name(f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "")


def _guard_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes of the size guards: their calls, their helpers' bodies, and the assignments (in a function)
    whose every target is read only inside a guard call (a byte estimate's intermediate, ``runs = m * n_paths``)."""
    guard: set[int] = set()
    for node in ast.walk(tree):
        if _is_guard_call(node) or (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_guard_name(node.name)):
            guard.update(id(n) for n in ast.walk(node))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "check_bytes"):
            guard.update(id(n) for n in ast.walk(node))
    out = set(guard)
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        loads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        in_guard = {n.id for n in loads if id(n) in guard}
        elsewhere = {n.id for n in loads if id(n) not in guard}
        for stmt in ast.walk(fn):
            if isinstance(stmt, ast.Assign) and all(isinstance(t, (ast.Name, ast.Tuple)) for t in stmt.targets):
                names = {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
                if names and names <= in_guard and not names & elsewhere:
                    out.update(id(n) for n in ast.walk(stmt))
    return out


def _skipped_nodes(tree: ast.AST) -> set[int]:
    """ids of nodes inside docstrings, validation calls, raise statements and f-strings (not mutated)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if _is_validation_call(node) or isinstance(node, (ast.Raise, ast.JoinedStr, ast.Assert)):
            skip.update(id(n) for n in ast.walk(node))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.update(id(n) for n in ast.walk(first))
        if isinstance(node, ast.If):  # `if not (...): raise` guards are validation too
            if node.body and all(isinstance(s, ast.Raise) for s in node.body):
                skip.update(id(n) for n in ast.walk(node.test))
    return skip | _guard_nodes(tree)


def _candidates(tree: ast.AST) -> list[tuple[ast.AST, str, str, object]]:
    """(node, kind, description, payload) for every mutable site, in ast.walk order."""
    skip = _skipped_nodes(tree)
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.BinOp) and type(node.op) in _SWAP_BIN:
            new = _SWAP_BIN[type(node.op)]
            out.append((node, "operator", f"{type(node.op).__name__} -> {new.__name__}", new))
            if isinstance(node.op, (ast.Add, ast.Sub)):
                out.append((node, "drop-term", f"`{ast.unparse(node)[:60]}` -> `{ast.unparse(node.left)[:60]}`", None))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            op = type(node.ops[0])
            if op in _SWAP_CMP:
                out.append((node, "comparison", f"{op.__name__} -> {_SWAP_CMP[op].__name__}", _SWAP_CMP[op]))
            if op in _FLIP_CMP:
                out.append((node, "comparison-flip", f"{op.__name__} -> {_FLIP_CMP[op].__name__}", _FLIP_CMP[op]))
        elif isinstance(node, ast.BoolOp):
            new = ast.Or if isinstance(node.op, ast.And) else ast.And
            out.append((node, "boolean", f"{type(node.op).__name__} -> {new.__name__}", new))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            out.append((node, "unary", f"`{ast.unparse(node)[:60]}` -> `{ast.unparse(node.operand)[:60]}`", None))
        elif (isinstance(node, ast.Constant) and type(node.value) in (int, float)
              and not isinstance(node.value, bool)):
            v = node.value
            new = (v + 1) if isinstance(v, int) else (1.0 if v == 0 else 2.0 * v)
            out.append((node, "constant", f"{v!r} -> {new!r}", new))
    return out


class _Apply(ast.NodeTransformer):
    def __init__(self, target: ast.AST, kind: str, payload: object):
        self.target, self.kind, self.payload = target, kind, payload

    def visit(self, node):
        if node is not self.target:
            return self.generic_visit(node)
        if self.kind == "operator":
            node.op = self.payload()
        elif self.kind == "drop-term":
            return node.left
        elif self.kind in ("comparison", "comparison-flip"):
            node.ops = [self.payload()]
        elif self.kind == "boolean":
            node.op = self.payload()
        elif self.kind == "unary":
            return node.operand
        elif self.kind == "constant":
            node.value = self.payload
        return node


def topic_files(tree: Path, topic: str) -> list[str]:
    """theory/<topic>.py or the modules of the package theory/<topic>/, and the same for sims/<topic>, plus
    sims/<topic>_*.py (relative paths that exist). A package's ``__init__.py`` is left out: it only re-exports."""
    files = []
    for layer in ("theory", "sims"):
        files.append(f"{layer}/{topic}.py")
        files += sorted(str(p.relative_to(tree)) for p in (tree / layer / topic).glob("*.py") if p.name != "__init__.py")
    files += sorted(str(p.relative_to(tree)) for p in (tree / "sims").glob(f"{topic}_*.py"))
    return [f for f in files if (tree / f).exists()]


def enumerate_mutants(tree: Path, topic: str) -> list[Mutant]:
    mutants = []
    for rel in topic_files(tree, topic):
        src = (tree / rel).read_text()
        for i, (node, kind, text, _) in enumerate(_candidates(ast.parse(src))):
            col = getattr(node, "col_offset", 0)
            mutants.append(Mutant(rel, i, kind, getattr(node, "lineno", 0), f"{text} (column {col})"))
    return mutants


def mutate_source(src: str, index: int) -> str:
    tree = ast.parse(src)
    node, kind, _, payload = _candidates(tree)[index]
    new = _Apply(node, kind, payload).visit(tree)
    return ast.unparse(ast.fix_missing_locations(new))


KINDS = ("operator", "drop-term", "comparison", "comparison-flip", "boolean", "unary", "constant")


def site_index(src: str, line_text: str, at: str, kind: str, change: str = "", *, where: str = "the source") -> int:
    """Index (in :func:`_candidates` order) of the one mutation ``kind`` that starts at the text ``at`` of the one line
    of ``src`` containing ``line_text``; ``change`` picks one of several that start at the same column.

    Raises ``ValueError`` saying which part of the pinned site no longer matches ``src`` (``where`` names it), so an
    edit of a pinned line shows up as a stale site, not as a failed unpacking."""
    lines = src.splitlines()
    rows = [i + 1 for i, text in enumerate(lines) if line_text in text]
    if len(rows) != 1:
        raise ValueError(f"line_text: {len(rows)} lines of {where} contain {line_text!r} (expected exactly one)")
    row = rows[0]
    if at not in lines[row - 1]:
        raise ValueError(f"at: line {row} of {where} does not contain {at!r}")
    col = lines[row - 1].index(at)
    found = [i for i, (node, k, text, _) in enumerate(_candidates(ast.parse(src)))
             if k == kind and node.lineno == row and node.col_offset == col and text.startswith(change)]
    if len(found) != 1:
        raise ValueError(f"kind: {len(found)} {kind!r} mutations{f' {change!r}' if change else ''} start at {at!r} "
                         f"(line {row}, column {col} of {where}; expected exactly one)")
    return found[0]


def mutant_module(module, line_text: str, at: str, kind: str, change: str = ""):
    """A private copy of ``module`` with the mutation ``kind`` applied at the text ``at`` of the one source line
    containing ``line_text`` (so a pinned site survives edits elsewhere in the file); ``change`` picks one of several
    sites that start at the same column (the tool's description, e.g. ``"Mult -> Div"``). The working module is
    untouched: a test monkeypatches the copy's function in."""
    import types

    src = Path(module.__file__).read_text()
    index = site_index(src, line_text, at, kind, change, where=module.__file__)
    copy = types.ModuleType(module.__name__ + "_mutant")
    exec(compile(mutate_source(src, index), module.__file__, "exec"), copy.__dict__)  # noqa: S102
    return copy


def _imports(nodes) -> list[tuple[str, str, str | None]]:
    """``(bound name, dotted name, from-module)`` for every name the import statements among ``nodes`` bind:
    ``import a.b as x`` gives ``("x", "a.b", None)``, ``from a import b`` gives ``("b", "a.b", "a")``."""
    out = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out += [(a.asname or a.name, a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out += [(a.asname or a.name, f"{node.module}.{a.name}", node.module) for a in node.names]
    return out


def is_mutant_call(node: ast.AST) -> bool:
    """Whether ``node`` calls :func:`mutant_module` (by its name or as an attribute, ``M.mutant_module``)."""
    return isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "mutant_module"


def pinned_sites(path: Path) -> list[tuple[str | None, tuple[str, ...]]]:
    """The mutation sites pinned in the test file ``path``, read from its syntax tree without running it:
    ``(module, site)`` per site, ``site`` the ``(line_text, at, kind[, change])`` strings of a :func:`mutant_module`
    call. ``module`` is the dotted name the call's first argument is imported as in the file, or ``None`` where the
    site is a tuple literal passed on as ``*site`` (then any module the file imports may hold it)."""
    tree = ast.parse(path.read_text())

    def aliases(body) -> dict[str, str]:
        """Names bound by the import statements of ``body`` (not of nested functions)."""
        return {alias: name for alias, name, _ in _imports(body)}

    def strings(nodes) -> tuple[str, ...] | None:
        ok = all(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in nodes)
        return tuple(n.value for n in nodes) if ok and 3 <= len(nodes) <= 4 and nodes[2].value in KINDS else None

    out = []

    def visit(node, names: dict[str, str]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = {**names, **aliases(node.body)}  # a function's own imports shadow the module's
        if is_mutant_call(node):
            site = strings(node.args[1:])
            if site is not None and isinstance(node.args[0], ast.Name):
                out.append((names.get(node.args[0].id), site))
        elif isinstance(node, ast.Tuple) and (site := strings(node.elts)) is not None:
            out.append((None, site))
        for child in ast.iter_child_nodes(node):
            visit(child, names)

    visit(tree, aliases(tree.body))
    return out


def imported_modules(path: Path) -> list[str]:
    """Dotted names of the ``theory`` and ``sims`` modules the test file ``path`` imports (``import a.b as x``,
    ``from a import b``), packages and modules alike."""
    names = {n for _, name, parent in _imports(ast.walk(ast.parse(path.read_text()))) for n in (name, parent) if n}
    return sorted(n for n in names if n.split(".")[0] in ("theory", "sims"))


def test_command(tree: Path, topic: str, deselect: tuple[str, ...] = (), stop: bool = True) -> list[str]:
    """The topic's fast-tier tests, cheapest first, stopping at the first failure (``stop``).

    ``deselect``: test ids already red on the unmutated copy (they cannot tell a mutant apart).
    """
    files = sorted(str(p.relative_to(tree)) for p in (tree / "tests").glob(f"test_{topic}*.py"))
    # -n 0: one process (xdist stays loaded: conftest.py marks tests with its xdist_group)
    cmd = [sys.executable, "-m", "pytest", "-q", "-rf", *(["-x"] if stop else []), "-n", "0", "-p", "no:cacheprovider",
           "-m", "not slow", *files, *[a for d in deselect for a in ("--deselect", d)]]
    shared = [f for f in ("tests/test_contract.py", "tests/test_bad_input.py", "tests/test_power.py")
              if (tree / f).exists()]
    # -k picks the topic's rows and claims out of the shared files (their ids start with the topic)
    return cmd + shared + ["-k", f"{topic} or {' or '.join(Path(f).stem for f in files) or topic}"]


def run_tests(tree: Path, topic: str, timeout: float, results: Path, deselect: tuple[str, ...] = (),
              stop: bool = True) -> tuple[str, float, str]:
    """('passed' | 'failed' | 'timeout' | 'error', seconds, last lines of output).

    'error' is pytest's own failure (usage, collection, internal error, nothing collected: exit codes 2-5):
    such a run says nothing about the mutant and is never counted as a kill.
    """
    env = {**os.environ, "STEPLAB_RESULTS": str(results), "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(test_command(tree, topic, deselect, stop), cwd=tree, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t0, ""
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    failed = [ln.split()[1] for ln in lines if ln.startswith("FAILED ")]
    tail = "\n".join(failed if not stop else lines[-3:])
    status = {0: "passed", 1: "failed"}.get(proc.returncode, "error")
    return status, time.perf_counter() - t0, tail


def topic_claims(topic: str) -> list[str]:
    """The claims that test a topic's code: its own, and every other topic's claim that declares ``uses=(topic,)``
    (a cross-link claim that calls this topic's theory or simulators sees its mutants too)."""
    from paper_checks import claims, load_all

    load_all()
    return [c.id for c in claims() if c.topic == topic or topic in c.uses]


def claim_statuses(tree: Path, topic: str, timeout: float, results: Path, budget: str = "quick",
                   only: tuple[str, ...] = ()) -> tuple[str, float, dict[str, str]]:
    """('ok' | 'timeout' | 'error', seconds, {claim id: status}) of :func:`topic_claims` (or of ``only``, a subset of
    them) at ``budget``.

    'error' means the run produced no readable JSON (an import error of the mutated module, a crash of the
    runner): the topic's claims are gone, which a reader would notice, so it counts as a kill.
    """
    env = {**os.environ, "STEPLAB_RESULTS": str(results), "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    selection = [a for cid in (only or topic_claims(topic)) for a in ("--claim", cid)]
    cmd = [sys.executable, "-m", "paper_checks", *selection, "--budget", budget, "--no-cache", "--json", "--quiet"]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t0, {}
    try:
        records = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return "error", time.perf_counter() - t0, {}
    return "ok", time.perf_counter() - t0, {r["id"]: r["status"] for r in records}


def _pristine(tree: Path, rel: str, originals: dict[str, str]) -> None:
    (tree / rel).write_text(originals[rel])


def _apply(tree: Path, files: list[str], originals: dict[str, str], m: Mutant) -> None:
    """Every topic file pristine, then mutant ``m`` written into its file."""
    for rel in files:
        _pristine(tree, rel, originals)
    (tree / m.file).write_text(mutate_source(originals[m.file], m.index))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topic", required=True)
    ap.add_argument("--tree", required=True, type=Path, help="private copy of the repository to mutate")
    ap.add_argument("--make-tree", action="store_true", help="create --tree with `git worktree add --detach TREE HEAD`")
    ap.add_argument("--n", type=int, default=12, help="mutants sampled (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=0, help="per-mutant limit in s (default: 3x the clean run + 30)")
    ap.add_argument("--list", action="store_true", help="only list the sampled mutants")
    ap.add_argument("--deselect", action="append", help="a test id to leave out (repeatable; e.g. known red)")
    ap.add_argument("--only", type=int, nargs="+", help="run only these positions (1-based) of the seeded sample")
    ap.add_argument("--allow-checkout", action="store_true", help="allow a --tree with a .git folder (a cp -r copy)")
    ap.add_argument("--no-clean", action="store_true",
                    help="skip the clean run (only when these tests just passed on this commit: saves one full run)")
    ap.add_argument("--json", type=Path, help="write the outcomes here")
    ap.add_argument("--claims-only", action="store_true",
                    help="run only the topic's claims (quick, uncached) per mutant: the claim sensitivity score")
    ap.add_argument("--budget", choices=("quick", "full"), default="quick",
                    help="with --claims-only: the claims' budget (full: for code that only the full budget runs)")
    ap.add_argument("--claim", action="append", help="with --claims-only: run only this claim of the topic (repeatable)")
    ap.add_argument("--file", help="sample only mutants of source files whose path contains this string")
    args = ap.parse_args(argv)
    if (args.budget != "quick" or args.claim) and not args.claims_only:
        ap.error("--budget and --claim apply to --claims-only")

    here = Path(__file__).resolve().parents[1]
    tree = args.tree.resolve()
    if args.make_tree and not tree.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), "HEAD"], cwd=here, check=True)
    # a main checkout has a .git folder (a worktree has a .git file): never mutate one, others may be testing in it
    if (tree / ".git").is_dir() and not args.allow_checkout:
        sys.exit(f"{tree} is a main git checkout; mutate a private copy (--make-tree) or pass --allow-checkout")
    if not (tree / "theory").is_dir():
        sys.exit(f"{tree} is not a steplab tree (no theory/)")

    mutants = [m for m in enumerate_mutants(tree, args.topic) if not args.file or args.file in m.file]
    if not mutants:
        sys.exit(f"--file {args.file!r}: no mutation site in the topic's files {topic_files(tree, args.topic)}")
    rng = random.Random(args.seed)
    sample = mutants if args.n <= 0 or args.n >= len(mutants) else sorted(
        rng.sample(mutants, args.n), key=lambda m: (m.file, m.line))
    if args.only:  # re-run some of the sample (1-based positions in it), e.g. the survivors after new tests
        sample = [sample[i - 1] for i in args.only]
    print(f"{args.topic}: {len(mutants)} mutation sites in {topic_files(tree, args.topic)}; running {len(sample)}")
    if args.list:
        for m in sample:
            print("  " + m.describe())
        return 0

    files = topic_files(tree, args.topic)
    originals = {rel: (tree / rel).read_text() for rel in files}
    # a terminated run still restores the pristine sources (the finally clause below)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(f"terminated (signal {signum}); sources restored"))
    results = Path(f"/tmp/steplab-mut-results-{args.topic}")
    try:
        for rel in files:  # the clean run uses the same ast.unparse printing as the mutants
            (tree / rel).write_text(ast.unparse(ast.parse(originals[rel])))
        deselect: tuple[str, ...] = tuple(args.deselect or ())
        if args.claims_only:
            return _claims_only(args, tree, files, originals, sample, mutants, results)
        if args.no_clean:
            secs = args.timeout / 3 if args.timeout else 600
        else:
            # the whole selection once, without -x: tests already red here are excluded from the mutant runs
            status, secs, tail = run_tests(tree, args.topic, 3600, results, stop=False)
            if status == "failed":
                deselect += tuple(tail.splitlines())
                print(f"clean run: {len(deselect)} tests already red, excluded: {list(deselect)}", flush=True)
            elif status != "passed":
                print(f"clean run: {status}\n{tail}")
                return 2
            print(f"clean run in {secs:.0f} s", flush=True)
        limit = args.timeout or 3 * secs + 30
        outcomes = []
        for k, m in enumerate(sample, 1):
            _apply(tree, files, originals, m)
            status, secs, tail = run_tests(tree, args.topic, limit, results, deselect)
            if status == "error":
                print(f"[{k}/{len(sample)}] ERROR (not counted) {m.describe()}\n{tail}", flush=True)
                continue
            verdict = "survived" if status == "passed" else "killed"
            outcomes.append({"mutant": m.describe(), "verdict": verdict, "seconds": round(secs, 1),
                             "by": tail.splitlines()[-1] if tail and verdict == "killed" else status})
            print(f"[{k}/{len(sample)}] {verdict:8s} ({secs:4.0f} s) {m.describe()}", flush=True)
    finally:
        for rel in files:
            _pristine(tree, rel, originals)
    killed = sum(o["verdict"] == "killed" for o in outcomes)
    print(f"\n{args.topic}: {killed}/{len(outcomes)} killed ({100 * killed / max(len(outcomes), 1):.0f} %)")
    for o in outcomes:
        if o["verdict"] == "survived":
            print("  survived: " + o["mutant"])
    if args.json:
        args.json.write_text(json.dumps({"topic": args.topic, "seed": args.seed, "sites": len(mutants),
                                         "excluded_red_tests": list(deselect),
                                         "outcomes": outcomes}, indent=1))
    return 0


def _claims_only(args, tree: Path, files: list[str], originals: dict[str, str], sample: list[Mutant],
                 mutants: list[Mutant], results: Path) -> int:
    """The claim sensitivity score: per mutant, do the topic's claims alone change status?"""
    only = tuple(args.claim or ())
    unknown = sorted(set(only) - set(topic_claims(args.topic)))
    if unknown:
        print(f"--claim: {unknown} are not claims of topic {args.topic!r}")
        return 2
    status, secs, baseline = claim_statuses(tree, args.topic, 3 * 3600, results, args.budget, only)
    if status != "ok" or not baseline:
        print(f"clean run: {status}, {len(baseline)} claims")
        return 2
    print(f"clean run in {secs:.0f} s: {len(baseline)} claims, " + ", ".join(
        f"{n} {s}" for s, n in sorted(_count(baseline.values()).items())), flush=True)
    limit = args.timeout or 3 * secs + 30
    outcomes = []
    for k, m in enumerate(sample, 1):
        _apply(tree, files, originals, m)
        status, secs, got = claim_statuses(tree, args.topic, limit, results, args.budget, only)
        changed = sorted(c for c in baseline if got.get(c) != baseline[c])
        verdict = "killed" if status != "ok" or changed else "survived"
        by = status if status != "ok" else ", ".join(f"{c}: {baseline[c]} -> {got.get(c, 'missing')}" for c in changed)
        outcomes.append({"mutant": m.describe(), "verdict": verdict, "seconds": round(secs, 1), "by": by})
        print(f"[{k}/{len(sample)}] {verdict:8s} ({secs:4.0f} s) {m.describe()}" + (f"  [{by[:120]}]" if by else ""),
              flush=True)
    for rel in files:
        _pristine(tree, rel, originals)
    killed = sum(o["verdict"] == "killed" for o in outcomes)
    print(f"\n{args.topic} ({args.budget} budget): the claims alone kill {killed}/{len(outcomes)} "
          f"({100 * killed / max(len(outcomes), 1):.0f} %); claims run: {', '.join(sorted(baseline))}")
    for o in outcomes:
        if o["verdict"] == "survived":
            print("  survived: " + o["mutant"])
    if args.json:
        args.json.write_text(json.dumps({"topic": args.topic, "seed": args.seed, "sites": len(mutants),
                                         "mode": "claims-only", "budget": args.budget, "claims": baseline, "outcomes": outcomes}, indent=1))
    return 0


def _count(values) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


if __name__ == "__main__":
    sys.exit(main())
