"""Reading an XML configuration safely (SPEC section 8.1: "XML is parsed safely"), for the YARN
importers (:mod:`fairshare.workload.imports.yarn_fair`, :mod:`~.yarn_capacity`).

A configuration to import is untrusted input. The file is read through
:func:`fairshare.workload.reading.read_text_file` (at most
:data:`~fairshare.workload.limits.MAX_SCENARIO_BYTES`, UTF-8), then parsed by defusedxml with a
document type declaration refused outright (``forbid_dtd``): no entity is declared, so none is
expanded (no "billion laughs"), and no external reference (``file:///etc/passwd``, a URL) is
ever resolved. Neither Hadoop file needs a DTD. Elements nested deeper than
:data:`~fairshare.workload.limits.MAX_NESTING` are refused before anything walks the tree
recursively. Every problem is a :class:`~fairshare.workload.errors.ScenarioError` naming the
file and the line.

Examples
--------
>>> from fairshare.workload import ScenarioError
>>> parse_xml("<allocations><queue name='a'/></allocations>", "fs.xml").tag
'allocations'
>>> bomb = '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "xx">]><a>&x;</a>'
>>> try:
...     parse_xml(bomb, "bomb.xml")
... except ScenarioError as error:
...     print(error)
error: bomb.xml: line 1: a document type declaration (DTD) is not allowed: entities and external references are refused; remove the <!DOCTYPE ...>
"""  # noqa: E501 (a doctest's output is one line)

from __future__ import annotations

import re
from pathlib import Path
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml import ElementTree as SafeTree

from fairshare.workload.errors import ScenarioError
from fairshare.workload.limits import MAX_NESTING
from fairshare.workload.reading import read_text_file

__all__ = ["parse_xml", "read_xml", "text_of"]

_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)


def read_xml(path: str | Path) -> Element:
    """The root element of the XML file ``path`` (see the module).

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    Element

    Raises
    ------
    ScenarioError
        The file cannot be read, is too large, is not well-formed XML, declares a DTD or
        entities, or nests deeper than the limit.
    """
    return parse_xml(read_text_file(path), str(path))


def parse_xml(text: str, source: str) -> Element:
    """The root element of the XML ``text`` (see the module); ``source`` names it in errors.

    Parameters
    ----------
    text : str
    source : str

    Returns
    -------
    Element

    Raises
    ------
    ScenarioError
        As :func:`read_xml`.
    """
    # The text is already decoded: an encoding declaration (ISO-8859-1 ...) no longer applies.
    body = _DECLARATION.sub("", text, count=1)
    try:
        root = SafeTree.fromstring(
            body, forbid_dtd=True, forbid_entities=True, forbid_external=True
        )
    except DefusedXmlException as err:
        line = _line_of(text, "<!DOCTYPE") or _line_of(text, "<!ENTITY") or 1
        kind = type(err).__name__
        if kind == "DTDForbidden":
            what = (
                "a document type declaration (DTD) is not allowed: entities and external "
                "references are refused; remove the <!DOCTYPE ...>"
            )
        elif kind == "EntitiesForbidden":
            what = "an entity declaration is not allowed (no entity is expanded)"
        else:
            what = "an external reference is not allowed (nothing outside the file is read)"
        raise ScenarioError(source, f"line {line}", what) from None
    except ParseError as err:
        line, column = err.position
        # The declaration removed above was on line 1 and had no newline: lines still match.
        message = str(err).split(":", 1)[0]
        raise ScenarioError(
            source, f"line {line}", f"not well-formed XML ({message} at column {column + 1})"
        ) from None
    _check_depth(root, source)
    return root


def _line_of(text: str, needle: str) -> int | None:
    """The line of the first ``needle`` in ``text``, if any."""
    at = text.find(needle)
    return None if at < 0 else text.count("\n", 0, at) + 1


def _check_depth(root: Element, source: str) -> None:
    """Refuse elements nested deeper than ``MAX_NESTING`` (one level at a time, no
    recursion)."""
    level = [root]
    depth = 1
    while level:
        if depth > MAX_NESTING:
            raise ScenarioError(
                source,
                "file",
                f"elements nested more than {MAX_NESTING} levels deep (the limit); "
                "configurations nest a few levels",
            )
        level = [child for element in level for child in element]
        depth += 1


def text_of(element: Element) -> str:
    """An element's text, stripped (empty when it has none).

    Examples
    --------
    >>> text_of(parse_xml("<weight> 2.0 </weight>", "x"))
    '2.0'
    """
    return (element.text or "").strip()
