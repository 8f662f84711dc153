"""The live service's commands (SPEC section 6): ``serve``, ``tenant add``, and the client
commands ``submit``, ``jobs``, ``cancel`` and ``shares`` over its HTTP API.

``serve`` needs the ``[ray]`` extra (Ray, FastAPI, uvicorn) and the client commands httpx; both
are imported inside the commands, so that every other command works without them.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from fairshare.cli.app import InputError, JsonOption, app, dump_json, flag, flags_in
from fairshare.cli.names import ONLINE_HELP
from fairshare.cli.runs import simulation_options
from fairshare.sim.option_table import BACKFILL, USAGE_HALF_LIFE

if TYPE_CHECKING:
    from fairshare.service.client import Client
    from fairshare.service.sandbox import SandboxChoice
    from fairshare.service.transport import Transport

tenant_app = typer.Typer(
    name="tenant",
    help="Tenants of the live service (bearer tokens).",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)
app.add_typer(tenant_app, name="tenant")

ServerOption = Annotated[
    str | None,
    typer.Option(
        "--server",
        metavar="URL",
        help="The service's address (default: $FAIRSHARE_SERVER, else http://127.0.0.1:8765)",
    ),
]
TokenOption = Annotated[
    str | None,
    typer.Option(
        "--token",
        metavar="TOKEN",
        help="Bearer token (visible in ps: prefer $FAIRSHARE_TOKEN or --token-file)",
    ),
]
TokenFileOption = Annotated[
    str | None,
    typer.Option(
        "--token-file",
        metavar="FILE",
        help="Read the bearer token from FILE (default: $FAIRSHARE_TOKEN_FILE)",
    ),
]
CacertOption = Annotated[
    str | None,
    typer.Option(
        "--cacert",
        metavar="FILE",
        help="Trust the service's TLS certificate through FILE (PEM; default: "
        "$FAIRSHARE_CACERT, else the system's authorities)",
    ),
]
DbOption = Annotated[str, typer.Option("--db", metavar="PATH", help="The service's database")]


def _missing_extra(what: str, module: str) -> InputError:
    """The input error of a command whose extra is not installed, naming what to install."""
    return InputError(
        "command line",
        what,
        f"needs the {module} package: pip install 'fairshare[ray]' (or fairshare[client] "
        "for the client commands)",
    )


def _client(
    server: str | None,
    token: str | None,
    token_file: str | None = None,
    cacert: str | None = None,
) -> Client:
    """The client of ``--server``, the token (``--token``, ``--token-file`` or their
    environment variables) and ``--cacert``, checked."""
    from fairshare.service.client import DEFAULT_SERVER  # noqa: PLC0415

    try:
        import httpx  # noqa: F401, PLC0415

        from fairshare.service.client import Client  # noqa: PLC0415
    except ImportError:
        raise _missing_extra("client", "httpx") from None
    url = server or os.environ.get("FAIRSHARE_SERVER") or DEFAULT_SERVER
    secret = _token(token, token_file)
    if not url.startswith(("http://", "https://")):
        raise InputError("command line", "--server", f"expected an http(s):// URL, got {url!r}")
    authority = cacert or os.environ.get("FAIRSHARE_CACERT") or None
    if authority is not None:
        flag_ = "--cacert" if cacert else "FAIRSHARE_CACERT"
        if not url.startswith("https://"):
            raise InputError("command line", flag_, f"needs an https:// --server, got {url!r}")
        if not Path(authority).is_file():
            raise InputError(authority, flag_, "no such file (a PEM certificate)")
    try:
        return Client(url, secret, cacert=authority)
    except (OSError, ValueError) as err:
        raise InputError(str(authority), "--cacert", f"not a PEM certificate ({err})") from None


def _token(token: str | None, token_file: str | None) -> str:
    """The bearer token: ``--token`` (with a warning: any user sees it in ``ps``), else
    ``--token-file`` / ``FAIRSHARE_TOKEN_FILE``'s first line, else ``FAIRSHARE_TOKEN``."""
    if token is not None:
        sys.stderr.write(
            "warning: --token is visible to every user of this machine in ps: "
            "use --token-file or FAIRSHARE_TOKEN\n"
        )
        secret = token
    else:
        path = token_file or os.environ.get("FAIRSHARE_TOKEN_FILE") or None
        if path is not None:
            where = "--token-file" if token_file else "FAIRSHARE_TOKEN_FILE"
            try:
                with open(path, encoding="utf-8") as handle:
                    secret = handle.read(4096).strip().partition("\n")[0].strip()
            except (OSError, UnicodeDecodeError) as err:
                raise InputError(path, where, f"cannot read it ({err})") from None
            if not secret:
                raise InputError(path, where, "is empty: expected a bearer token")
        else:
            secret = os.environ.get("FAIRSHARE_TOKEN") or ""
    if not secret:
        raise InputError(
            "command line",
            "--token-file",
            "missing: pass --token-file FILE or set FAIRSHARE_TOKEN (or FAIRSHARE_TOKEN_FILE)",
        )
    return secret


