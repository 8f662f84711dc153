"""The compiled kernel's build cache (``setup.py``'s ``kernel_cache``, ``build_key`` and
``CachedKernel``): an install of the same sources copies the kernel a first install compiled,
and anything that decides the compiled code gives another key (docs/performance.md, "The
build cache")."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest

SETUP = Path(__file__).resolve().parents[1] / "setup.py"


@pytest.fixture(scope="module")
def setup_module() -> dict[str, Any]:
    """``setup.py``'s functions, without running ``setup()`` (it runs only as ``__main__``)."""
    pytest.importorskip("mypy.version")
    return runpy.run_path(str(SETUP))


def test_the_cache_directory_follows_the_environment(
    setup_module: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    kernel_cache = setup_module["kernel_cache"]
    monkeypatch.setenv("FAIRSHARE_KERNEL_CACHE", "0")
    assert kernel_cache() is None
    monkeypatch.setenv("FAIRSHARE_KERNEL_CACHE", str(tmp_path / "mine"))
    assert kernel_cache() == tmp_path / "mine"
    monkeypatch.delenv("FAIRSHARE_KERNEL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert kernel_cache() == tmp_path / "xdg" / "fairshare" / "kernel"


def test_the_key_changes_with_the_compiler_settings(
    setup_module: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    build_key = setup_module["build_key"]
    monkeypatch.delenv("CFLAGS", raising=False)
    plain = build_key()
    assert plain == build_key()  # the same inputs, the same key
    assert len(plain) == 32 and int(plain, 16) >= 0
    monkeypatch.setenv("CFLAGS", "-O0")
    assert build_key() != plain


def test_the_key_changes_with_any_source_of_the_package(
    setup_module: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Not only the kernel's modules: mypyc compiles against the types of the modules they
    import, so a change anywhere in the package is another build."""
    sources = tmp_path / "src"
    (sources / "fairshare" / "cli").mkdir(parents=True)
    outside = sources / "fairshare" / "cli" / "app.py"
    outside.write_text("x = 1\n")
    (tmp_path / "kernel-mypy.ini").write_text("[mypy]\n")
    build_key = setup_module["build_key"]
    monkeypatch.setitem(build_key.__globals__, "SOURCES", sources)
    monkeypatch.setitem(build_key.__globals__, "ROOT", tmp_path)
    monkeypatch.setitem(build_key.__globals__, "__file__", str(tmp_path / "kernel-mypy.ini"))
    before = build_key()
    outside.write_text("x = 2\n")
    assert build_key() != before


def test_an_entry_is_used_only_once_complete_and_restores_its_files(
    setup_module: dict[str, Any], tmp_path: Path
) -> None:
    cached_kernel = setup_module["CachedKernel"]
    built = tmp_path / "build"
    built.mkdir()
    (built / "ledger.so").write_bytes(b"ledger")
    (built / "native.so").write_bytes(b"native")
    cache = cached_kernel(tmp_path / "cache", "k1")
    assert cache.names() is None  # nothing stored yet
    cache.store(
        {
            "fairshare.policies.ledger": str(built / "ledger.so"),
            "fairshare.kernel_native": str(built / "native.so"),
        }
    )
    assert cache.names() == ["fairshare.kernel_native", "fairshare.policies.ledger"]
    target = tmp_path / "site" / "fairshare" / "policies" / "ledger.so"
    cache.restore("fairshare.policies.ledger", str(target))
    assert target.read_bytes() == b"ledger"
    # A file of the entry gone (a cleaned cache, half a copy): the entry is not used.
    (cache.entry / "native.so").unlink()
    assert cache.names() is None
    # Storing the same key again when it exists keeps the first entry and leaves no staging.
    again = cached_kernel(tmp_path / "cache", "k1")
    again.store({"fairshare.kernel_native": str(built / "native.so")})
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["k1"]


def test_a_manifest_that_is_not_a_file_list_is_no_entry(
    setup_module: dict[str, Any], tmp_path: Path
) -> None:
    cache = setup_module["CachedKernel"](tmp_path, "k2")
    cache.entry.mkdir()
    (cache.entry / "manifest.json").write_text("[1, 2")
    assert cache.names() is None
    (cache.entry / "manifest.json").write_text("[]")
    assert cache.names() is None


@pytest.mark.parametrize("editable", [True, False])
def test_an_editable_install_byte_compiles_the_sources_it_imports(
    setup_module: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, editable: bool
) -> None:
    """An editable install imports ``src/``, which no installer compiles: with
    ``PYTHONDONTWRITEBYTECODE`` set every command compiled its modules again. A regular
    install's files are pip's to compile."""
    import importlib.util  # noqa: PLC0415

    from setuptools import Distribution  # noqa: PLC0415
    from setuptools.command.build_py import build_py  # noqa: PLC0415

    package = tmp_path / "src" / "fairshare"
    (package / "cli").mkdir(parents=True)
    modules = [package / "__init__.py", package / "cli" / "app.py"]
    for module in modules:
        module.write_text("x = 1\n")
    command_class = setup_module["EditableBuildPy"]
    monkeypatch.setitem(command_class.run.__globals__, "SOURCES", tmp_path / "src")
    monkeypatch.setattr(build_py, "run", lambda self: None)  # the files are already in place
    command = command_class(Distribution())
    command.editable_mode = editable
    command.run()
    compiled = [Path(importlib.util.cache_from_source(str(m))).exists() for m in modules]
    assert compiled == [editable, editable]
