"""Our public API against the reference library's, mssql-cdc-pyspark 0.8.0, installed from PyPI
in a venv of its own (scripts/setup_reference.sh): every public module and name, its kind, a
function's signature, a TypedDict's keys, a constant's value. Each difference must be listed in
docs/spark.md under "Differences from mssql-cdc-pyspark" with its reason, and each listed one
must still be a difference, so that the list says what a user moving from 0.8.0 meets."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SURFACE = ROOT / "tests" / "api_surface.py"
DIFFERENCES_HEADING = "## Differences from mssql-cdc-pyspark"


def surface_of(python):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(python), str(SURFACE)], capture_output=True, text=True, env=env, timeout=300,
                          cwd="/")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def surfaces(reference_python):
    reference = surface_of(reference_python)
    assert "mssql_cdc.client" in reference, "the reference venv does not hold mssql-cdc-pyspark"
    return reference, surface_of(sys.executable)


def test_tables_are_stamped_with_the_schema_versions_of_the_reference(reference_python):
    """A table written here reads as fully migrated to 0.8.0, and one 0.8.0 wrote as fully
    migrated here: the same mssql_cdc.schema_version for each kind whose table is 0.8.0's. The
    plans table beside bronze is this engine's own (one row per chunk), not 0.8.0's."""
    from mssql_cdc import migrations

    kinds = ["bronze", "control", "facts", "reconcile", "silver"]
    script = ("import json; from mssql_cdc import migrations; "
              f"print(json.dumps({{k: migrations.current_version(k) for k in {kinds!r}}}))")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([reference_python, "-c", script], capture_output=True, text=True, env=env, cwd="/",
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert {k: migrations.current_version(k) for k in kinds} == json.loads(done.stdout)
    assert migrations.SCHEMA_VERSION_PROPERTY == "mssql_cdc.schema_version"


def compare_signatures(theirs, ours):
    """What differs between two signatures, or None. Ours may add keyword-only parameters with
    defaults: code written for the reference calls it the same way."""
    if theirs is None or ours is None:
        return None if theirs == ours else "not inspectable the same way"
    added = [p for p in ours["params"] if p[1] == "KEYWORD_ONLY" and p[2] is not None
             and p[0] not in {q[0] for q in theirs["params"]}]
    kept = [p for p in ours["params"] if p not in added]
    if kept != theirs["params"] or ours["returns"] != theirs["returns"]:
        return f"signature {ours['text']} instead of {theirs['text']}"
    return None


def compare(kind, theirs, ours):
    """What differs between one name's reference description and ours, or None."""
    if kind == "Protocol":
        missing = sorted(set(theirs) - set(ours))
        return f"lacks members {missing}" if missing else None
    if kind == "class":
        if what := compare_signatures(theirs["signature"], ours["signature"]):
            return what
        missing = sorted(set(theirs["members"]) - set(ours["members"]))
        if missing:
            return f"lacks members {missing}"
        for member, described in theirs["members"].items():
            if isinstance(described, dict) and isinstance(ours["members"][member], dict):
                if what := compare_signatures(described, ours["members"][member]):
                    return f"{member}: {what}"
        return None
    if kind == "exception":
        missing = [base for base in theirs if base not in ours]
        return f"does not derive from {missing}" if missing else None
    if kind == "function":
        return compare_signatures(theirs, ours)
    if kind == "TypedDict":
        # Keys are only ever added: ours may have more, each of theirs with its type and required
        # where theirs is.
        wrong = {k: t for k, t in theirs["keys"].items() if ours["keys"].get(k) != t}
        optional = sorted(set(theirs["required"]) - set(ours["required"]))
        if wrong:
            return f"keys {sorted(wrong)} missing or typed otherwise"
        return f"keys {optional} not required" if optional else None
    return None if theirs == ours else f"{json.dumps(ours)[:300]} instead of {json.dumps(theirs)[:300]}"


def differences(reference, ours):
    """{subject: what differs}: a subject is a module ("mssql_cdc.client") or a name in one."""
    found = {}
    for module, names in reference.items():
        if module not in ours:
            found[module] = "no such module"
            continue
        for name, (kind, detail) in names.items():
            subject = f"{module}.{name}"
            if name not in ours[module]:
                found[subject] = "missing"
            elif ours[module][name][0] != kind:
                found[subject] = f"a {ours[module][name][0]} instead of a {kind}"
            else:
                what = compare(kind, detail, ours[module][name][1])
                if what:
                    found[subject] = what
    return found


