"""The ``fairshare`` application object, its error reporting and its entry point.

Input errors never show a traceback: they print one line ``error: FILE: WHERE: WHAT`` on stderr
and exit with code 2 (SPEC section 4). Exit code 1 is reserved for bugs in fairshare. Native
libraries that write to file descriptor 1 cannot corrupt a ``--json`` document
(:func:`stdout_kept_for_output`).

Examples
--------
A bad option is one line and exit code 2:

>>> import contextlib, io
>>> err = io.StringIO()
>>> with contextlib.redirect_stderr(err):
...     try:
...         parse_names("drf,,fair", "--policies", ["drf", "fair"], "policy")
...     except InputError as bad:
...         fail(str(bad))
Traceback (most recent call last):
...
SystemExit: 2
>>> print(err.getvalue(), end="")
error: command line: --policies: expected a comma-separated list, got 'drf,,fair'
"""

from __future__ import annotations

import atexit
import gc
import io
import json
import os
import re
import sys
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, NoReturn, TextIO

import typer

from fairshare.cli import coercion
from fairshare.collector import paused
from fairshare.errors import FairshareError, UnknownPolicy

if TYPE_CHECKING:
    from typer._click import Command as _ClickCommand


def _application() -> typer.Typer:
    """A ``fairshare`` application with no commands yet (:data:`app`, and the one-branch
    trees of :func:`command_tree`)."""
    return typer.Typer(
        name="fairshare",
        help="Fair multi-resource cluster scheduling: exact fair shares, online schedulers, "
        "simulation and fairness checks.",
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        # Docstrings are wrapped prose: markdown joins their lines into paragraphs (rich mode
        # would keep each line break at whatever width the terminal has) and shows ``code``.
        rich_markup_mode="markdown",
    )


def _show_version(value: bool) -> None:
    """``--version``'s callback: print the build (:mod:`fairshare.cli.version`) and stop."""
    if value:
        from fairshare.cli.version import version_lines  # noqa: PLC0415

        sys.stdout.write("\n".join(version_lines()) + "\n")
        raise typer.Exit(0)


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            is_eager=True,
            callback=_show_version,
            help="Print the version, the kernel (compiled or pure Python), Python's version and "
            "the git commit, for a bug report, and exit",
        ),
    ] = False,
) -> None:
    """The root group's callback: ``--version`` (its option's callback does the work)."""


app = _application()
"""The command line: each command module registers its commands on it. Every command and
command group is registered under an explicit name (:func:`command_tree` relies on it)."""
app.callback()(_root)


class InputError(FairshareError):
    """Wrong input detected by the command layer: reported as ``error: FILE: WHERE: WHAT``.

    Parameters
    ----------
    file : str
        The file at fault, or ``command line``.
    where : str
        The field path or option.
    what : str
        What is wrong and what is allowed.
    """

    def __init__(self, file: str, where: str, what: str) -> None:
        super().__init__(f"error: {file}: {where}: {what}")


FLAGS: dict[str, str] = {
    "policy": "--policy",
    "policies": "--policies",
    "reference": "--reference",
    "trace": "--trace",
    "delay": "--delay-scheduling",
    "preemption": "--preemption",
    "pool_order": "--pool-order",
    "headroom": "--headroom",
    "rack_slowdown": "--rack-slowdown",
    "off_rack_slowdown": "--off-rack-slowdown",
    "until": "--until",
    "copy_compute_splitting": "--copy-compute-splitting",
    "reduce_slowstart": "--reduce-slowstart",
    "load_scale": "--load-scale",
    "time_scale": "--time-scale",
    "slots": "--slots",
    "thrash_factor": "--thrash-factor",
    "max_capacity": "--max-capacity",
    "backfill": "--backfill",
    "executor": "--executor",
    "ray_address": "--ray",
    "before_policy": "--before-policy",
    "after_policy": "--after-policy",
    "seeds": "--seeds",
    "max_wait_increase": "--max-wait-increase",
    "usage_half_life": "--usage-half-life",
}
"""The command line's flag for each field or parameter a library error names
(:class:`~fairshare.sim.options.SimOptions`' fields, the API's parameters): the library says
``until``, the command line ``--until`` (SPEC section 4's ``error: FILE: WHERE: WHAT``)."""


def flag(where: str) -> str:
    """A library error's WHERE as the command line spells it: an option's flag for a field
    of :data:`FLAGS`, anything else (a scenario's field path, a job) as it is.

    Parameters
    ----------
    where : str
        The field or parameter a library error names.

    Returns
    -------
    str

    Examples
    --------
    >>> flag("until"), flag("delay"), flag("jobs[3].name")
    ('--until', '--delay-scheduling', 'jobs[3].name')
    """
    return FLAGS.get(where, where)