def _call(client: Client, method: str, *args: Any, **kwargs: Any) -> Any:
    """A client call; a refusal or an unreachable service is one ``error:`` line (exit 2)."""
    from fairshare.service.client import ClientError  # noqa: PLC0415

    try:
        return getattr(client, method)(*args, **kwargs)
    except ClientError as err:
        status = f"HTTP {err.status}" if err.status else "connection"
        raise InputError(client.server, status, err.message) from None
    finally:
        client.close()


def _demand(text: str) -> dict[str, float]:
    """``cpu=1,mem=2`` as a demand (``--demand``); an input error for anything else."""
    demand: dict[str, float] = {}
    for part in text.split(","):
        name, sep, amount = part.partition("=")
        try:
            value = float(amount)
        except ValueError:
            value = math.nan
        if not sep or not name.strip() or not math.isfinite(value) or value < 0:
            raise InputError(
                "command line",
                "--demand",
                f"expected RESOURCE=AMOUNT pairs separated by commas (amounts >= 0), e.g. "
                f"cpu=1,mem=2; got {text!r}",
            )
        if name.strip() in demand:
            raise InputError("command line", "--demand", f"{name.strip()!r} is given twice")
        demand[name.strip()] = value
    return demand


@app.command("submit")
def submit_command(
    command: Annotated[
        list[str], typer.Argument(metavar="-- COMMAND ARGS...", help="What each task runs")
    ],
    name: Annotated[str, typer.Option("--name", help="The job's name")],
    tasks: Annotated[int, typer.Option("--tasks", min=1, help="How many tasks")],
    demand: Annotated[
        str, typer.Option("--demand", metavar="R=N,...", help="Per task, e.g. cpu=1,mem=2")
    ],
    constraint: Annotated[
        str | None, typer.Option("--constraint", metavar="EXPR", help="Placement constraint")
    ] = None,
    max_retries: Annotated[
        int | None,
        typer.Option("--max-retries", min=0, help="Failures a task may have and run again"),
    ] = None,
    gang: Annotated[
        bool, typer.Option("--gang", help="All its tasks start together, or none does")
    ] = False,
    min_tasks: Annotated[
        int | None,
        typer.Option(
            "--min-tasks", metavar="N", help="A gang: at least N of its tasks start together"
        ),
    ] = None,
    priority: Annotated[
        int | None,
        typer.Option("--priority", metavar="N", help="Priority among your jobs (higher first)"),
    ] = None,
    estimate: Annotated[
        float | None,
        typer.Option(
            "--estimate",
            metavar="SECONDS",
            help="Seconds a task is expected to run at most (EASY backfilling counts on it)",
        ),
    ] = None,
    server: ServerOption = None,
    token: TokenOption = None,
    token_file: TokenFileOption = None,
    cacert: CacertOption = None,
) -> None:
    """Submit a job to the service: TASKS tasks, each running COMMAND with
    FAIRSHARE_TASK_INDEX set. Prints the job's id."""
    wanted = _demand(demand)
    if gang:
        if min_tasks is not None and min_tasks != tasks:
            raise InputError(
                "command line",
                "--min-tasks",
                f"a gang starts all its {tasks} tasks together: give --gang or --min-tasks, "
                f"or both equal to --tasks; got {min_tasks}",
            )
        min_tasks = tasks
    if estimate is not None and not (math.isfinite(estimate) and estimate > 0):
        raise InputError(
            "command line", "--estimate", f"must be a number of seconds > 0, got {estimate:g}"
        )
    client = _client(server, token, token_file, cacert)
    job_id = _call(
        client,
        "submit",
        name,
        tasks,
        wanted,
        command,
        constraint=constraint,
        max_retries=max_retries,
        min_tasks=min_tasks,
        priority=priority,
        estimate=estimate,
    )
    sys.stdout.write(f"{job_id}\n")


