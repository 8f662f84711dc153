"""The one way to build a HiGHS model: silent, and never writing on the caller's stdout.

Every HiGHS model of the package (the progressive-filling LP of
:mod:`fairshare.solvers.filling_model`) is built by :func:`new_highs`, never by
``highspy.Highs()`` directly: a command printing JSON on descriptor 1 must not find HiGHS's
banner in it (``tests/test_executable.py`` checks every ``--json`` command).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

import highspy

_STDOUT_LOCK = threading.Lock()


def new_highs() -> highspy.Highs:
    """A silent HiGHS model.

    highspy 1.16 prints its banner on file descriptor 1 while ``Highs()`` is constructed, before
    ``output_flag`` can be set, which would corrupt the JSON a caller prints on stdout. So the
    descriptor points at the null device for the construction only (under a lock: descriptors
    are per process). Where descriptor 1 cannot be duplicated (closed, or a sandbox), the model
    is built as it is.

    Returns
    -------
    highspy.Highs
        An empty model with ``output_flag`` off.

    Examples
    --------
    >>> highs = new_highs()
    >>> highs.getOptionValue("output_flag")[1]
    False
    """
    with _STDOUT_LOCK:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        try:
            saved = os.dup(1)
        except OSError:
            saved = -1
        if saved < 0:
            highs = highspy.Highs()  # type: ignore[no-untyped-call]
        else:
            try:
                null = os.open(os.devnull, os.O_WRONLY)
                try:
                    os.dup2(null, 1)
                finally:
                    os.close(null)
                highs = highspy.Highs()  # type: ignore[no-untyped-call]
            finally:
                os.dup2(saved, 1)
                os.close(saved)
    highs.setOptionValue("output_flag", False)
    return highs
