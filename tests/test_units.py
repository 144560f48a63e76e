"""Issue #11: one unit rule for sizes and bandwidths, sizes per collective, root and shift (library level)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from collsim.algorithms import REGISTRY
from collsim.core.collective import make_collective
from collsim.core.collectives import TYPES
from collsim.core.errors import InputError, UnsupportedError
from collsim.core.totals import SIZE_MEANING, describe_size, size_from_total, total_bytes
from collsim.core.size_sweep import sweep_sizes
from collsim.core.units import (IEC_PREFIXES, MAX_SIZE_BYTES, SI_PREFIXES, format_bandwidth, format_size,
                                parse_bandwidth, parse_size)
from collsim.experiments.compare import compare, placement_params
from conftest import raises_naming

# -- parsing: SI decimal, IEC binary, B bytes, b bits, bare numbers bytes -------------------------

SIZES = [
    ("32KB", 32_000), ("32kB", 32_000), ("32K", 32_000), ("32KiB", 32_768),
    ("4MB", 4_000_000), ("4MiB", 4 << 20), ("4Mb", 500_000), ("4Mib", (4 << 20) // 8), ("4 Mbit", 500_000),
    ("1GB", 10**9), ("1GiB", 2**30), ("1TB", 10**12), ("1TiB", 2**40), ("1EiB", 2**60),
    ("1048576", 1 << 20), ("1048576B", 1 << 20), ("4M", 4_000_000), ("4Mi", 4 << 20), ("16b", 2),
    ("1.5KiB", 1536), ("0.5kB", 500), (".5KiB", 512), ("1e3", 1000), ("1E3", 1000), ("2.5e3B", 2500),
    ("9007199254740993", 9007199254740993),  # 2^53 + 1: a float would make it ...992
    ("9223372036854775807", MAX_SIZE_BYTES), (" 4 MiB ", 4 << 20), ("7bytes", 7),
]


@pytest.mark.parametrize("text,expected", SIZES)
def test_parse_size(text, expected):
    got = parse_size(text)
    assert got == expected and type(got) is int


def test_parse_size_takes_integers_exactly():
    assert parse_size(2**53 + 1) == 2**53 + 1 and parse_size(np.int64(2**62 + 1)) == 2**62 + 1
    assert parse_size(MAX_SIZE_BYTES) == MAX_SIZE_BYTES


@pytest.mark.parametrize("text,needle", [
    ("12b", "12 bits is not a whole number of bytes"), ("1b", "1 bits is not a whole number"),
    ("1.5", "whole number of bytes"), ("0", "positive"), ("-4MiB", "positive"), ("0KiB", "positive"),
    ("1e30", "maximum size of 2^63 - 1"), ("9223372036854775808", "maximum size"), ("8EiB", "maximum size"),
    ("1e999999999", "maximum size"), ("9" * 5000, "maximum size"), ("4mb", "case-sensitive (M = 10^6, Mi = 2^20)"),
    ("1gib", "case-sensitive"), ("lots", "IEC"), ("12XB", "SI"), ("2^10", "invalid size"), ("", "invalid size"),
    (True, "invalid size"), ("1e-80", "invalid size"), ("4MiBs", "invalid size"),
])
def test_parse_size_refuses(text, needle):
    with pytest.raises(InputError, match="invalid size") as info:
        parse_size(text)
    assert needle in str(info.value) and len(str(info.value)) < 400


@pytest.mark.parametrize("text,near", [
    ("4kib", "4KiB (4096 bytes) or 4Kib (bits: 512 bytes)"), ("4KIB", "4KiB (4096 bytes) or 4Kib"),
    ("4kIB", "4KiB (4096 bytes)"), ("4ki", "4Ki (4096 bytes)"), ("32kiB", "32KiB (32768 bytes)"),
    ("4mib", "4MiB (4194304 bytes) or 4Mib"),
    ("4MIB", "4MiB (4194304 bytes)"), ("1gib", "1GiB (1073741824 bytes) or 1Gib"), ("4GIB", "4GiB"),
    ("2TIB", "2TiB"), ("4mb", "4MB (4000000 bytes) or 4Mb (bits: 500000 bytes)"),
    ("4gB", "4GB (4000000000 bytes) or 4Gb"),
    ("4BYTES", "4bytes (4 bytes)"),
])
def test_miscased_units_are_refused_with_the_valid_spellings(text, near):
    """Issue 21: ``4kib`` was read as 4 kibibits (512 B); a unit valid only in another case is refused, with the
    spellings it could mean, by the one parser that reads every size and bandwidth."""
    with pytest.raises(InputError, match="invalid size") as info:
        parse_size(text)
    assert "did you mean" in str(info.value) and near in str(info.value)


@pytest.mark.parametrize("text,near", [("100gb/s", "100GB/s or 100Gb/s (bits: 12.5GB/s)"),
                                       ("1kib/s", "1KiB/s or 1Kib/s"), ("100GBPS", "100GBps or 100Gbps"),
                                       ("1GIB/s", "1GiB/s")])
def test_miscased_rates_are_refused_with_the_valid_spellings(text, near):
    with pytest.raises(InputError, match="invalid bandwidth") as info:
        parse_bandwidth(text)
    assert "did you mean" in str(info.value) and near in str(info.value)


RATES = [
    ("100Gb/s", 12.5e9), ("100Gbps", 12.5e9), ("100 Gbit/s", 12.5e9), ("10GB/s", 1e10), ("10GBps", 1e10),
    ("1GiB/s", 2.0**30), ("1Gib/s", 2.0**27), ("3770MiB/s", 3770.0 * 2**20), ("5e9", 5e9), ("10G", 1e10),
    ("1kB/s", 1e3), ("1KiB/s", 1024.0), (5e9, 5e9), (12, 12.0), ("0.125", 0.125),
]


@pytest.mark.parametrize("text,expected", RATES)
def test_parse_bandwidth(text, expected):
    assert parse_bandwidth(text) == expected


@pytest.mark.parametrize("text", ["fast", "0", "-1GB/s", "1e400", "10mb/s", "1 Gb/h", float("inf"), float("nan"),
                                  False])
def test_parse_bandwidth_refuses(text):
    with pytest.raises(InputError, match="invalid bandwidth"):
        parse_bandwidth(text)


# -- formatting: IEC for binary quantities, SI for decimal ones, exact, and read back --------------

@pytest.mark.parametrize("value,text", [
    (1, "1B"), (512, "512B"), (1000, "1kB"), (1023, "1023B"), (1024, "1KiB"), (1536, "1.5KiB"), (32_000, "32kB"),
    (32_768, "32KiB"), (500_000, "500kB"), (4 << 20, "4MiB"), (4_000_000, "4MB"), (4_100_000, "4.1MB"),
    (3 << 29, "1.5GiB"), (10**9, "1GB"), (2**30, "1GiB"), (1_398_101, "1398101B"), (10**18, "1EB"),
    (MAX_SIZE_BYTES, "9223372036854775807B"),
])
def test_format_size(value, text):
    assert format_size(value) == text and parse_size(text) == value


@given(st.integers(1, MAX_SIZE_BYTES))
def test_format_size_reads_back(value):
    assert parse_size(format_size(value)) == value


@given(st.integers(1, 1023), st.sampled_from(sorted(IEC_PREFIXES.items())))
def test_binary_sizes_print_with_iec_prefixes(k, prefix):
    name, factor = prefix
    assume(k * factor <= MAX_SIZE_BYTES)
    text = format_size(k * factor)
    assert "i" in text and not text.endswith("kB") and parse_size(text) == k * factor


@given(st.integers(1, 999).filter(lambda k: k % 128), st.sampled_from([p for p in SI_PREFIXES.items() if p[0] != "K"]))
def test_decimal_sizes_print_with_si_prefixes(k, prefix):
    # k not a multiple of 128, so k * 10^(3j) is never a short multiple of a binary prefix
    name, factor = prefix
    assume(k * factor <= MAX_SIZE_BYTES)
    assert format_size(k * factor) == f"{k}{name}B"


@pytest.mark.parametrize("value,text", [
    (12.5e9, "12.5GB/s"), (1e10, "10GB/s"), (2.0**30, "1GiB/s"), (3770.0 * 2**20, "3770MiB/s"), (1e9, "1GB/s"),
    (5e9, "5GB/s"), (1024.0, "1KiB/s"), (0.125, "0.125B/s"), (1234567.891, "1.235MB/s"),
])
def test_format_bandwidth(value, text):
    assert format_bandwidth(value) == text
    if "." not in text or Fraction(text[:-3].rstrip("kMGTPEiB")).denominator in (1, 2, 4, 5, 8, 10, 1000):
        assert parse_bandwidth(text) == pytest.approx(value, rel=1e-3)


@given(st.integers(1, 10**6), st.sampled_from([1, 10**3, 10**6, 10**9, 2**10, 2**20, 2**30]), st.booleans())
def test_format_bandwidth_reads_back_what_it_prints_exactly(k, factor, bits):
    value = parse_bandwidth(f"{k * factor}{'b' if bits else 'B'}/s")
    assert parse_bandwidth(format_bandwidth(value)) == value


# -- sweeps ------------------------------------------------------------------------------------

def test_sweep_sizes_walk_like_nccl_tests():
    assert sweep_sizes(8, 128) == [8, 16, 32, 64, 128]
    assert sweep_sizes(1000, 10**6, factor=10) == [1000, 10**4, 10**5, 10**6]
    assert sweep_sizes(1024, 5000, step=1024) == [1024, 2048, 3072, 4096]
    assert sweep_sizes(7, 7) == [7] and sweep_sizes(3, 20, factor=3) == [3, 9]
    for kwargs in ({"factor": 1}, {"factor": 2, "step": 1}, {"step": 0}, {"step": 1, "limit": 10}):
        with pytest.raises(InputError):
            sweep_sizes(1, 100, **kwargs)
    with pytest.raises(InputError, match="empty"):
        sweep_sizes(100, 10)


# -- what a size means per collective; nccl-tests' total -------------------------------------------

def test_every_collective_says_what_its_size_is():
    assert set(SIZE_MEANING) == set(TYPES)


@pytest.mark.parametrize("kind", sorted(TYPES))
def test_total_bytes_follows_nccl_tests(kind):
    n = 6
    factor = n if kind in ("allgather", "reducescatter", "alltoall", "scatter", "gather") else 1
    assert total_bytes(kind, n, 1000) == factor * 1000
    assert size_from_total(kind, n, factor * 1000) == 1000
    assert TYPES[kind].nccl_blocks == (factor == n)


def test_a_total_that_does_not_divide_is_refused_with_the_nearest_valid_totals():
    with raises_naming(InputError, "996B", "166B", "1002B"):   # the valid totals on either side
        size_from_total("allgather", 6, 1000)
    with raises_naming(InputError, "8B", "1B"):
        size_from_total("alltoall", 8, 5)
    assert size_from_total("allreduce", 6, 1001) == 1001


def test_describe_size():
    assert describe_size("allgather", 1024, 4 << 20) == "4MiB per node, total 4GiB"
    assert describe_size("alltoall", 8, 1000) == "1kB per node pair, total 8kB"
    assert describe_size("all-reduce", 8, 32_000) == "32kB vector, total 32kB"


def test_a_collective_whose_byte_counts_overflow_int64_is_refused():
    with pytest.raises(InputError, match="use at most 576460752303423487 bytes"):
        make_collective("allgather", 4, 4 * 2**60)
    assert make_collective("allgather", 4, (2**63 - 1) // 16).size_bytes == (2**63 - 1) // 16
    assert make_collective("allreduce", 2, 2**61).size_bytes == 2**61


# -- root and shift: every algorithm, or a refusal -------------------------------------------------

ROOTED = [(name, kind) for name, spec in sorted(REGISTRY.items()) for kind in spec.collectives
          if TYPES[kind].rooted or kind == "shift"]


@pytest.mark.parametrize("name,kind", ROOTED)
def test_an_algorithm_without_a_root_parameter_roots_at_0(name, kind):
    """What placement_params and compare's rows rely on: no root parameter means root 0, no shift
    parameter shift 1; a given one is the collective's."""
    from collsim.pipeline import build
    from collsim.systems import load_system
    spec = REGISTRY[name]
    candidates = [("paper", {"nodes": 8, "wavelengths": 4}), ("ring", {"nodes": 8}), ("star", {"nodes": 8}),
                  ("mesh", {"dims": (4, 4)}), ("hypercube", {"nodes": 8})]
    for system, options in candidates:
        try:
            sysm = load_system(system, **options)
            spec.check(sysm, kind)
        except Exception:  # noqa: BLE001 - not this system
            continue
        key = "shift" if kind == "shift" else "root"
        value = 3 if key in spec.params else None
        sched = build(name, sysm, kind, 64, **({key: value} if value is not None else {}))
        default = 1 if key == "shift" else 0
        assert getattr(sched.collective, key) == (default if value is None else value)
        return
    pytest.fail(f"no small system for {name} {kind}: add one to the candidates")