@app.command("jobs")
def jobs_command(
    server: ServerOption = None,
    token: TokenOption = None,
    token_file: TokenFileOption = None,
    cacert: CacertOption = None,
    as_json: JsonOption = False,
) -> None:
    """Your jobs on the service and their tasks' states."""
    jobs = _call(_client(server, token, token_file, cacert), "jobs")
    if as_json:
        dump_json({"jobs": jobs})
        return
    table = Table(title="jobs", title_justify="left")
    # Ids are copied into `fairshare cancel`: never cut.
    table.add_column("id", no_wrap=True, min_width=max((len(j["id"]) for j in jobs), default=2))
    for column in ("name", "state", *_COUNTS):
        table.add_column(column, justify="right" if column in _COUNTS else "left")
    for job in jobs:
        counts = job["tasks"]
        table.add_row(job["id"], job["name"], job["state"], *(str(counts[c]) for c in _COUNTS))
    Console(markup=False, highlight=False).print(table)


_COUNTS = ("pending", "running", "finished", "failed", "cancelled")


def explain_live(
    job_id: str,
    server: str | None,
    token: str | None,
    token_file: str | None,
    cacert: str | None,
) -> dict[str, Any]:
    """``fairshare explain ID --server URL``: SPEC section 8.5's document of one of the
    token's tenant's jobs, from the service (``GET /v1/jobs/{id}/explain``).

    Parameters
    ----------
    job_id : str
        The job's id.
    server, token, token_file, cacert : str or None
        As the other client commands take them.

    Returns
    -------
    dict
    """
    why: dict[str, Any] = _call(_client(server, token, token_file, cacert), "explain", job_id)
    return why


@app.command("cancel")
def cancel_command(
    job_id: Annotated[str, typer.Argument(metavar="ID", help="The job's id")],
    server: ServerOption = None,
    token: TokenOption = None,
    token_file: TokenFileOption = None,
    cacert: CacertOption = None,
) -> None:
    """Cancel one of your jobs: its pending tasks are dropped, its running tasks stopped;
    prints what was done."""
    report = _call(_client(server, token, token_file, cacert), "cancel_reported", job_id)
    sys.stdout.write(f"{report['message']}\n")


@app.command("logs")
def logs_command(
    job_id: Annotated[str, typer.Argument(metavar="JOB", help="The job's id")],
    task: Annotated[int, typer.Option("--task", min=0, help="The task's index")] = 0,
    attempt: Annotated[
        int | None, typer.Option("--attempt", min=0, help="The attempt (default: the latest)")
    ] = None,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing until the attempt ends")
    ] = False,
    stderr: Annotated[
        bool, typer.Option("--stderr", help="The task's standard error, not its output")
    ] = False,
    server: ServerOption = None,
    token: TokenOption = None,
    token_file: TokenFileOption = None,
    cacert: CacertOption = None,
) -> None:
    """A task's output (each stream kept up to 8 MiB on the node that ran it)."""
    import time  # noqa: PLC0415

    from fairshare.service.client import ClientError  # noqa: PLC0415

    client = _client(server, token, token_file, cacert)
    stream = "stderr" if stderr else "stdout"
    offset = 0
    out = sys.stdout.buffer
    try:
        while True:
            data, head = client.logs(
                job_id, task=task, attempt=attempt, stream=stream, offset=offset
            )
            out.write(data)
            out.flush()
            offset = int(head["next"])
            # The attempt followed stays the one first read (a retry is another attempt).
            attempt = int(head["attempt"]) if head["attempt"] else attempt
            if data:
                continue
            if not follow or head["ended"] == "true":
                return
            time.sleep(FOLLOW_SECONDS)
    except ClientError as err:
        status = f"HTTP {err.status}" if err.status else "connection"
        raise InputError(client.server, status, err.message) from None
    finally:
        client.close()


FOLLOW_SECONDS = 0.5
"""How often ``fairshare logs --follow`` asks for more output."""


@app.command("shares")
def shares_command(
    server: ServerOption = None,
    token: TokenOption = None,
    token_file: TokenFileOption = None,
    cacert: CacertOption = None,
    as_json: JsonOption = False,
) -> None:
    """Every user's running tasks and share under the service's policy now."""
    doc = _call(_client(server, token, token_file, cacert), "shares")
    if as_json:
        dump_json(doc)
        return
    table = Table(title=f"shares ({doc['policy']})", title_justify="left")
    for column in ("user", "running tasks", "share"):
        table.add_column(column, justify="left" if column == "user" else "right")
    for user, entry in doc["users"].items():
        table.add_row(user, str(entry["running_tasks"]), f"{entry['share']:.4f}")
    Console(markup=False, highlight=False).print(table)


