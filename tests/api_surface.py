"""Prints, as JSON, the public surface of the `mssql_cdc` package the running interpreter imports:
every public module (no part of its name starting with "_"), and in each the names of its
`__all__`, or where it has none, the names it defines or assigns (not those it imports from
outside the package). For each name: its kind and what a user's code depends on (a function's
signature, a TypedDict's keys and their types, a Protocol's or a class's public members, a
constant's value).

Run by tests/reference/test_api.py with our interpreter and with the reference library's
(mssql-cdc-pyspark 0.8.0, in a venv of its own), so that both are described the same way.
"""

import importlib
import inspect
import json
import pkgutil
import sys
import types
import typing


def modules(package):
    names = [package.__name__]
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return sorted(names)


def own_names(module):
    """The module's public names: its __all__, or what it did not import from outside the package."""
    if hasattr(module, "__all__"):
        return list(module.__all__)
    names = []
    for name, value in vars(module).items():
        if name.startswith("_") or inspect.ismodule(value) or isinstance(value, typing.TypeVar):
            continue
        if name in ("annotations", "TYPE_CHECKING"):
            continue
        if is_alias(value) or typing.get_origin(value) is typing.Literal:
            names.append(name)
            continue
        origin = getattr(value, "__module__", None)
        if isinstance(value, type) or callable(value):
            if origin is None or not origin.startswith("mssql_cdc"):
                continue
        elif origin is not None and not origin.startswith("mssql_cdc") and origin != "typing":
            continue
        names.append(name)
    return names


def is_alias(value):
    """A type alias written as a subscripted type or a union (`tuple[str, str]`, `A | B`)."""
    return isinstance(value, (types.GenericAlias, types.UnionType)) or (
        typing.get_origin(value) is not None and typing.get_origin(value) is not typing.Literal)


def annotation_text(value):
    if isinstance(value, str):
        return value
    return value.__forward_arg__ if isinstance(value, typing.ForwardRef) else getattr(value, "__name__", repr(value))


def signature(value):
    """A callable's signature: its text, and each parameter as [name, kind, default or None,
    annotation or None] (a default as its repr), and the return annotation."""
    try:
        sig = inspect.signature(value)
    except (TypeError, ValueError):
        return None

    def text(annotation):
        return None if annotation is inspect.Parameter.empty else annotation_text(annotation)

    params = [[p.name, p.kind.name, None if p.default is p.empty else repr(p.default), text(p.annotation)]
              for p in sig.parameters.values()]
    return {"text": str(sig), "params": params, "returns": text(sig.return_annotation)}


def describe(value):
    """[kind, detail] of one public name."""
    if isinstance(value, type) and typing.is_typeddict(value):
        keys = {k: annotation_text(t) for k, t in value.__annotations__.items()}
        return ["TypedDict", {"keys": keys, "required": sorted(value.__required_keys__)}]
    if isinstance(value, type) and getattr(value, "_is_protocol", False):
        return ["Protocol", sorted(m for m in dir(value) if not m.startswith("_"))]
    if isinstance(value, type) and issubclass(value, BaseException):
        return ["exception", [base.__name__ for base in value.__mro__[1:] if base is not object]]
    if isinstance(value, type):
        members = {m: signature(getattr(value, m)) if callable(getattr(value, m)) else "attribute"
                   for m in dir(value) if not m.startswith("_")}
        return ["class", {"signature": signature(value), "members": members}]
    if typing.get_origin(value) is typing.Literal:
        return ["Literal", list(typing.get_args(value))]
    if is_alias(value):
        return ["alias", repr(value).replace("typing.", "")]
    if hasattr(value, "__supertype__"):
        return ["NewType", annotation_text(value.__supertype__)]
    if callable(value) and not isinstance(value, (str, bytes)):
        return ["function", signature(value)]
    if isinstance(value, (str, int, float, bool, type(None))):
        return ["constant", value]
    if isinstance(value, (frozenset, set)):
        return ["constant", sorted(value, key=repr)]
    try:
        return ["constant", json.loads(json.dumps(value))]
    except TypeError:
        pass
    if isinstance(value, (list, tuple)):
        # A list of objects (migration steps): each object's type and its data, not the
        # functions it holds, whose reprs name addresses.
        return ["list", [instance(item) for item in value]]
    return [type(value).__name__, repr(value)]


def instance(value):
    """An object's type name and its public attributes that are data."""
    data = {}
    for name in dir(value):
        attribute = getattr(value, name)
        if name.startswith("_") or callable(attribute):
            continue
        try:
            data[name] = json.loads(json.dumps(attribute))
        except TypeError:
            data[name] = type(attribute).__name__
    return [type(value).__name__, data]


def surface(package_name="mssql_cdc"):
    package = importlib.import_module(package_name)
    out = {}
    for name in modules(package):
        module = importlib.import_module(name)
        out[name] = {attr: describe(getattr(module, attr)) for attr in own_names(module)
                     if hasattr(module, attr)}
    return out


if __name__ == "__main__":
    json.dump(surface(), sys.stdout, indent=1, sort_keys=True, default=repr)
