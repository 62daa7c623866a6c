"""The libyaml event loader (_native/yaml_events.pyx) gives exactly what PyYAML's SafeLoader
gives, or leaves the stream to it: plain scalars resolved as YAML 1.1 resolves them (booleans,
nulls, numbers in every base, sexagesimals, timestamps), quoted and block scalars as strings,
documents and empty documents; anchors, tags, merge keys and syntax errors go to PyYAML.

The loader is built only where libyaml can be linked (setup.py); the tests of the file reader
(`files.documents`) run either way: with the loader or through PyYAML alone, the same objects."""
import math
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from kschedcore.errors import WorkloadError
from kschedcore.sources import files

yaml_events = files.yaml_events
libyaml = pytest.mark.skipif(yaml_events is None, reason="built only where libyaml can be linked (setup.py)")

PLAIN = ["yes", "Yes", "YES", "no", "NO", "on", "Off", "true", "False", "TRUE", "y", "n", "nO", "yes!",
         "null", "Null", "NULL", "nul", "~", "~x", "", "0", "-0", "+1", "012", "0o17", "0x1F", "0b101",
         "1_000", "1:20", "190:20:30", "1.5", "1e3", "1.0e+3", ".5", "-.inf", ".Inf", ".nan", "6.8523015e+5",
         "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "100m", "1Gi",
         "10.0.0.1", "nginx:1.27", "=x", "<x", "-", "-x", "+", ".", "a b", "ünï", "0.0.0.0", "1.2.3"]


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


def _pyyaml(text):
    return list(yaml.load_all(text, Loader=files.SAFE_LOADER))


@libyaml
@pytest.mark.parametrize("value", PLAIN)
def test_plain_scalars_resolve_as_safe_loader(value):
    text = f"k: {value}\nl: [{value}]\n" if value and value[0] not in "-" else f"k: {value}\n"
    try:
        expected = _pyyaml(text)
    except yaml.YAMLError:
        with pytest.raises(yaml_events.Unsupported):
            yaml_events.load_all(text.encode())
        return
    assert _same(yaml_events.load_all(text.encode()), expected), (value, expected)


@libyaml
@pytest.mark.parametrize("value", ["<<", "=", "!!str 1", "!custom x"])
def test_merge_keys_and_tags_go_to_pyyaml(value):
    with pytest.raises(yaml_events.Unsupported):
        yaml_events.load_all(f"k: {value}\n".encode())


@libyaml
def test_anchors_aliases_and_errors_go_to_pyyaml():
    for text in ("a: &x 1\nb: *x\n", "a: [1, 2\n", "? [a]\n: b\n"):
        with pytest.raises(yaml_events.Unsupported):
            yaml_events.load_all(text.encode())


@libyaml
def test_documents_and_styles():
    text = ("---\n---\nkind: Pod\nmetadata: {name: 'p', labels: {\"a\": b}}\nspec:\n  x: |\n    line\n"
            "  y: >-\n    folded\n    text\n  z: 'yes'\n  w: \"1\"\n  e: []\n  m: {}\n...\n--- 7\n")
    assert _same(yaml_events.load_all(text.encode()), _pyyaml(text))


scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=False),
                    st.text(max_size=12), st.sampled_from(PLAIN))
trees = st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(
    st.one_of(st.text(max_size=8), st.sampled_from(PLAIN), st.integers(-5, 5)), c, max_size=4), max_leaves=25)


@libyaml
@settings(max_examples=300, deadline=None)
@given(st.lists(trees, min_size=1, max_size=3), st.sampled_from([None, True, False]))
def test_dumped_streams_load_as_safe_loader(docs, flow):
    text = yaml.safe_dump_all(docs, default_flow_style=flow, allow_unicode=True)
    assert _same(yaml_events.load_all(text.encode()), _pyyaml(text))


@libyaml
def test_the_repositorys_yaml_files_load_identically():
    root = Path(__file__).resolve().parents[1]
    paths = sorted(p for p in [*root.glob("tests/**/*.yaml"), *root.glob("examples/**/*.yaml")])
    assert len(paths) > 5
    for path in paths:
        text = path.read_text()
        try:
            expected = _pyyaml(text)
        except yaml.YAMLError:
            continue
        try:
            got = yaml_events.load_all(text.encode())
        except yaml_events.Unsupported:
            continue
        assert _same(got, expected), path


def _safe_loader(text):
    """PyYAML's own pure-Python SafeLoader, the reference for the file reader's documents."""
    return [d for d in yaml.load_all(text, Loader=yaml.SafeLoader) if d is not None]


def _read(text):
    """What the file reader makes of a stream: the libyaml loader where it is built, else PyYAML."""
    return files.documents(Path("x.yaml"), text)


@pytest.mark.parametrize("value", PLAIN)
def test_files_read_plain_scalars_as_safe_loader(value):
    text = f"k: {value}\nl: [{value}]\n" if value and value[0] not in "-" else f"k: {value}\n"
    try:
        expected = _safe_loader(text)
    except yaml.YAMLError:
        with pytest.raises(WorkloadError, match="invalid YAML/JSON"):
            _read(text)
        return
    assert _same(_read(text), expected), (value, expected)


def test_files_read_anchors_merge_keys_and_styles():
    for text in ("base: &b {cpu: '1'}\npod: {<<: *b, memory: 1Gi}\n", "a: !!str 1\nb: &x 1\nc: *x\n",
                 "---\n---\nkind: Pod\nspec:\n  x: |\n    line\n  y: >-\n    folded\n    text\n"
                 "  z: 'yes'\n  w: \"1\"\n  e: []\n  m: {}\n...\n--- 7\n"):
        assert _same(_read(text), _safe_loader(text)), text


objects = st.dictionaries(st.one_of(st.text(max_size=8), st.sampled_from(PLAIN)), trees, max_size=4)


@settings(max_examples=100, deadline=None)
@given(st.lists(objects, min_size=1, max_size=3), st.sampled_from([None, True, False]))
def test_files_read_dumped_streams_as_safe_loader(docs, flow):
    """Streams of mappings (a top-level JSON list is a list of objects to the reader)."""
    text = yaml.safe_dump_all(docs, default_flow_style=flow, allow_unicode=True)
    assert _same(_read(text), _safe_loader(text))


def test_files_read_the_repositorys_yaml_files_as_safe_loader():
    root = Path(__file__).resolve().parents[1]
    paths = sorted(p for p in [*root.glob("tests/**/*.yaml"), *root.glob("examples/**/*.yaml")])
    assert len(paths) > 5
    for path in paths:
        text = path.read_text()
        try:
            expected = _safe_loader(text)
        except yaml.YAMLError:
            continue
        assert _same(_read(text), expected), path