def flags_in(what: str) -> str:
    """A library error's WHAT with the options it mentions as the command line spells them.

    Only the fields whose names hold an underscore are replaced (``copy_compute_splitting``
    is a field wherever it appears; ``until`` or ``slots`` may be plain words of a sentence).

    Parameters
    ----------
    what : str
        What a library error says is wrong.

    Returns
    -------
    str

    Examples
    --------
    >>> flags_in("EASY backfilling does not combine with copy_compute_splitting")
    'EASY backfilling does not combine with --copy-compute-splitting'
    """
    for field, option in FLAGS.items():
        if "_" in field and field in what:
            what = re.sub(rf"\b{field}\b", option, what)
    return what


JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document")]
"""The ``--json`` option of the commands that print one JSON document on stdout."""


def parse_names(text: str, option: str, allowed: Collection[str], kind: str) -> list[str]:
    """A comma-separated list of policy names, each one of ``allowed``.

    Parameters
    ----------
    text : str
        The option's value.
    option : str
        The option, for the error (``--policies``).
    allowed : collection of str
        The names allowed.
    kind : str
        What a name is, for the error (``online policy``).

    Returns
    -------
    list of str
        The names, spaces stripped, in the order given.

    Raises
    ------
    InputError
        An empty item, or a name not allowed.

    Examples
    --------
    >>> parse_names("drf, fair", "--policies", ["drf", "fair", "fifo"], "policy")
    ['drf', 'fair']
    """
    names = [name.strip() for name in text.split(",")]
    if not text.strip() or any(not name for name in names):
        raise InputError("command line", option, f"expected a comma-separated list, got {text!r}")
    for name in names:
        if name not in allowed:
            raise InputError(
                "command line",
                option,
                f"unknown {kind} {name!r}; allowed: {', '.join(allowed)}",
            )
    return names


def dump_json(document: object) -> None:
    """Print ``document`` as indented JSON on stdout (one document, its own line).

    Parameters
    ----------
    document : object
        A JSON-serialisable value.
    """
    sys.stdout.write(json.dumps(document, indent=2) + "\n")


def fmt(value: object, unit: str = "") -> str:
    """A figure for a table: ``-`` for None, integers with thousands separators, floats to
    four significant digits (two decimals from 100 on).

    Parameters
    ----------
    value : object
        The figure.
    unit : str
        Appended to a float (`` s``).

    Returns
    -------
    str

    Examples
    --------
    >>> fmt(None), fmt(True), fmt(12345), fmt(1234.5678, " s"), fmt(0.123456)
    ('-', 'true', '12,345', '1,234.57 s', '0.1235')
    """
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}{unit}" if abs(value) >= 100 else f"{value:.4g}{unit}"
    return str(value)


def pct(value: object) -> str:
    """A fraction as a percentage with one decimal (``-`` for anything but a number).

    Parameters
    ----------
    value : object
        The fraction.

    Returns
    -------
    str

    Examples
    --------
    >>> pct(0.1234), pct(None)
    ('12.3%', '-')
    """
    return "-" if not isinstance(value, int | float) else f"{100 * value:.1f}%"


_LONGEST_WORD = 120
"""An echoed input value longer than this is cut: an error stays one readable line even when a
trace field holds megabytes."""


_LONGEST_LINE = 1500
"""An error line longer than this (after cutting long words) is cut."""


def fail(message: str) -> NoReturn:
    """Print ``message`` as one line on stderr, long values cut, and exit with code 2.

    Parameters
    ----------
    message : str
        The error, ``error: FILE: WHERE: WHAT``.

    Raises
    ------
    SystemExit
        Always, with code 2.
    """
    words = message.replace("\n", " ").split(" ")
    shown = [w if len(w) <= _LONGEST_WORD else w[:_LONGEST_WORD] + "..." for w in words]
    line = " ".join(shown).rstrip()
    if len(line) > _LONGEST_LINE:
        line = line[:_LONGEST_LINE] + "..."
    sys.stderr.write(line + "\n")
    raise SystemExit(2)


@contextmanager
def stdout_kept_for_output() -> Iterator[None]:
    """Keep the process's standard output for what fairshare itself prints.

    Native libraries (HiGHS, BLAS) may write to file descriptor 1 directly, below Python, which
    would corrupt a ``--json`` document. For the command's duration descriptor 1 points at
    standard error, and ``sys.stdout`` writes to a duplicate of the original descriptor. Only
    the process's own stdout is redirected (not a stream a caller or a test substituted).

    Yields
    ------
    None
        While the block runs, ``sys.stdout`` is the original standard output.
    """
    stream: TextIO = sys.stdout
    try:
        redirect = stream is sys.__stdout__ and stream.fileno() == 1
    except (AttributeError, OSError, ValueError):
        redirect = False
    if not redirect:
        yield
        return
    stream.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    output = io.TextIOWrapper(
        io.FileIO(saved, "w", closefd=False),
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=bool(getattr(stream, "line_buffering", False)),
    )
    sys.stdout = output
    try:
        yield
    finally:
        try:
            output.flush()
        finally:
            sys.stdout = stream
            output.close()
            os.dup2(saved, 1)
            os.close(saved)


