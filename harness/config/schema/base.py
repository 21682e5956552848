"""What every model of the schema shares: the base (frozen, unknown keys
refused), the value types of scenario files, and pydantic's errors as the
project's one line ``FIELD: what is wrong and what is allowed`` (ConfigError).

Value types declare a key's kind and range once: `Int(1, UINT32_MAX)` is an
integer in ns-3's uint32, `Time` a duration read by harness.config.units.parse_time
(0.5 or "500ms"), and so on; the range also goes into the JSON Schema.
A validator that needs words of its own raises ConfigError naming its field
relative to the value it checks ("" for the value itself, "size" for a key
of its table), or absolutely when it starts with the section's name
(``training.policy``, as the plug-ins name it in any job).
"""

from __future__ import annotations

import types
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Discriminator,
                      Field, Tag, TypeAdapter, ValidationError)

from harness.config.errors import ConfigError, ConfigTypeError, UnknownKeyError, shorten
from harness.config.units import (BYTE_UNITS, INT64_MAX, NS3_TIME_MAX_S, RATE_UNITS, TIME_UNITS,
                           UINT64_MAX, MIN_LINK_RATE_BPS, finite, parse_bytes, parse_link_rate,
                           parse_time, unit_pattern)


class Toml:
    """Words for the key reference (harness.config.keys) where the TOML value is not
    what the Python type says (`type`: "time", "rate", ...) or the default is
    derived (`default`: "the profile's bytes")."""

    def __init__(self, type: str | None = None, default: str | None = None):
        self.type, self.default = type, default


