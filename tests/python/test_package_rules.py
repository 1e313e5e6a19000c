"""Rules on the package's own source that keep it working where Spark Connect is all there is."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "mssql_cdc"
# Attributes a Spark Connect session does not have: the JVM behind a classic session.
CLASSIC_ONLY = {"sparkContext", "_jvm", "_jsc", "_jdf", "_jsparkSession", "rdd", "_sc"}
# The one allowed use: the core-count probe, which falls back when it is refused.
ALLOWED = {("spark.py", "available_cores")}


def uses(path):
    """(function, attribute, line) of every classic-only attribute the module reads."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            name = function
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = child.name
            if isinstance(child, ast.Attribute) and child.attr in CLASSIC_ONLY:
                found.append((function, child.attr, child.lineno))
            visit(child, name)

    visit(tree, None)
    return found


def test_only_the_core_count_probe_reaches_past_spark_connect():
    offending = []
    for path in sorted(PACKAGE.glob("*.py")):
        for function, attribute, line in uses(path):
            if (path.name, function) not in ALLOWED:
                offending.append(f"{path.name}:{line} {function}() uses .{attribute}")
    assert offending == [], "\n".join(offending)


def test_the_rule_sees_the_probe():
    assert [(f, a) for f, a, _ in uses(PACKAGE / "spark.py")] == [("available_cores", "sparkContext")]