@tenant_app.command("add")
def tenant_add_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="A user of the scenario")],
    db: DbOption,
    admin: Annotated[
        bool, typer.Option("--admin", help="An administrator token (manages tenants)")
    ] = False,
    scenario: Annotated[
        Path | None,
        typer.Option("--scenario", metavar="FILE", help="Check that NAME is one of its users"),
    ] = None,
) -> None:
    """Print a new bearer token for tenant NAME (only its hash is stored)."""
    from fairshare.service.store import Store, StoreError  # noqa: PLC0415

    if not name.strip():
        raise InputError("command line", "NAME", "must not be empty")
    if scenario is not None and not admin:
        from fairshare.service.server import scenario_users  # noqa: PLC0415

        users = scenario_users(scenario)
        if name not in users:
            raise InputError(
                str(scenario), "users", f"{name!r} is not a user; users: {', '.join(users)}"
            )
    try:
        token = Store(db).add_token(name, admin=admin)
    except StoreError as err:
        raise InputError(str(db), "--db", str(err)) from None
    except OSError as err:
        raise InputError(str(db), "--db", f"cannot open it ({err})") from None
    sys.stdout.write(token + "\n")
    sys.stdout.flush()
    for path, what in ((_stdout_file(), "a bearer token"), (Path(db), "the tokens' hashes")):
        if path is not None:
            _keep_private(path)
            _warn_if_committable(path, what)


@tenant_app.command("revoke")
def tenant_revoke_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The tenant (or administrator)")],
    db: DbOption,
    admin: Annotated[
        bool, typer.Option("--admin", help="Revoke the administrator tokens made for NAME")
    ] = False,
) -> None:
    """Revoke every token of tenant NAME (with --admin, every administrator token made for
    NAME): they stop working at the next request, a running service included."""
    from fairshare.service.store import Store, StoreError  # noqa: PLC0415

    try:
        count = Store(db).revoke(name, actor="command line", admin=admin)
    except StoreError as err:
        raise InputError(str(db), "--db", str(err)) from None
    except OSError as err:
        raise InputError(str(db), "--db", f"cannot open it ({err})") from None
    what = "administrator" if admin else "tenant"
    if count == 0:
        raise InputError(str(db), "NAME", f"no {what} {name!r} with tokens")
    sys.stdout.write(f"revoked {count} token{'s' if count != 1 else ''} of {what} {name}\n")


def _keep_private(path: Path) -> None:
    """Mode 0600 for a file holding a token or the tokens' hashes (a task's user, or any
    other user of the machine, must not read it); a file that cannot be changed is left."""
    from fairshare.service.sandbox import private_file  # noqa: PLC0415

    try:
        private_file(path)
    except OSError:
        return


def _stdout_file() -> Path | None:
    """The regular file standard output writes to (``> alice.token``), where the system
    says (Linux's ``/proc/self/fd``); None for a terminal, a pipe, or elsewhere."""
    import io  # noqa: PLC0415
    import stat  # noqa: PLC0415

    try:
        descriptor = sys.stdout.fileno()
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        return Path(os.readlink(f"/proc/self/fd/{descriptor}"))
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return None