def test_placement_params():
    assert placement_params("binomial", "broadcast", {"root": 3, "x": 1}) == {"root": 3, "x": 1}
    assert placement_params("ring", "broadcast", root=0) == {}
    assert placement_params("direct", "shift", {"q": 2}) == placement_params("direct", "shift", shift=2)
    with pytest.raises(UnsupportedError, match="ring takes no root"):
        placement_params("ring", "broadcast", root=1)
    with pytest.raises(InputError, match="allgather has no root"):
        placement_params("ring", "allgather", root=0)
    with pytest.raises(InputError, match="has no shift"):
        placement_params("ring", "allgather", shift=2)
    with pytest.raises(InputError, match="two different values of root"):
        placement_params("binomial", "broadcast", {"root": 1}, root=2)


def test_compare_applies_the_root_to_every_row_or_skips_with_a_note():
    rows, skipped = compare("star", "broadcast", "1KiB", nodes=8, root=3)
    assert rows and all(r.root == 3 for r in rows)
    assert any(note.algorithm == "ring" and "root" in str(note) and not note.failed for note in skipped)
    with pytest.raises(UnsupportedError, match="ring takes no root"):
        compare("star", "broadcast", "1KiB", nodes=8, root=3, algorithms=["ring", "binomial"])
    same, _ = compare("star", "broadcast", "1KiB", nodes=8, params={"root": 3})
    assert [r.to_json() for r in same] == [r.to_json() for r in rows]


