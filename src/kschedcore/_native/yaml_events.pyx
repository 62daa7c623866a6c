"""YAML documents to Python objects straight from libyaml's events: what PyYAML's CSafeLoader
builds, without its Python composer and constructor (about 20x faster on Kubernetes dumps).

Exactly SafeLoader's results or no result: plain scalars are resolved as its YAML 1.1
resolver resolves them (booleans and nulls here, anything that may be a number, a timestamp
or a merge key through PyYAML's own resolver and constructor, cached by value); quoted and
block scalars are strings. A stream with anchors, aliases, explicit tags, non-scalar keys or
a syntax error raises Unsupported, and the caller loads it with PyYAML instead (its errors,
its answer)."""
import gc
from functools import lru_cache

import yaml

from cpython.unicode cimport PyUnicode_DecodeUTF8


#: strings up to this many bytes are shared within a load (keys, label values, conditions)
cdef enum:
    SHARED_LENGTH = 64


class Unsupported(Exception):
    """The stream uses what this loader leaves to PyYAML."""


_resolver = yaml.resolver.Resolver()
_constructor = yaml.constructor.SafeConstructor()
_PLAIN_TAGS = {"tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
               "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null", "tag:yaml.org,2002:timestamp"}


@lru_cache(maxsize=1 << 16)
def _resolve(str value):
    """A plain scalar that may be other than a string, as SafeLoader resolves and builds it."""
    tag = _resolver.resolve(yaml.ScalarNode, value, (True, False))
    if tag not in _PLAIN_TAGS:
        raise Unsupported(tag)
    return _constructor.construct_object(yaml.ScalarNode(tag, value), deep=True)


cdef object _plain(const char* s, size_t n):
    cdef char c
    if n == 0:
        return None
    text = PyUnicode_DecodeUTF8(s, n, "strict")
    c = s[0]
    if c in b"yYnNtTfFoO":
        # YAML 1.1 booleans and nulls; every other word is a string
        if n <= 5 and text in _WORDS:
            return _WORDS[text]
        return text
    if c in b"-+0123456789.~<=":
        return _resolve(text)
    return text


_WORDS = {w: True for w in ("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")}
_WORDS.update({w: False for w in ("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")})
_WORDS.update({w: None for w in ("null", "Null", "NULL")})


def load_all(bytes data) -> list:
    """Every document of a UTF-8 YAML stream (None for an empty one), as yaml.load_all with
    SafeLoader; raises Unsupported where it must not answer."""
    cdef yaml_parser_t parser
    cdef yaml_event_t ev
    cdef bint done = False
    docs, stack, keys = [], [], []
    strings = {}        # one object per distinct short string: keys and values repeat in dumps
    if not yaml_parser_initialize(&parser):
        raise MemoryError("libyaml parser")
    yaml_parser_set_input_string(&parser, <const unsigned char*>data, len(data))
    # millions of new containers, none of them in a cycle: the collector's passes over the
    # growing heap would take most of the time
    collecting = gc.isenabled()
    gc.disable()
    try:
        while not done:
            if not yaml_parser_parse(&parser, &ev):
                raise Unsupported("syntax")
            try:
                done = _event(&ev, docs, stack, keys, strings)
            finally:
                yaml_event_delete(&ev)
    finally:
        yaml_parser_delete(&parser)
        if collecting:
            gc.enable()
    return docs


cdef bint _event(yaml_event_t* ev, list docs, list stack, list keys, dict strings) except -1:
    """One event into the documents under construction; True at the stream's end."""
    cdef int kind = ev.type
    if kind == YAML_SCALAR_EVENT:
        if ev.data.scalar.anchor != NULL or ev.data.scalar.tag != NULL:
            raise Unsupported("anchor or tag")
        if ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE:
            value = _plain(<const char*>ev.data.scalar.value, ev.data.scalar.length)
        else:
            value = PyUnicode_DecodeUTF8(<const char*>ev.data.scalar.value, ev.data.scalar.length, "strict")
        if ev.data.scalar.length <= SHARED_LENGTH and type(value) is str:
            # the new copy is freed at once and its memory reused: fewer fresh pages to touch
            value = strings.setdefault(value, value)
        _add(value, docs, stack, keys)
    elif kind == YAML_MAPPING_START_EVENT or kind == YAML_SEQUENCE_START_EVENT:
        if kind == YAML_MAPPING_START_EVENT:
            if ev.data.mapping_start.anchor != NULL or ev.data.mapping_start.tag != NULL:
                raise Unsupported("anchor or tag")
            node = {}
        else:
            if ev.data.sequence_start.anchor != NULL or ev.data.sequence_start.tag != NULL:
                raise Unsupported("anchor or tag")
            node = []
        _add(node, docs, stack, keys)
        stack.append(node)
        keys.append(_NO_KEY)
    elif kind == YAML_MAPPING_END_EVENT or kind == YAML_SEQUENCE_END_EVENT:
        stack.pop()
        keys.pop()
    elif kind == YAML_DOCUMENT_START_EVENT:
        docs.append(None)
    elif kind == YAML_ALIAS_EVENT:
        raise Unsupported("alias")
    elif kind == YAML_STREAM_END_EVENT:
        return True
    return False


_NO_KEY = object()


cdef int _add(object value, list docs, list stack, list keys) except -1:
    """A node into its parent: the document's root, a list's next item, a mapping's key or
    the value of the key before it."""
    if not stack:
        docs[len(docs) - 1] = value
        return 0
    parent = stack[len(stack) - 1]
    if type(parent) is list:
        (<list>parent).append(value)
        return 0
    key = keys[len(keys) - 1]
    if key is _NO_KEY:
        if type(value) is dict or type(value) is list:
            raise Unsupported("a collection as a key")
        keys[len(keys) - 1] = value
    else:
        (<dict>parent)[key] = value
        keys[len(keys) - 1] = _NO_KEY
    return 0