class Section(BaseModel):
    """A table of a scenario file: frozen, unknown keys refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    #: one example of the table in TOML, for messages ("expected a table, e.g. ...")
    example: ClassVar[str] = ""

    def given(self, *names: str) -> bool:
        """Whether the file gave any of these keys (not their defaults)."""
        return any(n in self.model_fields_set for n in names)

    def replace(self, **changes: Any) -> Any:
        """A copy with `changes`, not validated again (as dataclasses.replace)."""
        return self.model_copy(update=changes)

    def _finish(self, **values: Any) -> None:
        """Set values derived from the others (workers from hosts) while the
        model is validated, before anyone holds it; frozen from then on."""
        self.__dict__.update(values)


# --------------------------------------------------------------------------
# value types

def Int(lo: int | None = None, hi: int | None = None) -> Any:  # noqa: N802 - a type
    """An integer (not a float, not true/false) in [lo, hi]."""
    return Annotated[int, Field(strict=True, ge=lo, le=hi)]


def Number(**bounds: float) -> Any:  # noqa: N802
    """A finite number (int or float, read as float) within `bounds` (gt, ge, lt, le)."""
    return Annotated[float, Field(**bounds), BeforeValidator(lambda v: finite(v, ""))]


Str = Annotated[str, Field(strict=True)]
Bool = Annotated[bool, Field(strict=True)]


def unit_string(units: dict) -> Any:
    """A number with one of `units` ("10us"), as the JSON Schema has it."""
    return Annotated[str, Field(pattern=unit_pattern(units))]


def _unit_input(number: Any, units: dict) -> Any:
    """The JSON Schema of a value with a unit: a number or a string such as "10us"."""
    return Union[number, unit_string(units)]


def _time(allow_zero: bool) -> Any:
    bound = {"ge": 0} if allow_zero else {"gt": 0}
    return Annotated[float, BeforeValidator(
        lambda v: parse_time(v, "", allow_zero=allow_zero),
        json_schema_input_type=_unit_input(
            Annotated[float, Field(**bound, le=NS3_TIME_MAX_S)], TIME_UNITS)), Toml("time")]


#: A time in the run, seconds >= 0: 0.5 or "500ms" (ns-3: int64 nanoseconds).
Time = _time(allow_zero=True)
#: A duration > 0.
PositiveTime = _time(allow_zero=False)

#: A link's rate in bit/s, 1 Mbit/s up to ns-3's uint64: 1e9 or "1Gbps".
LinkRate = Annotated[float, BeforeValidator(
    lambda v: parse_link_rate(v, ""), json_schema_input_type=_unit_input(
        Annotated[float, Field(ge=MIN_LINK_RATE_BPS, le=UINT64_MAX)], RATE_UNITS)), Toml("rate")]


def Bytes(hi: int = INT64_MAX) -> Any:  # noqa: N802
    """A size in bytes > 0: 160000 or "160KB"."""
    return Annotated[int, BeforeValidator(
        lambda v: parse_bytes(v, "", maximum=hi), json_schema_input_type=_unit_input(
            Annotated[int, Field(ge=1, le=hi)], BYTE_UNITS)), Toml("size")]


def expect(kind: type, expected: str):
    """A before-validator that lets a value of `kind` through as it is and
    refuses anything else as `expected ..., got ...` (a wrong kind of value)."""
    def check(value: Any) -> Any:
        if not isinstance(value, kind):
            raise ConfigTypeError("", f"expected {expected}, got {shorten(value)}")
        return value
    return check


def _unique(value: tuple) -> tuple:
    if len(set(value)) != len(value):
        raise ConfigError("", "lists a host twice")
    return value


#: Host indices, each once (checked against the topology when planned).
Hosts = Annotated[tuple[Int(0), ...], BeforeValidator(expect(list, "a list of host indices")),
                  AfterValidator(_unique), Field(json_schema_extra={"uniqueItems": True}),
                  Toml("list of integers")]


def Table(value: Any, what: str, example: str) -> Any:  # noqa: N802
    """A non-empty table of name -> `value` (class name -> weight, ...)."""
    def check(data: Any) -> Any:
        if not isinstance(data, dict) or not data:
            raise ConfigTypeError("", f"expected a non-empty table of {what}, e.g. {example}; "
                                  f"got {shorten(data)}")
        return data
    return Annotated[dict[str, value], BeforeValidator(check), Field(min_length=1),
                     Toml("table")]


def PerClass(one: Any, expected: str, words: str) -> Any:  # noqa: N802
    """One value for every band, or a non-empty table of class name -> value;
    `expected` describes both ("packets (e.g. 20) or a non-empty table ...")."""
    single, table = TypeAdapter(one), TypeAdapter(dict[str, one])

    def check(value: Any) -> Any:
        if isinstance(value, dict):
            if not value:
                raise ConfigTypeError("", f"expected {expected}")
            return validate(table, value, dict[str, one])
        return validate(single, value, one)
    return Annotated[Any, BeforeValidator(check, json_schema_input_type=Union[
        one, Annotated[dict[str, one], Field(min_length=1)]]), Toml(words)]


def tagged(key: str, default: str | None, members: dict[str, type]) -> Any:
    """One of `members`, chosen by the table's `key` (absent: `default`):
    each member declares its own keys, so a key of another member is refused."""
    def tag(value: Any) -> str | None:
        found = value.get(key, default) if isinstance(value, dict) else getattr(value, key, None)
        return found if isinstance(found, str) else None
    return Annotated[Union[tuple(Annotated[m, Tag(t)] for t, m in members.items())],
                     Discriminator(tag, custom_error_type="tag_invalid",
                                   custom_error_message=key)]   # the message: its key


# --------------------------------------------------------------------------
# pydantic's errors as ConfigError

def validate(adapter: TypeAdapter, data: Any, root: Any, rename=None) -> Any:
    """`data` validated by `adapter` (of type `root`); the first error as a
    ConfigError naming its field (`rename` adjusts the field's path), with
    every other error pydantic found in its `more` (each a ConfigError too,
    in the file's order: the command line prints them all, one line each)."""
    try:
        return adapter.validate_python(data)
    except ValidationError as e:
        first = config_error(e, root, rename)
        seen = {str(first)}
        more = []
        for err in e.errors():
            try:
                other = _one_error(err, root, rename)
            except Exception:  # noqa: BLE001 - the first error is reported regardless
                continue
            if str(other) not in seen:
                seen.add(str(other))
                more.append(other)
        first.more = tuple(more)
        raise first from None


def _unwrap(tp: Any) -> Any:
    """`tp` without Annotated and Optional."""
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
        elif origin in (Union, types.UnionType) and type(None) in get_args(tp):
            rest = [a for a in get_args(tp) if a is not type(None)]
            tp = rest[0] if len(rest) == 1 else Union[tuple(rest)]
        else:
            return tp


def _members(tp: Any) -> dict[str, Any]:
    """A tagged union's members by tag ({} for any other type)."""
    if get_origin(tp) not in (Union, types.UnionType):
        return {}
    out = {}
    for arg in get_args(tp):
        tags = [m.tag for m in getattr(arg, "__metadata__", ()) if isinstance(m, Tag)]
        if tags:
            out[tags[0]] = _unwrap(arg)
    return out


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _field(model: type[BaseModel], key: Any):
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info
    return None


def _keys(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _walk(root: Any, loc: tuple) -> tuple[str, list[Any]]:
    """The path of `loc` in the project's notation (``training[1].hosts``)
    and the type at each step (types[i]: after loc[:i], unwrapped)."""
    path, tp, seen = "", _unwrap(root), [_unwrap(root)]
    for item in loc:
        members = _members(tp)
        if item in members:                  # a tagged union's member: no key of its own
            tp = members[item]
            seen.append(tp)
            continue
        origin = get_origin(tp)
        if _is_model(tp):
            info = _field(tp, item)
            tp = info.rebuild_annotation() if info is not None else Any
        elif origin in (tuple, list):
            tp = get_args(tp)[0]
        elif origin is dict:
            if item == "[key]":
                seen.append(tp)
                continue
            tp = get_args(tp)[1]
        else:
            tp = Any
        path += f"[{item}]" if isinstance(item, int) else f".{item}" if path else str(item)
        tp = _unwrap(tp)
        seen.append(tp)
    return path, seen


def join(base: str, field: str) -> str:
    """A field named by a validator, as a path from the root: relative to
    `base` (the value validated), or absolute when it starts with the name
    of base's section (``training.port`` in ``training[1]``: ``training[1].port``)."""
    if not field:
        return base
    section = base.split(".")[0]
    name = section.split("[")[0]
    if base and (field == name or field.startswith((name + ".", name + "["))):
        return section + field[len(name):]
    return f"{base}{field}" if field.startswith("[") or not base else f"{base}.{field}"


def _number(x: Any) -> str:
    return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else f"{x:g}"


def _first(errors: list[dict]) -> dict:
    """The error to report: the first, unless a table around it has an unknown
    key, which is reported first (the key may be why the value is wrong)."""
    first = errors[0]
    around = [err for err in errors if err["type"] == "extra_forbidden" and
              first["loc"][:len(err["loc"]) - 1] == err["loc"][:-1]]
    return min(around, key=lambda err: len(err["loc"])) if around else first


def config_error(exc: ValidationError, root: Any, rename=None) -> ConfigError:
    """The first error of `exc` (validating `root`) as one ConfigError."""
    return _one_error(_first(exc.errors()), root, rename)


def _one_error(err: dict, root: Any, rename=None) -> ConfigError:
    """One of pydantic's errors (validating `root`) as a ConfigError."""
    kind, loc, value = err["type"], err["loc"], err["input"]
    ctx = err.get("ctx") or {}
    path, seen = _walk(root, loc)
    here, parent = seen[-1], seen[-2] if len(seen) > 1 else None
    cls, field, message = ConfigError, path, err["msg"]
    if kind in ("value_error", "assertion_error") and isinstance(ctx.get("error"), ConfigError):
        e = ctx["error"]
        cls, field = type(e), join(path, e.field)
        message = e.message
    elif kind in ("value_error", "assertion_error"):
        message = str(ctx.get("error", message))
    elif kind == "missing":
        message = _missing(parent, loc, seen)
    elif kind == "extra_forbidden":
        cls, inner, message = _unknown_key(parent, loc, seen, value)
        field = join(path, inner)
    elif kind == "tag_invalid":
        key = err["msg"]
        tag = value.get(key) if isinstance(value, dict) else None
        if not isinstance(value, dict):
            cls, message = ConfigTypeError, _not_a_table(
                next(iter(_members(here).values())), path, value, keys=False)
        elif not isinstance(tag, str):
            cls, field = ConfigTypeError, f"{path}.{key}"
            message = f"expected a string, got {shorten(tag)}"
        else:
            field = f"{path}.{key}"
            message = f"unknown value {shorten(tag)}; allowed: {', '.join(_members(here))}"
    elif kind in ("model_type", "model_attributes_type", "dict_type"):
        cls, message = ConfigTypeError, _not_a_table(here, path, value)
    elif kind in ("list_type", "tuple_type"):
        cls, message = ConfigTypeError, _not_a_list(here, value)
    elif kind in ("string_type", "bool_type", "int_type", "int_from_float", "int_parsing"):
        cls = ConfigTypeError
        what = {"string_type": "a string", "bool_type": "true or false"}.get(kind, "an integer")
        message = f"expected {what}, got {shorten(value)}"
    elif kind == "literal_error":
        if not isinstance(value, str):
            cls, message = ConfigTypeError, f"expected a string, got {shorten(value)}"
        else:
            message = (f"unknown value {shorten(value)}; allowed: "
                       f"{', '.join(str(a) for a in get_args(here))}")
    elif kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        op, bound = {"greater_than": (">", "gt"), "greater_than_equal": (">=", "ge"),
                     "less_than": ("<", "lt"), "less_than_equal": ("<=", "le")}[kind]
        message = f"must be {op} {_number(ctx[bound])} (got {_number(value)})"
    elif kind == "string_pattern_mismatch":
        message = f"must match {ctx['pattern']} (got {shorten(value)})"
    if rename is not None:
        field = rename(field)
    return cls(field, message)


def _missing(model: Any, loc: tuple, seen: list) -> str:
    """`loc[-1]` is missing from `model`'s table."""
    required = [k for k, (name, info) in zip(_keys(model), model.model_fields.items())
                if info.is_required() and get_origin(info.annotation) is not Literal]
    example = f" (e.g. {model.example})" if getattr(model, "example", "") else ""
    tagged_by = _tag_key(seen[-3], model) if len(seen) > 2 else None
    if tagged_by is not None:
        return f"missing; {tagged_by[0]} {tagged_by[1]!r} needs {', '.join(required)}{example}"
    if len(seen) > 2 and get_origin(seen[-3]) in (tuple, list):
        return f"missing; each entry needs {', '.join(required)}{example}"
    info = _field(model, loc[-1])
    return f"missing ({info.description})" if info is not None and info.description else \
        f"missing; the table needs {', '.join(required)}{example}"


def _tag_key(union: Any, member: Any) -> tuple[str, str] | None:
    """(key, tag) choosing `member` of `union`, if it is a tagged union."""
    for tag, m in _members(union).items():
        if m is member:
            return next(info.alias or name for name, info in m.model_fields.items()
                        if get_args(info.annotation) == (tag,)), tag
    return None


def _unknown_key(model: Any, loc: tuple, seen: list, value: Any) -> tuple[type, str, str]:
    """(error class, field below the key, message) of an unknown key."""
    key = loc[-1]
    union = seen[-3] if len(seen) > 2 else None
    tagged_by = _tag_key(union, model) if union is not None else None
    if tagged_by is not None:       # a key of another member: say whose
        chooser, tag = tagged_by
        owners = [t for t, m in _members(union).items() if _field(m, key) is not None]
        if owners:
            # a value of the wrong kind for that key is named as such first
            info = _field(_members(union)[owners[0]], key)
            try:
                validate(TypeAdapter(info.rebuild_annotation()), value, info.rebuild_annotation())
            except ConfigTypeError as e:
                return ConfigTypeError, e.field, e.message
            except ConfigError:
                pass
            names = sorted(_keys(model))
            allowed = f" (allowed with {tag!r}: {', '.join(names)})" if len(names) <= 10 else ""
            return ConfigError, "", (f"applies to {chooser} = {' or '.join(map(repr, owners))} "
                                     f"only, not {tag!r}: leave it out or set {chooser} = "
                                     f"{owners[0]!r}{allowed}")
    return UnknownKeyError, "", (f"unknown key{did_you_mean(key, _keys(model))}; allowed: "
                                 f"{', '.join(sorted(_keys(model)))}")


def did_you_mean(word: Any, choices) -> str:
    """" (did you mean 'x'?)" naming the nearest of `choices` to a misspelt
    `word` (difflib's closest match), or "" when none is near."""
    import difflib

    near = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""


def _not_a_table(model: Any, path: str, value: Any, keys: bool = True) -> str:
    if not _is_model(model):
        return f"expected a table, got {shorten(value)}"
    if "." not in path and "[" not in path and path:      # a section
        return f"expected a table ([{path}]), got {shorten(value)}"
    names = _keys(model)
    listed = f" with keys {', '.join(names)}" if keys and len(names) <= 7 else ""
    example = f" (e.g. {model.example})" if model.example else ""
    return f"expected a table{listed}{example}, got {shorten(value)}"


def _not_a_list(items: Any, value: Any) -> str:
    item = _unwrap(get_args(items)[0]) if get_args(items) else Any
    if _is_model(item):
        return f"expected a list of tables, e.g. {item.example}; got {shorten(value)}"
    return f"expected a list, got {shorten(value)}"