def _warn_if_committable(path: Path, what: str) -> None:
    """A ``warning:`` line on stderr when ``path`` (holding ``what``) is inside a git work
    tree and not git-ignored: ``git add .`` would commit it. The work tree is found by its
    ``.git``; ``git check-ignore`` is asked only where git is installed (a few ms), and any
    trouble asking it means no warning."""
    import shutil  # noqa: PLC0415
    import subprocess  # noqa: PLC0415

    path = path.resolve()
    top = next((d for d in path.parents if (d / ".git").exists()), None)
    git = shutil.which("git")
    if top is None or git is None:
        return
    try:
        asked = subprocess.run(
            [git, "-C", str(top), "check-ignore", "-q", "--", str(path)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return
    if asked.returncode == 1:  # 0: ignored; 128: git could not tell
        sys.stderr.write(
            f"warning: {path}: {what} inside the git work tree {top}, not git-ignored "
            "(`git add .` would commit it): add it to .gitignore, or keep it in an ignored "
            "directory (this repository's .gitignore ignores .fairshare/)\n"
        )


@app.command("serve")
@simulation_options(BACKFILL, USAGE_HALF_LIFE)
def serve_command(
    scenario_path: Annotated[
        str,
        typer.Argument(metavar="SCENARIO", help="Tenants (users), queues, weights, constraints"),
    ],
    policy: Annotated[str, typer.Option("--policy", "-p", help=ONLINE_HELP)],
    db: DbOption,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray", metavar="ADDRESS", help="Ray cluster (default: start a local Ray instance)"
        ),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port (0: any free one)")
    ] = 8765,
    out: Annotated[
        str | None,
        typer.Option("--out", "-o", metavar="DIR", help="Write the run's files on shutdown"),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Write into a non-empty DIR that is not fairshare's")
    ] = False,
    max_pending_jobs: Annotated[
        int, typer.Option("--max-pending-jobs", min=1, help="Jobs not ended per tenant")
    ] = 1000,
    max_body_bytes: Annotated[
        int, typer.Option("--max-body-bytes", min=256, help="Largest request body")
    ] = 1 << 20,
    num_cpus: Annotated[
        int | None,
        typer.Option("--num-cpus", min=1, help="CPUs of the local Ray instance (no --ray)"),
    ] = None,
    task_user: Annotated[
        str | None,
        typer.Option(
            "--task-user",
            metavar="USER",
            help="Run every tenant's commands as USER (default: one user per tenant)",
        ),
    ] = None,
    task_user_prefix: Annotated[
        str | None,
        typer.Option(
            "--task-user-prefix",
            metavar="PREFIX",
            help="Run tenant T's commands as user PREFIX+T, made when missing "
            "(default: fairshare-t-)",
        ),
    ] = None,
    insecure_same_user: Annotated[
        bool,
        typer.Option(
            "--insecure-same-user",
            help="Run tenants' commands as the service's own user (trusted tenants only)",
        ),
    ] = False,
    task_dir: Annotated[
        str | None,
        typer.Option(
            "--task-dir",
            metavar="DIR",
            help="The tenants' working directories on each node "
            "(default: fairshare-tasks-UID in its temporary directory)",
        ),
    ] = None,
    task_network: Annotated[
        str,
        typer.Option(
            "--task-network",
            metavar="host|none",
            help="none: each task in a network namespace of its own, no interface up "
            "(workers run as root)",
        ),
    ] = "host",
    task_memory_limit: Annotated[
        str,
        typer.Option(
            "--task-memory-limit",
            metavar="address-space|none",
            help="address-space: a task demanding mem=M GiB gets its address space capped "
            "at M GiB (RLIMIT_AS); none: mem only schedules",
        ),
    ] = "address-space",
    tls_cert: Annotated[
        str | None,
        typer.Option("--tls-cert", metavar="FILE", help="Serve HTTPS with this certificate (PEM)"),
    ] = None,
    tls_key: Annotated[
        str | None,
        typer.Option("--tls-key", metavar="FILE", help="The certificate's private key (PEM)"),
    ] = None,
    header_timeout: Annotated[
        float,
        typer.Option(
            "--header-timeout",
            metavar="SECONDS",
            min=0.01,
            help="Close a connection whose request head is not complete in time",
        ),
    ] = 10.0,
    body_timeout: Annotated[
        float,
        typer.Option(
            "--body-timeout",
            metavar="SECONDS",
            min=0.01,
            help="Refuse (408) a request whose body is not complete in time",
        ),
    ] = 30.0,
    max_connections: Annotated[
        int,
        typer.Option("--max-connections", min=1, help="Connections at once (past it: 503)"),
    ] = 512,
    **sim_options: Any,
) -> None:
    """Run POLICY live on a Ray cluster for the scenario's users, with an HTTP API."""
    from fairshare.policies import ONLINE_POLICIES  # noqa: PLC0415
    from fairshare.service.core import Limits  # noqa: PLC0415
    from fairshare.service.store import Store, StoreError  # noqa: PLC0415
    from fairshare.sim.options import OptionError, SimOptions  # noqa: PLC0415

    source = str(scenario_path)
    try:
        # Any text: SimOptions accepts easy, and names backfill otherwise.
        options = SimOptions(
            backfill=sim_options[BACKFILL.parameter],
            usage_half_life=sim_options[USAGE_HALF_LIFE.parameter],
        ).policy_options()
    except OptionError as err:
        raise InputError(source, flag(err.where), flags_in(err.what)) from None
    if policy not in ONLINE_POLICIES:
        raise InputError(
            source,
            "--policy",
            f"unknown online policy {policy!r}; expected one of {', '.join(ONLINE_POLICIES)}",
        )
    if getattr(ONLINE_POLICIES[policy].cls, "overcommits", False):
        raise InputError(
            source,
            "--policy",
            f"'{policy}' over-commits machines, which only the simulator models; "
            "it does not run live",
        )
    if task_memory_limit not in ("address-space", "none"):
        raise InputError(
            "command line",
            "--task-memory-limit",
            f"expected address-space or none, got {task_memory_limit!r}",
        )
    # The TLS files are input: checked (and an exposed host warned) before anything else;
    # so are the sandbox's options (whether this process may switch users included), so
    # that a contradiction is reported whether or not the [ray] extra is installed.
    transport = _transport(host, tls_cert, tls_key, header_timeout, max_connections)
    choice = _sandbox_choice(
        ray_address, (task_user, task_user_prefix, insecure_same_user, task_dir), task_network
    )
    try:
        import fastapi  # noqa: F401, PLC0415
        import prometheus_client  # noqa: F401, PLC0415
        import ray  # noqa: F401, PLC0415
        import uvicorn  # noqa: F401, PLC0415
    except ImportError as err:
        raise _missing_extra("serve", err.name or "ray") from None
    from fairshare.backends.ray_cluster import RayExecutor  # noqa: PLC0415
    from fairshare.service import server  # noqa: PLC0415

    if out is not None:
        _check_out(out, force)
    # The database is checked whole and its lease taken before Ray starts: a damaged
    # database, or one another service holds, is refused at once.
    try:
        store = Store(db)
        store.check()
        store.acquire()
    except StoreError as err:
        raise InputError(str(db), "--db", str(err)) from None
    except OSError as err:
        raise InputError(str(db), "--db", f"cannot open it ({err})") from None
    sandbox = _task_sandbox(db, choice)
    sandbox["limit_memory"] = task_memory_limit == "address-space"
    try:
        sock = server.listen(host, port)
    except OSError as err:
        store.release()
        raise InputError(
            "command line", "--port", f"cannot listen on {host}:{port} ({err})"
        ) from None
    settings = server.ServeSettings(
        scenario=Path(scenario_path),
        policy=policy,
        db=Path(db),
        ray=ray_address,
        host=host,
        port=port,
        options=options,
        limits=Limits(
            max_pending_jobs=max_pending_jobs,
            max_body_bytes=max_body_bytes,
            body_seconds=body_timeout,
        ),
        transport=transport,
    )
    # A local Ray instance keeps its files and token where tasks cannot reach them.
    private = tempfile.mkdtemp(prefix="fairshare-serve-") if ray_address is None else None
    try:
        executor = RayExecutor(ray_address, num_cpus=num_cpus, sandbox=sandbox, private_dir=private)
    except (ConnectionError, RuntimeError, ValueError) as err:
        sock.close()
        store.release()
        _remove(private)
        raise InputError("command line", "--ray", f"cannot connect to Ray ({err})") from None
    try:
        scenario = server.load_live_scenario(Path(scenario_path), executor)
        if not scenario.users:
            raise InputError(
                source, "users", "the service's tenants are the scenario's users: list some"
            )
        stopped = server.Stopped()
        log = server.serve(
            settings,
            executor,
            scenario,
            sock,
            announce=server.announce_on_stderr,
            store=store,
            warn=server.announce_on_stderr,
            stopped=stopped,
        )
    finally:
        executor.close()
        sock.close()
        store.release()
        _remove(private)
    from fairshare.cli.runs import RUN_FILES, output_dir  # noqa: PLC0415

    if out is not None:
        from fairshare.report.html import write_outputs  # noqa: PLC0415

        with output_dir(out, "serve", list(RUN_FILES), force) as directory:
            directory.commit(lambda path: write_outputs(log, path))
    written = [str(Path(out, name)) for name in RUN_FILES] if out is not None else []
    server.announce_on_stderr(stopped.line(written))


