"""ns3-modules build: cached by content; compiler errors reach the user."""

from __future__ import annotations

import pytest

from harness import ns3


def test_compile_error_names_the_file_and_line(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "broken-app.cc").write_text('#include "ns3/core-module.h"\nint f() { return undefined_name; }\n')
    with pytest.raises(ns3.ModuleBuildError) as err:
        ns3.build_modules(src, tmp_path / "out", quiet=True)
    message = str(err.value)
    assert "broken-app.cc:2" in message and "undefined_name" in message
    assert not list((tmp_path / "out").glob("*.so"))


def test_library_is_cached_by_source_content(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "tiny.cc").write_text('#include "ns3/nstime.h"\nint tiny() { return 1; }\n')
    first = ns3.build_modules(src, tmp_path / "out", quiet=True)
    mtime = first.stat().st_mtime_ns
    assert ns3.build_modules(src, tmp_path / "out", quiet=True) == first
    assert first.stat().st_mtime_ns == mtime
    (src / "tiny.cc").write_text('#include "ns3/nstime.h"\nint tiny() { return 2; }\n')
    assert ns3.build_modules(src, tmp_path / "out", quiet=True) != first
