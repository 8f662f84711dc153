"""The live scheduler service (SPEC section 6): the durable store
(:mod:`fairshare.service.store`), the tenants' requests (:mod:`fairshare.service.core`), the
HTTP API (:mod:`fairshare.service.app`, the ``[ray]`` extra's FastAPI) and its Python client
(:mod:`fairshare.service.client`). Nothing is imported here: the client commands load only
the client, and ``import fairshare`` none of it.

The process (:mod:`fairshare.service.server`, ``fairshare serve``) puts them together: the
API writes each accepted request to the store and hands it to the live driver
(:class:`fairshare.backends.LiveDriver`), which runs the scenario's online policy over the
cluster's nodes."""