def _transport(
    host: str, cert: str | None, key: str | None, header_seconds: float, connections: int
) -> Transport:
    """``serve``'s HTTP transport (:mod:`fairshare.service.transport`): the TLS files
    checked, and one ``warning:`` line for a non-loopback ``--host`` without TLS."""
    from fairshare.service.transport import (  # noqa: PLC0415
        Transport,
        TransportError,
        check_tls,
        exposure_warning,
    )

    try:
        check_tls(cert, key)
    except TransportError as err:
        given = key if err.where == "tls_key" and key is not None else cert
        where, what = (
            text.replace("tls_cert", "--tls-cert").replace("tls_key", "--tls-key")
            for text in (err.where, err.what)
        )
        raise InputError(given or "command line", where, what) from None
    warning = exposure_warning(host, tls=cert is not None)
    if warning is not None:
        sys.stderr.write(warning + "\n")
    return Transport(
        tls_cert=cert, tls_key=key, header_seconds=header_seconds, max_connections=connections
    )


def _sandbox_choice(
    ray_address: str | None,
    users: tuple[str | None, str | None, bool, str | None],
    network: str,
) -> SandboxChoice:
    """The tasks' sandbox chosen from ``serve``'s options (:func:`fairshare.service.sandbox.
    choose_sandbox`); a refusal is one ``error:`` line, an ``--insecure-same-user`` one
    ``warning:`` line."""
    from fairshare.service.sandbox import SandboxRefused, choose_sandbox  # noqa: PLC0415

    try:
        choice = choose_sandbox(*users, local=ray_address is None, network=network)
    except SandboxRefused as err:
        raise InputError("command line", err.where, err.what) from None
    if choice.warning is not None:  # --insecure-same-user, said at once
        sys.stderr.write(choice.warning + "\n")
    return choice


