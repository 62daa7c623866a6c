"""The part of Go's text/template that scheduler_perf's templates use: `{{.Name}}`, `{{if X}} ...
{{else}} ... {{end}}`, and the functions `eq`, `ne`, `AddInt`, `SubtractInt`, `MultiplyInt`,
`DivideInt`, `Mod`. Anything else is refused by name."""
import re

from ..errors import WorkloadError

_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.S)
_WORD = re.compile(r'"(?:[^"\\]|\\.)*"|\S+')
FUNCS = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "AddInt": lambda a, b: int(a) + int(b), "SubtractInt": lambda a, b: int(a) - int(b),
    "MultiplyInt": lambda a, b: int(a) * int(b), "DivideInt": lambda a, b: int(a) // int(b),
    "Mod": lambda a, b: int(a) % int(b),
}


def render(text: str, data: dict, where: str) -> str:
    """The template `text` with `data` (".Index" and the op's templateParams)."""
    parts, pos = [], 0
    for m in _ACTION.finditer(text):
        parts.append(("text", text[pos:m.start()]))
        parts.append(("action", m.group(1)))
        pos = m.end()
    parts.append(("text", text[pos:]))
    out, i = _block(parts, 0, data, where, top=True)
    return out


def _block(parts, i, data, where, top=False, emit=True):
    """Renders parts from i to the matching {{else}}/{{end}}; returns (text, index after it)."""
    out = []
    while i < len(parts):
        kind, body = parts[i]
        if kind == "text":
            if emit:
                out.append(body)
            i += 1
            continue
        word = body.split(None, 1)[0] if body else ""
        if word in ("else", "end"):
            if top:
                raise WorkloadError(where, "", f"template: unexpected {{{{{word}}}}}")
            return "".join(out), i
        if word == "if":
            cond = emit and _truthy(_eval(body[2:].strip(), data, where))
            yes, i = _block(parts, i + 1, data, where, emit=emit and cond)
            no = ""
            if parts[i][1].split(None, 1)[0] == "else":
                no, i = _block(parts, i + 1, data, where, emit=emit and not cond)
            if i >= len(parts) or parts[i][1].strip() != "end":
                raise WorkloadError(where, "", "template: {{if}} without {{end}}")
            out.append(yes if cond else no)
            i += 1
            continue
        if word in ("range", "with", "define", "template", "block"):
            raise WorkloadError(where, "", f"template: {{{{{word}}}}} is not supported")
        if emit:
            value = _eval(body, data, where)
            out.append("" if value is None else str(value))
        i += 1
    if not top:
        raise WorkloadError(where, "", "template: {{if}} without {{end}}")
    return "".join(out), i


def _eval(expr: str, data: dict, where: str):
    words = _WORD.findall(expr)
    if not words:
        raise WorkloadError(where, "", "template: an empty action")
    if words[0] in FUNCS:
        args = [_value(w, data, where) for w in words[1:]]
        try:
            return FUNCS[words[0]](*args)
        except (TypeError, ValueError, ZeroDivisionError) as e:
            raise WorkloadError(where, "", f"template: {expr}: {e}") from None
    if len(words) > 1:
        raise WorkloadError(where, "", f'template: function "{words[0]}" not defined')
    return _value(words[0], data, where)


def _value(word: str, data: dict, where: str):
    if word.startswith("."):
        return data.get(word[1:])        # a missing key: Go's <no value>, falsy in {{if}}
    if word.startswith('"'):
        return word[1:-1].encode().decode("unicode_escape")
    if re.fullmatch(r"-?\d+", word):
        return int(word)
    raise WorkloadError(where, "", f'template: function "{word}" not defined')


def _truthy(value) -> bool:
    return value not in (None, False, 0, "", [], {})
