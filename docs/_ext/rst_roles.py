"""Griffe extension for the docs build: Sphinx roles in docstrings as code spans.

The docstrings cite objects with Sphinx roles (``:class:`Scenario```, ``:func:`solve```), which
Markdown would print as they are. This renders each as the code span of its target, without
a link: many targets are relative or private names that a link checker would reject.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|obj|exc|const):`~?([^`]+)`")


class RstRoles(griffe.Extension):
    """Rewrites ``:role:`target``` to ```target``` in every docstring griffe loads."""

    def on_instance(self, *args: Any, **kwargs: Any) -> None:
        obj = kwargs.get("obj")
        docstring = getattr(obj, "docstring", None)
        if docstring is not None:
            docstring.value = _ROLE.sub(r"`\1`", docstring.value)