_LIBRARY_INPUT_ERRORS = (
    ("fairshare.workload.loader", "ScenarioError"),
    ("fairshare.workload.imports.kueue", "ScenarioError"),
)
"""The library's exceptions that are input errors, by module: looked up only among the
modules a command loaded (:func:`_input_errors`)."""


def _input_errors() -> tuple[type[Exception], ...]:
    """The exception types reported as input errors. A module the command never imported
    cannot have raised its error, and importing it here would make every command pay for it
    (the solvers load HiGHS and SciPy; a ``simulate`` needs neither). :class:`UnknownPolicy`
    is in :mod:`fairshare.errors`, which this module loads anyway."""
    errors: list[type[Exception]] = [InputError, UnknownPolicy]
    for module, name in _LIBRARY_INPUT_ERRORS:
        loaded = sys.modules.get(module)
        if loaded is not None:
            errors.append(getattr(loaded, name))
    return tuple(errors)


def _no_collection_at_exit() -> None:
    """Move every object out of the cyclic collector's reach as the interpreter exits.

    The interpreter's shutdown runs the collector several times, each a full pass over the
    objects the loaded libraries keep (some 70,000 after a ``simulate``: numpy, polars,
    typer, rich): 0.1-0.15 CPU s in all, against 0.04 s with them frozen. Garbage left in
    cycles then is not finalized: the command has closed its files, and the exit releases
    the memory. Registered by :func:`main`, so only a process that ran a command exits this
    way."""
    gc.freeze()


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``fairshare`` console script.

    The cyclic collector is paused while the command runs (:func:`fairshare.collector.paused`):
    the commands build large data without reference cycles (a ``check --all`` leaves none to
    collect), and its passes over a ``simulate``'s scenario, imports and outputs cost 0.1 CPU
    s. Cycles made meanwhile are collected by its first pass after."""
    atexit.unregister(_no_collection_at_exit)
    atexit.register(_no_collection_at_exit)
    with paused():
        _run(argv)


def command_tree(argv: Sequence[str], *, whole: bool = False) -> _ClickCommand:
    """The click command tree that runs ``fairshare ARGV``, its options given plain
    converters (:func:`fairshare.cli.coercion.install`).

    typer makes each command's options from its function's signature, evaluating every
    annotation: 20 ms for all of fairshare's commands, 2 ms for one. When ``argv`` starts with
    a command's or a command group's name, the tree holds only that branch under the same
    root, so the command parses, runs, fails and prints its help as in the whole tree
    (``tests/test_cli_tree.py`` compares them); anything else (``--help``, a misspelt
    command, nothing) gets the whole tree, which lists and suggests every command.

    Parameters
    ----------
    argv : sequence of str
        The arguments after ``fairshare``.
    whole : bool
        Build every command whatever ``argv`` names.

    Returns
    -------
    click.Command
        The root group.
    """
    name = argv[0] if argv else None
    commands = [info for info in app.registered_commands if info.name == name]
    groups = [info for info in app.registered_groups if info.name == name]
    if whole or not (commands or groups):
        tree = typer.main.get_command(app)
    else:
        branch = _application()
        branch.registered_commands = commands
        branch.registered_groups = groups
        # The whole tree's root callback (--version); it also keeps a group of one command
        # (typer makes an application of one command that command itself).
        branch.callback()(_root)
        tree = typer.main.get_command(branch)
    coercion.install(tree)
    coercion.help_metavars(tree)
    return tree


def _run(argv: list[str] | None) -> NoReturn:
    given = sys.argv[1:] if argv is None else argv
    if given in (["--version"], ["-V"]):  # without building the command tree
        from fairshare.cli.version import version_lines  # noqa: PLC0415

        sys.stdout.write("\n".join(version_lines()) + "\n")
        raise SystemExit(0)
    command = command_tree(given)
    try:
        with stdout_kept_for_output():
            code = command.main(args=argv, prog_name="fairshare", standalone_mode=False)
    except typer.Abort:
        fail("error: command line: aborted")
    except typer.TyperException as err:
        # Typer's usage errors (missing or malformed options and arguments).
        context = getattr(err, "ctx", None)
        where = context.command_path if context is not None else "fairshare"
        message = getattr(err, "format_message", err.__str__)()
        fail(f"error: command line: {where}: {message}")
    except BrokenPipeError:
        sys.stderr.close()
        raise SystemExit(0) from None
    except Exception as err:
        if not isinstance(err, _input_errors()):
            raise
        if isinstance(err, UnknownPolicy):
            fail(f"error: command line: {flag(err.where)}: {err.what}")
        fail(str(err) if str(err).startswith("error:") else f"error: {err}")
    raise SystemExit(code if isinstance(code, int) else 0)