def test_compare_rows_give_both_sizes():
    rows, _ = compare("ring", "alltoall", total_size="8KiB", nodes=8, algorithms=["bruck"])
    row = rows[0].to_json()
    assert (row["size_bytes"], row["total_bytes"]) == (1024, 8192)
    assert list(row)[list(row).index("size_bytes") + 1] == "total_bytes"
    with pytest.raises(InputError, match="not both"):
        compare("ring", "alltoall", "1KiB", total_size="8KiB", nodes=8)


# -- one digit rule (issue 31: -S ports=２ was accepted, -s ４MiB refused) ---------------------------------

OTHER_DIGITS = st.characters(categories=["Nd"]).filter(lambda c: not c.isascii())


@given(OTHER_DIGITS, st.sampled_from(["{}", "1{}", "{}MiB", "{}.5", "{}00Gb/s", "{}us"]))
def test_every_number_reader_refuses_other_scripts_digits(digit, form):
    from collsim.core.numbers import parse_number
    from collsim.core.units import parse_time
    text = form.format(digit)
    readers = [parse_size, parse_bandwidth, parse_time]
    if form in ("{}", "1{}", "{}.5"):  # a number: refused even where a word would be a string (-S name=...)
        readers += [parse_number, lambda t: parse_number(t, otherwise="a string")]
    for read in readers:
        with pytest.raises(InputError, match="ASCII digits 0-9"):
            read(text)


@pytest.mark.parametrize("text, value", [("8", 8), ("-3", -3), (" 2.5e-7 ", 2.5e-7), ("+4", 4), ("1e3", 1000.0)])
def test_ascii_numbers_read_as_python_reads_them(text, value):
    from collsim.core.numbers import parse_number
    got = parse_number(text)
    assert got == value and type(got) is type(value)
    assert parse_number("r8", otherwise="r8") == "r8" and parse_number("node\uff12", otherwise=None) is None
    with pytest.raises(InputError, match="not an integer"):
        parse_number("8.0", "nodes", integer=True)
