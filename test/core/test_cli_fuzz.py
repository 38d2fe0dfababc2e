"""Property: whatever a file holds, the CLI answers with exit 0, 1 or 2 and never an exception.

Hypothesis builds documents near the standard's shapes (the sample recipe with members replaced
by other types, nested deeply, numbers far out of range) and plain bytes (invalid UTF-8, binary,
empty). Each goes through validate, hash, verify, dryrun and `recipes add`, in this process.
A few hundred examples run here; the long run is benchmarks/fuzz_bench.py.
"""

from __future__ import annotations

import json
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cookwala_ros import cli

REPO = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = json.loads((REPO / "examples" / "recipes" / "tomato-soup.cookwala.json").read_text()) \
    if (REPO / "examples" / "recipes" / "tomato-soup.cookwala.json").exists() else {"core": "0.2.0", "kind": "Recipe"}

scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10 ** 30), max_value=10 ** 30),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=20)


@st.composite
def mutated_sample(draw) -> str:
    """The sample recipe with up to three members (at any depth) replaced by other values."""
    doc = json.loads(json.dumps(SAMPLE))
    for _ in range(draw(st.integers(0, 3))):
        node, path = doc, []
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
            path.append((node, key))
            node = node[key]
        if path:
            parent, key = path[-1]
            parent[key] = draw(values)
    return json.dumps(doc)


def deep(n: int, opener: str, closer: str) -> str:
    return opener * n + closer * n


texts = st.one_of(
    mutated_sample(),
    values.map(json.dumps),
    st.integers(1, 5000).map(lambda n: deep(n, "[", "]")),
    st.integers(1, 5000).map(lambda n: deep(n, '{"a":', "}").replace("}", "1}", 1)),
    st.integers(20, 20_000).map(lambda n: '{"core": "0.2.0", "servings": ' + "7" * n + "}"),
    st.sampled_from(["", " ", "null", "1e999", "-0", '"text"', "{", "[1,]", '{"a": NaN}', "\ufeff{}"]),
)
raw_bytes = st.one_of(st.binary(max_size=200), st.just(b"\xff\xfe{\x00}"), st.just(b'{"a": "\xc3\x28"}'))


COMMANDS = (
    ("validate", "{f}"),
    ("hash", "{f}"),
    ("verify", "{f}"),
    ("dryrun", "{f}", "--device", "{caps}"),
    ("dryrun", "{caps}", "--device", "{f}"),
    ("recipes", "--library", "{lib}", "add", "{f}"),
)


def run_all(tmp: pathlib.Path, payload: bytes, capsys) -> None:
    doc = tmp / "doc.json"
    doc.write_bytes(payload)
    caps = tmp / "caps.json"
    if not caps.exists():
        caps.write_text(json.dumps({"capabilities": {"ops": [{"op": "cw.op.simmer"}], "sensors": []}}))
    for command in COMMANDS:
        argv = [a.format(f=doc, caps=caps, lib=tmp / "library") for a in command]
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse: 2 with its usage line
            code = exc.code
        err = capsys.readouterr().err
        assert code in (0, 1, 2), (argv[0], code, payload[:80])
        assert "Traceback" not in err, err


FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow])


@FUZZ
@given(text=texts)
def test_documents_near_the_standard_never_raise(tmp_path, capsys, text):
    run_all(tmp_path, text.encode("utf-8", "surrogatepass"), capsys)


@FUZZ
@given(payload=raw_bytes)
def test_bytes_never_raise(tmp_path, capsys, payload):
    run_all(tmp_path, payload, capsys)


@pytest.mark.parametrize("payload", [b"", b"\x00" * 10, "[" .encode() * 100_000])
def test_edge_files_never_raise(tmp_path, capsys, payload):
    run_all(tmp_path, payload, capsys)


def test_a_directory_in_place_of_a_file_is_a_message(tmp_path, capsys):
    for command in COMMANDS:
        argv = [a.format(f=tmp_path, caps=tmp_path, lib=tmp_path / "library") for a in command]
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code
        assert code in (1, 2) and "Traceback" not in capsys.readouterr().err, argv