def documented():
    """The subjects of the table under DIFFERENCES_HEADING in docs/spark.md, each with its reason."""
    text = (ROOT / "docs" / "spark.md").read_text()
    assert DIFFERENCES_HEADING in text
    section = text.split(DIFFERENCES_HEADING, 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and line.startswith("|") and not set(cells[0]) <= set("-: "):
            for subject in re.findall(r"`([A-Za-z_.]+)`", cells[0]):
                rows[subject] = cells[1]
    rows.pop("name", None)
    return rows


def covered(subject, rows):
    """The documented row that covers a subject: itself, or a module above it."""
    parts = subject.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in rows:
            return ".".join(parts[:end])
    return None


def test_every_difference_from_the_reference_is_documented_with_its_reason(surfaces):
    rows = documented()
    undocumented = {s: what for s, what in differences(*surfaces).items() if covered(s, rows) is None}
    assert undocumented == {}, "list these in docs/spark.md, " + DIFFERENCES_HEADING


def test_every_documented_difference_is_still_one(surfaces):
    found = differences(*surfaces)
    stale = sorted(row for row in documented() if not any(covered(s, {row: ""}) for s in found))
    assert stale == [], "these no longer differ: remove them from docs/spark.md"


def test_every_documented_difference_gives_a_reason():
    assert all(len(reason.split()) >= 4 for reason in documented().values())


def test_the_comparison_finds_what_it_is_meant_to():
    def sig(text, *params, returns=None):
        return {"text": text, "params": [list(p) for p in params], "returns": returns}

    ref_f = sig("(a, *, b=1)", ("a", "POSITIONAL_OR_KEYWORD", None, None), ("b", "KEYWORD_ONLY", "1", None))
    reference = {"m": {"f": ["function", ref_f], "g": ["function", ref_f], "K": ["constant", [1, 2]],
                       "T": ["TypedDict", {"keys": {"x": "int"}, "required": ["x"]}],
                       "U": ["TypedDict", {"keys": {"x": "int"}, "required": ["x"]}],
                       "E": ["exception", ["RuntimeError"]]},
                 "m.gone": {"h": ["function", sig("()")]}}
    ours = {"m": {"f": ["function", sig("(a, b=1)", ("a", "POSITIONAL_OR_KEYWORD", None, None),
                                        ("b", "POSITIONAL_OR_KEYWORD", "1", None))],
                  "g": ["function", sig("(a, *, b=1, c=None)", *ref_f["params"], ("c", "KEYWORD_ONLY", "None", None))],
                  "K": ["constant", [1, 2]], "T": ["class", {}],
                  "U": ["TypedDict", {"keys": {"x": "int", "y": "str"}, "required": ["x", "y"]}],
                  "E": ["exception", ["CdcError", "RuntimeError"]]}}
    assert differences(reference, ours) == {
        "m.f": "signature (a, b=1) instead of (a, *, b=1)", "m.T": "a class instead of a TypedDict",
        "m.gone": "no such module"}
    assert covered("mssql_cdc.client.make_client", {"mssql_cdc.client": ""}) == "mssql_cdc.client"


def test_column_lists_have_the_reference_names_and_types(surfaces):
    """Where a column list or a comments map differs only in its comments (listed above), its
    columns' names and types, and the columns a comments map names, are 0.8.0's. The plans
    table beside bronze is this engine's own."""
    reference, ours = surfaces
    checked = 0
    for module, names in reference.items():
        for name, (kind, value) in names.items():
            if kind != "constant" or name.startswith("PLANS") or name not in ours.get(module, {}):
                continue
            mine = ours[module][name][1]
            if isinstance(value, list) and value and all(isinstance(c, list) and len(c) == 3 for c in value):
                assert [c[:2] for c in mine] == [c[:2] for c in value], f"{module}.{name}"
                checked += 1
            elif isinstance(value, dict) and name.endswith("COMMENTS"):
                assert sorted(mine) == sorted(value), f"{module}.{name}"
                checked += 1
    assert checked >= 30
