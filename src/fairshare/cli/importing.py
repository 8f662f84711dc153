"""``fairshare import``: the command group of SPEC section 8.1, converting a production
scheduler's configuration into a scenario; one module per format registers its command on
:data:`import_app` (:mod:`fairshare.cli.import_kueue`, :mod:`fairshare.cli.import_slurm`), and
:func:`write_scenario` writes what
they convert."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from fairshare.cli.app import InputError, app

import_app = typer.Typer(
    help="Convert a production scheduler's configuration into a scenario (YAML on stdout, "
    "or -o FILE); what the model does not cover is one warning line each, on stderr.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)

app.add_typer(import_app, name="import")


def write_scenario(scenario: dict[str, object], warnings: list[str], out: str | None) -> None:
    """Print the warnings on stderr, then the scenario as YAML on stdout, or write it to
    ``out`` (JSON when its name ends in ``.json``, else YAML).

    Parameters
    ----------
    scenario : dict
        The scenario mapping.
    warnings : list of str
        ``warning:`` lines.
    out : str, optional
        The file to write.

    Raises
    ------
    InputError
        ``out`` cannot be written.
    """
    import yaml  # noqa: PLC0415

    # libyaml's emitter writes the same text as PyYAML's Python one, 10 times faster: 12 s of
    # a 10,000-queue import were the Python emitter (benchmarks/import_speed.py).
    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class _Plain(base):  # type: ignore[valid-type,misc]
        """Safe YAML without anchors: every value written where it is used."""

        def ignore_aliases(self, data: object) -> bool:
            return True

    for line in warnings:
        sys.stderr.write(line + "\n")
    if out is not None and out.lower().endswith(".json"):
        text = json.dumps(scenario, indent=2) + "\n"
    else:
        text = yaml.dump(
            scenario, Dumper=_Plain, sort_keys=False, default_flow_style=None, width=100
        )
    if out is None:
        sys.stdout.write(text)
        return
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as err:
        raise InputError(out, "-o", f"cannot write ({err.strerror or err})") from None
