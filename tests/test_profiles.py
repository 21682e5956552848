"""Tests for harness.traffic.profiles (pure logic, no ns-3)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from harness.traffic.fusion import Buffer, check_fits, fuse, fusion_buffer_bytes
from harness.traffic.profiles import (
    GENERATED,
    Profile,
    ProfileError,
    compute_ms_for_ratio,
    is_generated,
    load_profile,
    network_time_ms,
    resnet50_like,
    save_profile,
)

REPO = Path(__file__).resolve().parents[1]
M = 100_000_000
GBPS10 = 10e9


# ------------------------------------------------------------------ resnet50-like


def test_resnet50_like_sizes_match_spec():
    p = resnet50_like(50, M, 560.0)
    assert p.n_layers == 50
    s = 2 * M // (9 * 50)
    assert s == 444_444
    # 25 layers of s (i < 25), 13 of 4s (25..37), 12 of 12s (38..49)
    assert p.layer_bytes[:25] == (s,) * 25
    assert p.layer_bytes[25:38] == (4 * s,) * 13
    assert p.layer_bytes[38:] == (12 * s,) * 12
    assert p.model_bytes == 98_222_124
    assert p.largest_layer == 5_333_328
    assert fusion_buffer_bytes(p) == 5_333_329


@pytest.mark.parametrize("T", [2240.0, 560.0, 280.0, 17.0])
@pytest.mark.parametrize("L", [2, 3, 50, 101])
def test_resnet50_like_compute_sums(L, T):
    p = resnet50_like(L, M, T)
    d_f = 2 * (T / 3) / (L * (L - 1))
    d_b = 2 * (2 * T / 3) / (L * (L - 1))
    assert math.fsum(p.fp_ms) == pytest.approx(T / 3 + d_f, rel=1e-12)
    assert math.fsum(p.bp_ms) == pytest.approx(2 * T / 3 + d_b, rel=1e-12)
    assert p.compute_ms == pytest.approx(T + d_f + d_b, rel=1e-12)
    # forward decreasing, backward increasing; ends patched to d_f / d_b
    assert p.fp_ms[-1] == pytest.approx(d_f)
    assert p.bp_ms[0] == pytest.approx(d_b)
    assert p.fp_ms[0] == pytest.approx(2 * (T / 3) / L)
    assert p.bp_ms[-1] == pytest.approx((L - 1) * d_b)
    assert all(a >= b for a, b in zip(p.fp_ms[:-1], p.fp_ms[1:-1]))
    assert all(a <= b for a, b in zip(p.bp_ms[1:], p.bp_ms[2:]))
    assert all(v > 0 for v in p.fp_ms + p.bp_ms)


def test_resnet50_like_name():
    assert resnet50_like(50, M, 560.0).name == "resnet50-like-L50-M100000000-T560"
    assert resnet50_like(10, 1000, 12.5).name == "resnet50-like-L10-M1000-T12.5"


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(n_layers=1), "n_layers"),
        (dict(model_bytes=0), "model_bytes"),
        (dict(model_bytes=10), "model_bytes"),
        (dict(compute_ms=0.0), "compute_ms"),
    ],
)
def test_resnet50_like_bad_args(kwargs, word):
    with pytest.raises(ProfileError, match=word):
        resnet50_like(**kwargs)


# ------------------------------------------------------------------ ratio <-> T


def test_network_time_reference_numbers():
    # M * 2(1 - 1/8) * 8 bits / 10 Gbit/s = 1e8 * 1.75 * 8 / 1e10 s = 0.14 s
    assert network_time_ms(M, 8, GBPS10) == pytest.approx(140.0)
    assert compute_ms_for_ratio(4, M, 8, GBPS10) == pytest.approx(560.0)


@pytest.mark.parametrize("R, T", [(16, 2240.0), (8, 1120.0), (4, 560.0), (2, 280.0)])
def test_ratio_to_compute(R, T):
    assert compute_ms_for_ratio(R, M, 8, GBPS10) == pytest.approx(T)


def test_network_time_scales():
    # two workers: 2(1 - 1/2) = 1 -> M * 8 / link
    assert network_time_ms(1000, 2, 8000) == pytest.approx(1000.0)


@pytest.mark.parametrize(
    "args, word",
    [((0, 8, GBPS10), "model_bytes"), ((M, 1, GBPS10), "n_workers"), ((M, 8, 0), "link_bps")],
)
def test_network_time_bad_args(args, word):
    with pytest.raises(ValueError, match=word):
        network_time_ms(*args)


# ------------------------------------------------------------------ fusion


def _check_fusion_invariants(p: Profile, fb: int, bufs: list[Buffer]) -> None:
    seen = [layer for b in bufs for layer in b.layers]
    # every layer in exactly one buffer, in backward order overall
    assert seen == list(range(p.n_layers - 1, -1, -1))
    for k, b in enumerate(bufs):
        assert b.index == k
        assert b.bytes == sum(p.layer_bytes[i] for i in b.layers)
        assert b.bytes <= fb
        assert b.priority == min(b.layers)
        assert list(b.layers) == sorted(b.layers, reverse=True)
        # consecutive layers
        assert list(b.layers) == list(range(b.layers[0], b.layers[-1] - 1, -1))
        # closing rule: closed because the next layer would overflow, or layer 0
        last = b.layers[-1]
        if last == 0:
            assert k == len(bufs) - 1
        else:
            assert b.bytes + p.layer_bytes[last - 1] > fb


def test_fuse_resnet50_like_default():
    p = resnet50_like()
    fb = fusion_buffer_bytes(p)
    bufs = fuse(p)
    _check_fusion_invariants(p, fb, bufs)
    # the twelve 12s layers cannot share a buffer (2 * 12s > 12s + 1)
    for k in range(12):
        assert bufs[k].layers == (49 - k,)
    assert bufs[-1].priority == 0


@pytest.mark.parametrize("fb", [5_333_329, 6_000_000, 10_666_656, 25_000_000, 10**9])
def test_fuse_invariants_various_buffers(fb):
    p = resnet50_like()
    _check_fusion_invariants(p, fb, fuse(p, fb))


def test_fuse_huge_buffer_is_one_buffer():
    p = resnet50_like()
    bufs = fuse(p, p.model_bytes)
    assert len(bufs) == 1 and bufs[0].bytes == p.model_bytes and bufs[0].priority == 0


def test_fuse_small_hand_example():
    # layers 0..4 bytes 1,2,3,4,5; fb = 6; backward 4,3,2,1,0:
    # {4} (5+4 > 6), {3} (4+3 > 6), {2,1} = 5 and 5+1 = 6 <= 6 -> {2,1,0}
    p = Profile("hand", (1, 2, 3, 4, 5), (1.0,) * 5, (1.0,) * 5)
    bufs = fuse(p, 6)
    assert [b.layers for b in bufs] == [(4,), (3,), (2, 1, 0)]
    assert [b.bytes for b in bufs] == [5, 4, 6]
    assert [b.priority for b in bufs] == [4, 3, 0]
    assert [b.label for b in bufs] == ["4", "3", "2-0"]


def test_check_fits_names_layer():
    p = Profile("big", (10, 30, 20), (1.0,) * 3, (1.0,) * 3)
    check_fits(p, 30)
    with pytest.raises(ProfileError, match=r"layer 1\b.*30.*29"):
        check_fits(p, 29)
    with pytest.raises(ProfileError, match="layer 1"):
        fuse(p, 25)


# ------------------------------------------------------------------ CSV


def test_csv_round_trip(tmp_path):
    p = resnet50_like(50, M, 560.0)
    path = save_profile(p, tmp_path / "sub" / "r.csv")
    assert path.exists()
    assert [x.name for x in path.parent.iterdir()] == ["r.csv"]  # no temp file left
    q = load_profile(path)
    assert q.name == "r"
    assert q.layer_bytes == p.layer_bytes
    assert q.fp_ms == p.fp_ms  # exact: floats written with repr
    assert q.bp_ms == p.bp_ms
    assert load_profile(path, name="x").name == "x"
    first, header = path.read_text().splitlines()[:2]
    assert first.startswith(GENERATED) and is_generated(path)  # marks it as the harness's
    assert header == "layer,bytes,fp_ms,bp_ms"


def test_comment_lines_are_skipped_and_only_ours_are_generated(tmp_path):
    """'#' lines are comments (the harness's own first line is one); a file
    without GENERATED's line is a user's, which `harness profile -o` keeps."""
    mine = tmp_path / "mine.csv"
    mine.write_text("# my notes\nlayer,bytes,fp_ms,bp_ms\n# the only layer\n0,10,1,2\n")
    q = load_profile(mine)
    assert q.layer_bytes == (10,) and q.fp_ms == (1.0,) and q.bp_ms == (2.0,)
    assert not is_generated(mine) and not is_generated(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("# notes\nlayer,bytes,fp_ms,bp_ms\n0,10,1,1\n2,10,1,1\n")
    with pytest.raises(ProfileError, match=r"row 2: layer must be 1"):  # rows count data only
        load_profile(bad)


def test_to_frame():
    p = Profile("t", (5, 6), (1.0, 2.0), (3.0, 4.0))
    df = p.to_frame()
    assert list(df.columns) == ["layer", "bytes", "fp_ms", "bp_ms"]
    assert df["layer"].tolist() == [0, 1]
    assert df["bytes"].tolist() == [5, 6]
    assert df["bp_ms"].sum() == 7.0


def test_shipped_resnet50_like_profile():
    q = load_profile(REPO / "workloads" / "profiles" / "resnet50-like.csv")
    p = resnet50_like(50, M, 560.0)
    assert q.layer_bytes == p.layer_bytes
    assert q.fp_ms == pytest.approx(p.fp_ms)
    assert q.bp_ms == pytest.approx(p.bp_ms)


GOOD_HEADER = "layer,bytes,fp_ms,bp_ms\n"


@pytest.mark.parametrize(
    "content, pattern",
    [
        ("", "empty"),
        (GOOD_HEADER, "empty profile"),
        ("layer,bytes,fp_ms\n0,1,1\n", r"missing \['bp_ms'\]"),
        ("layer,size,fp_ms,bp_ms\n0,1,1,1\n", "bytes"),
        ("layer,bytes,bp_ms,fp_ms\n0,1,1,1\n", "order"),
        ("layer,bytes,fp_ms,bp_ms,extra\n0,1,1,1,1\n", "extra"),
        (GOOD_HEADER + "0,abc,1,1\n", r"row 1: bytes must be an integer"),
        (GOOD_HEADER + "0,10,x,1\n", r"row 1: fp_ms must be a number"),
        (GOOD_HEADER + "0,10,1,nan\n", r"bp_ms must be a finite"),
        (GOOD_HEADER + "0,10,1,1\n1,10,1\n", r"row 2: expected 4 fields"),
        (GOOD_HEADER + "0,10,1,1\n2,10,1,1\n", r"row 2: layer must be 1 \(got 2\)"),
        (GOOD_HEADER + "1,10,1,1\n", r"layer must be 0 \(got 1\)"),
        (GOOD_HEADER + "0,10,1,1\n1,0,1,1\n", r"layer 1: bytes must be > 0 \(got 0\)"),
        (GOOD_HEADER + "0,-5,1,1\n", r"layer 0: bytes must be > 0 \(got -5\)"),
        (GOOD_HEADER + "0,10,1,1\n1,10,-1,1\n", r"layer 1: fp_ms must be >= 0"),
        (GOOD_HEADER + "0,10,1,-0.5\n", r"layer 0: bp_ms must be >= 0"),
        (GOOD_HEADER + "0,10,0,0\n1,10,0,0\n", r"total compute.*must be > 0"),
        (GOOD_HEADER + "0,1.5,1,1\n", r"bytes must be an integer"),
    ],
)
def test_bad_profiles(tmp_path, content, pattern):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(ProfileError, match=pattern) as ei:
        load_profile(path)
    assert "'bad'" in str(ei.value)  # names the profile
    assert isinstance(ei.value, ValueError)


def test_missing_file(tmp_path):
    with pytest.raises(ProfileError, match="not found"):
        load_profile(tmp_path / "nope.csv")


def test_zero_times_allowed_per_layer(tmp_path):
    path = tmp_path / "z.csv"
    path.write_text(GOOD_HEADER + "0,10,0,0\n1,10,0,2.5\n")
    p = load_profile(path)
    assert p.compute_ms == 2.5


def test_profile_constructor_validates():
    with pytest.raises(ProfileError, match="same length"):
        Profile("x", (1, 2), (1.0,), (1.0, 1.0))
    with pytest.raises(ProfileError, match=r"layer 7: bytes must be > 0 \(got 0\)"):
        Profile("x", (1,) * 7 + (0,), (1.0,) * 8, (1.0,) * 8)
    with pytest.raises(ProfileError, match="empty"):
        Profile("x", (), (), ())


def test_profile_command_generates_for_a_ratio_and_checks_files(tmp_path):
    from click.testing import CliRunner

    from harness.cli import main

    out = tmp_path / "r4.csv"
    r = CliRunner().invoke(main, ["profile", "--ratio", "4", "-o", str(out)])
    assert r.exit_code == 0, r.output
    p = load_profile(out)
    assert p == dataclasses.replace(resnet50_like(50, 100_000_000, 560.0), name="r4")
    r = CliRunner().invoke(main, ["profile", "--check", str(out)])
    assert r.exit_code == 0 and "19 fusion buffers" in r.output
    bad = tmp_path / "bad.csv"
    bad.write_text("layer,bytes,fp_ms,bp_ms\n0,10,-1,1\n")
    r = CliRunner().invoke(main, ["profile", "--check", str(bad)])
    assert r.exit_code == 2 and "fp_ms" in r.output
    r = CliRunner().invoke(main, ["profile", "--ratio", "4", "--compute-ms", "3"])
    assert r.exit_code == 2 and "exactly one" in r.output
