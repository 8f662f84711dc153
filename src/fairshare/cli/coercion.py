"""Command-line values converted without pydantic, for the plain types of fairshare's options.

typer (0.29 and later) converts every option's value through a pydantic ``TypeAdapter``, built
the first time the option is processed, and every option of the invoked command is processed,
given or not. Importing pydantic and building those adapters took 50-65 ms of every command,
a sixth of a small ``fairshare solve``. fairshare's options are plain (text, whole numbers
within bounds, decimal numbers, flags), so :func:`install` gives each such option of a command
tree a converter of its own, which

- converts the usual spellings itself: any text; a whole number written ``-?digits`` without
  leading zeros; a decimal number in JSON's spelling; a value that already has the type (a
  default; an integer for a decimal option);
- hands everything else to typer's own conversion, built on first need, so that every error
  message and every unusual spelling (``+5``, ``1_000``, a leading space, ``inf``) is typer's.

What it returns is what typer returns, value and type (``tests/test_cli_coercion.py`` compares
the two on generated spellings). Options of other types (lists, paths, choices, files, custom
parsers) keep typer's conversion, so a command declares the paths it reads as text and makes
the :class:`~pathlib.Path` itself. Should typer's internals not be what this module expects (a
new release), :func:`install` leaves every option to typer: the commands work as before, only
slower, and a test fails so that we notice.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["help_metavars", "install", "installed"]

_TYPER = object()
"""A plain converter's answer for a value it leaves to typer's conversion."""

_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
"""Whole numbers as people write them, short enough to be exact in any integer type."""
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]{1,3})?")
"""Decimal numbers in JSON's spelling (a non-finite result is still typer's to give)."""
_EXACT_INTEGER = 2**53
"""Integers a decimal option takes as they are: converting larger ones to float may round."""

Converter = Callable[[object], object]
"""A value to its converted form, or :data:`_TYPER`."""


def _within(low: float | None, high: float | None) -> Callable[[float], bool]:
    """The bounds of ``typer.Option(min=, max=)`` as a test (typer refuses, never clamps,
    unless asked to clamp, and such options are left to it)."""
    return lambda number: (low is None or number >= low) and (high is None or number <= high)


def _text(value: object) -> object:
    return value if type(value) is str else _TYPER


def _flag(value: object) -> object:
    return value if type(value) is bool else _TYPER


def _integer(within: Callable[[float], bool]) -> Converter:
    def convert(value: object) -> object:
        if type(value) is str and _INTEGER.fullmatch(value):
            number = int(value)
        elif type(value) is int:
            number = value
        else:
            return _TYPER
        return number if within(number) else _TYPER

    return convert


def _decimal(within: Callable[[float], bool]) -> Converter:
    def convert(value: object) -> object:
        text = type(value) is str and _DECIMAL.fullmatch(value) is not None
        exact = type(value) is float or (type(value) is int and abs(value) <= _EXACT_INTEGER)
        if not (text or exact):
            return _TYPER
        number = float(value)  # type: ignore[arg-type]
        return number if math.isfinite(number) and within(number) else _TYPER

    return convert


def _converter(annotation: object, info: object) -> Converter | None:
    """The plain converter of an option of ``annotation`` with typer's ``info``, or None
    for one typer converts (any type or setting other than the plain ones, or settings this
    module does not know)."""
    settings = ("parser", "min", "max", "clamp")
    if not all(hasattr(info, name) for name in settings):
        return None
    parser, low, high, clamp = (getattr(info, name) for name in settings)
    if parser is not None or clamp:
        return None
    if annotation is str and low is None and high is None:
        return _text
    if annotation is bool and low is None and high is None:
        return _flag
    if annotation is int:
        return _integer(_within(low, high))
    if annotation is float:
        return _decimal(_within(low, high))
    return None


@functools.cache
def _plain_class() -> type | None:
    """The class of plain converters, a typer ``RuntimeParam``; None if typer has none."""
    try:
        from typer._coercion import RuntimeParam, build_runtime_param  # noqa: PLC0415
    except ImportError:
        return None

    @dataclass(frozen=True)
    class PlainRuntimeParam(RuntimeParam):
        """An option's conversion: :data:`convert`, else typer's own (built on first need)."""

        convert: Converter
        descriptor: Any
        fallback: list[Any]

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            converted = self.convert(value)
            if converted is not _TYPER:
                return converted
            if not self.fallback:
                self.fallback.append(build_runtime_param(self.descriptor))
            return self.fallback[0]._coerce_value(value, param=param, ctx=ctx)

    return PlainRuntimeParam


def _parameters(command: Any, parent: Any = None) -> Iterator[Any]:
    """Every parameter of a click command and of the commands under it, with the help
    options click makes on first need (it processes them like any option, given or not)."""
    yield from getattr(command, "params", ())
    context = None
    try:
        settings = dict(getattr(command, "context_settings", None) or {})
        context = command.context_class(command, parent=parent, info_name=command.name, **settings)
        help_option = command.get_help_option(context)
    except (AttributeError, TypeError):
        help_option = None
    if help_option is not None:
        yield help_option
    for sub in getattr(command, "commands", {}).values():
        yield from _parameters(sub, context)


def install(command: Any) -> int:
    """Give each plain option of ``command`` and its subcommands a plain converter.

    Parameters
    ----------
    command : click.Command
        A command tree as ``typer.main.get_command`` builds it.

    Returns
    -------
    int
        How many options got one (0 when typer's internals are not what this module expects).
    """
    plain = _plain_class()
    if plain is None:
        return 0
    count = 0
    for param in _parameters(command):
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", False) is not None:
            continue
        if getattr(descriptor, "file_annotation", None) is not None:
            continue
        info = getattr(descriptor, "parameter_info", None)
        convert = _converter(getattr(descriptor, "annotation", None), info)
        if convert is None:
            continue
        param._runtime_param = plain(
            parameter_info=info,
            annotation=descriptor.annotation,
            convert=convert,
            descriptor=descriptor,
            fallback=[],
        )
        count += 1
    return count


_HELP_METAVARS = {int: "INT", float: "NUMBER", str: "TEXT"}
"""The metavar of an option of a plain type that names none (:func:`help_metavars`)."""


def help_metavars(command: Any) -> int:
    """Give the options of ``command`` and its subcommands short metavars for ``--help``.

    typer's rich help prints an option's metavar, else its type: ``<bool>`` after a flag,
    which takes no value, and ``<int range>`` or ``<float>`` after others. The help's table
    narrows every column alike when the terminal is narrow, so a wide type column cut long
    option names (``--copy-compute-split…`` at 80 columns). A flag gets the empty metavar
    (shown as nothing; click never shows a flag's metavar elsewhere), an option of a plain
    type without one ``INT``, ``NUMBER`` or ``TEXT``.

    Parameters
    ----------
    command : click.Command
        A command tree as ``typer.main.get_command`` builds it.

    Returns
    -------
    int
        How many options it changed.
    """
    count = 0
    for param in _parameters(command):
        if getattr(param, "param_type_name", None) != "option" or param.metavar is not None:
            continue
        if getattr(param, "is_flag", False):
            param.metavar = ""
        else:
            descriptor = getattr(param, "type_descriptor", None)
            annotation = getattr(descriptor, "annotation", None)
            if annotation not in _HELP_METAVARS or getattr(param, "nargs", 1) != 1:
                continue
            param.metavar = _HELP_METAVARS[annotation]
        count += 1
    return count


def installed(param: Any) -> bool:
    """True if ``param`` converts its values with a plain converter of :func:`install`.

    Parameters
    ----------
    param : click.Parameter
        An option or argument of a command tree :func:`install` was given.

    Returns
    -------
    bool
    """
    runtime = getattr(param, "_runtime_param", None)
    return runtime is not None and hasattr(runtime, "convert")
