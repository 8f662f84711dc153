"""How ``fairshare serve`` speaks HTTP (SPEC section 6, "Additions (production use)"): TLS,
the timeouts that close a connection which sends its request too slowly, and the limit on
connections at once, as uvicorn's options.

uvicorn closes an idle keep-alive connection (``timeout_keep_alive``) and bounds a request's
head (``h11_max_incomplete_event_size``), but a connection that sends part of a header and
then nothing stays open for ever: enough of them exhaust the process's file descriptors and
the service stops answering. :func:`http_protocol` adds a header timeout to uvicorn's own
h11 protocol: a connection whose request head is not complete ``header_seconds`` after it
opened (or after its previous response) is closed. With it, ``max_connections`` (uvicorn's
``limit_concurrency``: past it a request is answered 503) stays well under the descriptor
limit, and the slow connections are gone within ``header_seconds``. The body's own timeout
is the API's (:class:`fairshare.service.core.Limits`' ``body_seconds``: 408).

Examples
--------
>>> exposure_warning("127.0.0.1", tls=False) is None
True
>>> exposure_warning("0.0.0.0", tls=True) is None
True
>>> print(exposure_warning("0.0.0.0", tls=False))  # doctest: +ELLIPSIS
warning: --host 0.0.0.0 is not a loopback address and the API is served without TLS: ...
>>> sorted(uvicorn_options(Transport()))
['h11_max_incomplete_event_size', 'limit_concurrency', 'timeout_keep_alive']
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import ssl
from dataclasses import dataclass
from typing import Any

from fairshare.errors import FairshareError

__all__ = [
    "Transport",
    "TransportError",
    "check_tls",
    "exposure_warning",
    "http_protocol",
    "uvicorn_options",
]


class TransportError(FairshareError):
    """A TLS file that cannot be used.

    Parameters
    ----------
    where : str
        The option (``tls_cert``, ``tls_key``).
    what : str
        What is wrong.
    """

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what


@dataclass(frozen=True)
class Transport:
    """The HTTP side of ``serve``.

    Parameters
    ----------
    tls_cert : str or None
        The certificate chain (PEM); with ``tls_key``, the API is HTTPS.
    tls_key : str or None
        Its private key (PEM).
    header_seconds : float
        A request's head must be complete this long after the connection opened (or its
        previous response ended); else the connection is closed.
    keep_alive_seconds : float
        An idle keep-alive connection is closed after this long.
    max_connections : int
        Connections (and requests in progress) at once; past it a request is answered 503.
    max_header_bytes : int
        The largest request head.
    """

    tls_cert: str | None = None
    tls_key: str | None = None
    header_seconds: float = 10.0
    keep_alive_seconds: float = 5.0
    max_connections: int = 512
    max_header_bytes: int = 16_384

    @property
    def tls(self) -> bool:
        """Whether the API is served over TLS."""
        return self.tls_cert is not None


def exposure_warning(host: str, *, tls: bool) -> str | None:
    """The ``warning:`` line for an API listening beyond this machine without TLS (None:
    a loopback address, or TLS).

    Parameters
    ----------
    host : str
        ``--host``.
    tls : bool
        Whether TLS is on.

    Returns
    -------
    str or None
    """
    if tls or host == "localhost":
        return None
    try:
        if ipaddress.ip_address(host.strip("[]")).is_loopback:
            return None
    except ValueError:
        pass  # a host name other than localhost: it may resolve anywhere
    return (
        f"warning: --host {host} is not a loopback address and the API is served without "
        "TLS: tokens cross the network in clear text (give --tls-cert and --tls-key)"
    )


def check_tls(cert: str | None, key: str | None) -> None:
    """Check that the certificate and key are given together and load (before anything
    starts).

    Parameters
    ----------
    cert : str or None
        The certificate chain's file.
    key : str or None
        The private key's file.

    Raises
    ------
    TransportError
        One without the other, or files that do not load as a certificate and its key.
    """
    if cert is None and key is None:
        return
    if cert is None or key is None:
        given, missing = ("tls_cert", "tls_key") if cert is not None else ("tls_key", "tls_cert")
        raise TransportError(missing, f"missing: {given} needs it (HTTPS needs both)")
    for where, path in (("tls_cert", cert), ("tls_key", key)):
        if not os.path.isfile(path):
            raise TransportError(where, f"no such file: {path}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as err:
        raise TransportError(
            "tls_cert", f"{cert} and {key} do not load as a PEM certificate and its key ({err})"
        ) from None


def uvicorn_options(transport: Transport) -> dict[str, Any]:
    """uvicorn's ``Config`` options for ``transport`` (the header timeout aside: see
    :func:`http_protocol`).

    Parameters
    ----------
    transport : Transport

    Returns
    -------
    dict
    """
    options: dict[str, Any] = {
        "timeout_keep_alive": transport.keep_alive_seconds,
        "limit_concurrency": transport.max_connections,
        "h11_max_incomplete_event_size": transport.max_header_bytes,
    }
    if transport.tls:
        options["ssl_certfile"] = transport.tls_cert
        options["ssl_keyfile"] = transport.tls_key
    return options


def http_protocol(header_seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a header timeout (uvicorn's ``http`` option; see the
    module): a connection whose request head is not complete ``header_seconds`` after it
    opened, or after its previous response, is closed.

    Parameters
    ----------
    header_seconds : float

    Returns
    -------
    type
        An ``asyncio.Protocol`` class for ``uvicorn.Config(http=...)``.
    """
    import h11  # noqa: PLC0415
    from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: PLC0415

    class HeaderTimeout(H11Protocol):  # type: ignore[misc, unused-ignore]
        """h11, closing a connection whose request head is late (see :func:`http_protocol`)."""

        def connection_made(  # type: ignore[override, unused-ignore]
            self, transport: asyncio.Transport
        ) -> None:
            super().connection_made(transport)
            self.responses = 0
            self._arm()

        def on_response_complete(self) -> None:
            self.responses += 1
            super().on_response_complete()
            self._arm()

        def _arm(self) -> None:
            """Close the connection if no request head arrived ``header_seconds`` from now
            (a response in between re-arms it)."""
            served = self.responses
            self.loop.call_later(header_seconds, self._late, served)

        def _late(self, served: int) -> None:
            # h11 leaves the client's state IDLE until a whole request head is parsed.
            if (
                served == self.responses
                and self.conn.their_state is h11.IDLE
                and not self.transport.is_closing()
            ):
                self.transport.close()

    return HeaderTimeout
