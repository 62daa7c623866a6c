"""Label selectors written as kubectl takes them (`-l`, apimachinery's labels.Parse):
`app=web,tier!=db,env in (prod,staging),!canary,gpu`."""
import re
from collections.abc import Callable, Sequence
from typing import NoReturn

from ..errors import ValidationError
from .pod_affinity import LabelSelector
from .validation import label_value_errors, qualified_name_errors

_TOKEN = re.compile(r"\s*(?:(?P<set>\b(?:in|notin)\b)|(?P<op>==|!=|=|\(|\)|,|!)|(?P<word>[^\s=!(),]+))")


def parse_selector(text: str, flag: str = "--pods") -> LabelSelector:
    """A LabelSelector from kubectl's selector syntax, or a ValidationError naming `flag`."""
    tokens = _tokens(text, flag)
    reqs: list = []
    i = 0

    def fail(message: str) -> NoReturn:
        raise ValidationError(flag, "", f'invalid selector "{text}": {message}')

    def take(kind: str) -> str:
        nonlocal i
        if i >= len(tokens) or tokens[i][0] != kind:
            fail("expected a key or a value" if kind == "word" else f"expected {kind}")
        i += 1
        return tokens[i - 1][1]

    while i < len(tokens):
        negate = tokens[i] == ("op", "!")
        if negate:
            i += 1
        key = take("word")
        _check(qualified_name_errors(key), key, fail)
        nxt = tokens[i] if i < len(tokens) else ("op", ",")
        if negate or nxt == ("op", ","):
            reqs.append((key, "DoesNotExist" if negate else "Exists", frozenset()))
        elif nxt[0] == "op" and nxt[1] in ("=", "==", "!="):
            i += 1
            value = tokens[i][1] if i < len(tokens) and tokens[i][0] == "word" else ""
            i += value != ""
            _check(label_value_errors(value), value, fail)
            reqs.append((key, "NotIn" if nxt[1] == "!=" else "In", frozenset([value])))
        elif nxt[0] == "set":
            i += 1
            if tokens[i:i + 1] != [("op", "(")]:
                fail(f'expected "(" after {nxt[1]}')
            i += 1
            values = []
            while tokens[i:i + 1] != [("op", ")")]:
                value = take("word")
                _check(label_value_errors(value), value, fail)
                values.append(value)
                if tokens[i:i + 1] == [("op", ",")]:
                    i += 1
            i += 1
            if not values:
                fail(f"{nxt[1]} needs at least one value")
            reqs.append((key, "In" if nxt[1] == "in" else "NotIn", frozenset(values)))
        else:
            fail(f'unexpected "{nxt[1]}" after "{key}"')
        if i < len(tokens):
            if tokens[i] != ("op", ","):
                fail(f'expected "," before "{tokens[i][1]}"')
            i += 1
    return LabelSelector(tuple(reqs))


def _tokens(text: str, flag: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ValidationError(flag, "", f'invalid selector "{text}" at "{text[pos:]}"')
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    if not out:
        raise ValidationError(flag, "", "an empty selector")
    return out


def _check(errors: Sequence[str], value: str, fail: Callable[[str], NoReturn]) -> None:
    if errors:
        fail(f'"{value}": {errors[0]}')
