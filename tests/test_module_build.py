"""ns3-modules build: cached by content; compiler errors reach the user."""

from __future__ import annotations

import pytest

from harness.engine import ns3


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


def test_sources_in_role_folders_and_at_the_top_are_built_and_include_by_name(tmp_path):
    src = tmp_path / "src"
    (src / "jobs").mkdir(parents=True)
    (src / "tcp-fastpath").mkdir()  # a separate library: not part of libddnn
    (src / "tcp-fastpath" / "ignored.cc").write_text("this is not C++\n")
    (src / "jobs" / "answer.h").write_text("int answer();\n")
    (src / "jobs" / "answer.cc").write_text('#include "answer.h"\nint answer() { return 42; }\n')
    (src / "top.cc").write_text('#include "answer.h"\nint top() { return answer(); }\n')
    names = [p.relative_to(src).as_posix() for p in ns3.module_sources(src)]
    assert names == ["jobs/answer.cc", "jobs/answer.h", "top.cc"]
    assert ns3.build_modules(src, tmp_path / "out", quiet=True).exists()


def test_two_sources_with_one_name_are_refused(tmp_path):
    src = tmp_path / "src"
    for folder in ("apps", "jobs"):
        (src / folder).mkdir(parents=True)
        (src / folder / "same.h").write_text("\n")
    with pytest.raises(ns3.ModuleBuildError, match="same.h"):
        ns3.module_sources(src)


def test_moving_a_source_to_another_folder_changes_the_key(tmp_path, monkeypatch):
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "b").mkdir()
    (src / "a" / "x.cc").write_text("int x() { return 1; }\n")
    monkeypatch.setattr(ns3, "MODULES_DIR", src)
    before = ns3.modules_key(src)
    (src / "a" / "x.cc").rename(src / "b" / "x.cc")
    assert ns3.modules_key(src) != before


def test_a_build_says_each_source_as_it_compiles(tmp_path, capsys):
    """A first build takes minutes: a line per source as it ends, with the count."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("one", "two"):
        (src / f"{name}.cc").write_text(f"int {name}() {{ return 1; }}\n")
    ns3.build_modules(src, tmp_path / "out", quiet=False)
    err = capsys.readouterr().err
    assert "compiling 2 ns3-modules sources" in err
    assert {line.split(" compiled (")[1].split(";")[0] for line in err.splitlines()
            if " compiled (" in line} == {"one.cc", "two.cc"}
    assert "2/2 compiled" in err