def _task_sandbox(db: str, choice: SandboxChoice) -> dict[str, Any]:
    """The sandbox's settings, with the database kept from the tasks' users
    (:mod:`fairshare.service.sandbox`); a refusal is one ``error:`` line, a database others
    may reach one ``warning:`` line."""
    from fairshare.service.sandbox import SandboxRefused, private_database  # noqa: PLC0415

    try:
        warning = private_database(Path(db))
    except SandboxRefused as err:
        raise InputError(str(db), err.where, err.what) from None
    except OSError as err:
        raise InputError(str(db), "--db", f"cannot make it private ({err})") from None
    if warning is not None:
        sys.stderr.write(warning + "\n")
    return choice.settings


def _remove(private: str | None) -> None:
    """Remove the local Ray instance's private directory (its sessions' files)."""
    if private is not None:
        import shutil  # noqa: PLC0415

        shutil.rmtree(private, ignore_errors=True)


def _check_out(out: str, force: bool) -> None:
    """``--out``, checked before the service starts (it is written on shutdown)."""
    from fairshare.cli.runs import RUN_FILES  # noqa: PLC0415
    from fairshare.report.outdir import OutDirError, OutputDir  # noqa: PLC0415

    try:
        OutputDir(out, command="serve", files=list(RUN_FILES), force=force)
    except OutDirError as err:
        raise InputError(err.file, "--out", err.what) from None


def _bench_app() -> typer.Typer:
    """``fairshare bench``'s group, imported here so that ``bench live`` sits with the
    other live commands."""
    from fairshare.cli.bench import bench_app  # noqa: PLC0415

    return bench_app


@_bench_app().command("live")
def bench_live_command(
    tasks: Annotated[int, typer.Option("--tasks", min=4, help="Tasks per round")] = 400,
    nodes: Annotated[int, typer.Option("--nodes", min=1, help="Ray nodes")] = 2,
    slots: Annotated[int, typer.Option("--slots", min=1, help="Tasks at a time per node")] = 2,
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="Rounds of each side")] = 3,
    no_journal: Annotated[
        bool, typer.Option("--no-journal", help="Without the service's database writes")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """fairshare's live driver against bare pinned Ray on the same trivial tasks, side by
    side on a local Ray cluster: tasks per second and the scheduling overhead per task."""
    try:
        import ray  # noqa: F401, PLC0415
    except ImportError:
        raise _missing_extra("bench live", "ray") from None
    from fairshare.bench.live import run_live  # noqa: PLC0415

    doc = run_live(tasks=tasks, nodes=nodes, slots=slots, rounds=rounds, journal=not no_journal)
    if as_json:
        dump_json(doc)
        return
    table = Table(title="live: fairshare vs bare pinned Ray (medians)", title_justify="left")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in doc.items():
        table.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
    Console(markup=False, highlight=False).print(table)
