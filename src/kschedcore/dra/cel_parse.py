"""The CEL grammar (cel-spec's ``CEL.g4``, as cel-go parses it): text -> a tree of tuples.

A node is ``(kind, offset, ...)``; ``offset`` is the character offset of the node in the
expression, for cel-go's ``<input>:line:column`` error positions. Kinds:
``lit value`` · ``ident name`` · ``select operand field`` · ``index operand key`` ·
``call name target args`` (target None for a global call) · ``list items`` ·
``map entries`` · ``cond c a b`` · and the macros cel-go expands at parse time:
``has operand field`` · ``comp macro range iter iter2 args`` · ``bind var init body``.
"""
from __future__ import annotations

import re

from .cel_values import CELCompileError, UInt, compile_error

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n\f]+|//[^\n]*)
  | (?P<num>0[xX][0-9a-fA-F]+[uU]?|(?:[0-9]+\.[0-9]+|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?[uU]?)
  | (?P<str>[rR]?[bB]?[rR]?(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<id>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|\.\?|\[\?|[-+*/%!<>?:.,\[\](){}])
""", re.VERBOSE | re.DOTALL)

_RESERVED = frozenset("as break const continue else for function if import let loop package namespace "
                      "return var void while".split())
_RELATIONS = ("<", "<=", ">=", ">", "==", "!=", "in")
_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1
_MACROS = {("all", 2), ("exists", 2), ("exists_one", 2), ("map", 2), ("map", 3), ("filter", 2),
           ("all", 3), ("exists", 3), ("existsOne", 3), ("exists_one", 3),
           ("transformList", 3), ("transformList", 4), ("transformMap", 3), ("transformMap", 4),
           ("optMap", 2), ("optFlatMap", 2)}
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
            "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?"}


def _tokens(src: str) -> list[tuple[str, str, int]]:
    out, pos = [], 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if m is None:
            raise compile_error(src, pos, f"Syntax error: token recognition error at: '{src[pos]}'")
        if m.lastgroup != "ws":
            out.append((m.lastgroup, m.group(), pos))
        pos = m.end()
    out.append(("eof", "<EOF>", len(src)))
    return out


class _Parser:
    def __init__(self, src: str):
        self.src = src
        self.toks = _tokens(src)
        self.i = 0

    # -- token helpers
    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i]

    def take(self) -> tuple[str, str, int]:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def accept(self, text: str) -> bool:
        kind, val, _ = self.peek()
        if kind in ("op", "id") and val == text:
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> int:
        kind, val, pos = self.peek()
        if not ((kind == "op" or kind == "id") and val == text):
            if kind == "eof":
                raise self.error(pos, f"Syntax error: missing '{text}' at '<EOF>'")
            raise self.error(pos, f"Syntax error: mismatched input '{val}' expecting '{text}'")
        self.i += 1
        return pos

    def error(self, pos: int, msg: str) -> CELCompileError:
        return compile_error(self.src, pos, msg)

    # -- grammar
    def parse(self):
        node = self.expr()
        kind, val, pos = self.peek()
        if kind != "eof":
            raise self.error(pos, f"Syntax error: extraneous input '{val}' expecting <EOF>")
        return node

    def expr(self):
        c = self.cond_or()
        kind, val, pos = self.peek()
        if kind == "op" and val == "?":
            self.take()
            a = self.cond_or()
            self.expect(":")
            b = self.expr()
            return ("cond", pos, c, a, b)
        return c

    def cond_or(self):
        node = self.cond_and()
        while self.peek()[1] == "||" and self.peek()[0] == "op":
            pos = self.take()[2]
            node = ("call", pos, "_||_", None, [node, self.cond_and()])
        return node

    def cond_and(self):
        node = self.relation()
        while self.peek()[1] == "&&" and self.peek()[0] == "op":
            pos = self.take()[2]
            node = ("call", pos, "_&&_", None, [node, self.relation()])
        return node

    def relation(self):
        node = self.addition()
        while self.peek()[1] in _RELATIONS and self.peek()[0] in ("op", "id"):
            _, op, pos = self.take()
            name = "@in" if op == "in" else f"_{op}_"
            node = ("call", pos, name, None, [node, self.addition()])
        return node

    def addition(self):
        node = self.multiplication()
        while self.peek()[0] == "op" and self.peek()[1] in ("+", "-"):
            _, op, pos = self.take()
            node = ("call", pos, f"_{op}_", None, [node, self.multiplication()])
        return node

    def multiplication(self):
        node = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("*", "/", "%"):
            _, op, pos = self.take()
            node = ("call", pos, f"_{op}_", None, [node, self.unary()])
        return node

    def unary(self):
        kind, val, pos = self.peek()
        if kind == "op" and val in ("!", "-"):
            ops = []
            while self.peek()[0] == "op" and self.peek()[1] == val:
                ops.append(self.take()[2])
            if val == "-" and self.peek()[0] == "num" and len(ops) % 2 == 1:
                ops.pop()
                node = self.member(self.number(negative=True))
            else:
                node = self.member()
            name = "!_" if val == "!" else "-_"
            for p in reversed(ops):
                node = ("call", p, name, None, [node])
            return node
        return self.member()

    def member(self, node=None):
        node = self.primary() if node is None else node
        while True:
            kind, val, pos = self.peek()
            if kind != "op":
                return node
            if val == ".":
                self.take()
                k2, name, npos = self.take()
                if k2 != "id":
                    raise self.error(npos, f"Syntax error: no viable alternative at input '.{name}'")
                if self.peek()[:2] == ("op", "("):
                    cpos = self.take()[2]
                    node = self.receiver_call(node, name, cpos, self.args(")"))
                else:
                    node = ("select", pos, node, name)
            elif val == "[":
                self.take()
                key = self.expr()
                self.expect("]")
                node = ("index", pos, node, key)
            elif val == ".?":
                self.take()
                k2, name, npos = self.take()
                if k2 != "id":
                    raise self.error(npos, f"Syntax error: no viable alternative at input '.?{name}'")
                node = ("optselect", pos, node, name)
            elif val == "[?":
                self.take()
                key = self.expr()
                self.expect("]")
                node = ("optindex", pos, node, key)
            else:
                return node

    def args(self, close: str) -> list:
        out = []
        if self.accept(close):
            return out
        while True:
            out.append(self.expr())
            if self.accept(close):
                return out
            self.expect(",")
            if self.accept(close):       # a trailing comma
                return out

    def receiver_call(self, target, name, pos, args):
        if (name, len(args)) in _MACROS:
            return self.macro(target, name, pos, args)
        if name == "bind" and len(args) == 3 and target[0] == "ident" and target[2] == "cel":
            var = args[0]
            if var[0] != "ident":
                raise self.error(var[1], "cel.bind() variable name must be a simple identifier")
            return ("bind", pos, var[2], args[1], args[2])
        return ("call", pos, name, target, args)

    def macro(self, target, name, pos, args):
        if name in ("map", "filter"):
            n_iters = 1
        elif name in ("transformList", "transformMap"):
            n_iters = 2
        else:
            n_iters = len(args) - 1
        iters, rest = args[:n_iters], args[n_iters:]
        for it in iters:
            if it[0] != "ident":
                raise self.error(it[1], f"{name}() variable name must be a simple identifier")
        second = iters[1][2] if n_iters == 2 else None
        return ("comp", pos, name, target, iters[0][2], second, rest)

    def primary(self):
        kind, val, pos = self.peek()
        if kind == "id":
            self.take()
            if val in ("true", "false"):
                return ("lit", pos, val == "true")
            if val == "null":
                return ("lit", pos, None)
            if val in _RESERVED or val == "in":
                raise self.error(pos, f"Syntax error: reserved identifier: {val}")
            if self.peek()[:2] == ("op", "("):
                cpos = self.take()[2]
                args = self.args(")")
                if val == "has":
                    if len(args) != 1 or args[0][0] != "select":
                        raise self.error(pos, "invalid argument to has() macro")
                    _, spos, operand, field = args[0]
                    return ("has", cpos, operand, field)
                return ("call", cpos, val, None, args)
            return ("ident", pos, val)
        if kind == "num":
            return self.number()
        if kind == "str":
            self.take()
            return ("lit", pos, self.string(val, pos))
        if kind == "op":
            if val == ".":
                self.take()
                k2, name, npos = self.take()
                if k2 != "id":
                    raise self.error(npos, f"Syntax error: mismatched input '{name}' expecting IDENTIFIER")
                if self.peek()[:2] == ("op", "("):
                    self.take()
                    return ("call", npos, name, None, self.args(")"))
                return ("ident", npos, name)
            if val == "(":
                self.take()
                node = self.expr()
                self.expect(")")
                return node
            if val == "[":
                self.take()
                return ("list", pos, self.list_items())
            if val == "{":
                self.take()
                return ("map", pos, self.entries())
        raise self.error(pos, f"Syntax error: mismatched input '{val}' expecting "
                         "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, "
                         "NUM_UINT, STRING, BYTES, IDENTIFIER}")

    def list_items(self) -> list:
        """A list literal's elements; ``?x`` adds x's value only if the optional has one."""
        out = []
        if self.accept("]"):
            return out
        while True:
            optional = self.accept("?")
            item = self.expr()
            out.append(("optelem", item[1], item) if optional else item)
            if self.accept("]"):
                return out
            self.expect(",")
            if self.accept("]"):
                return out

    def entries(self) -> list:
        out = []
        if self.accept("}"):
            return out
        while True:
            optional = self.accept("?")
            key = self.expr()
            self.expect(":")
            value = self.expr()
            out.append((key, ("optelem", value[1], value) if optional else value))
            if self.accept("}"):
                return out
            self.expect(",")
            if self.accept("}"):
                return out

    def number(self, negative: bool = False):
        _, text, pos = self.take()
        unsigned = text[-1] in "uU"
        body = text[:-1] if unsigned else text
        if body[:2] in ("0x", "0X"):
            value = int(body, 16)
        elif any(c in body for c in ".eE"):
            if unsigned:
                raise self.error(pos, f"Syntax error: token recognition error at: '{text}'")
            return ("lit", pos, -float(body) if negative else float(body))
        else:
            value = int(body)
        if negative:
            value = -value
        if unsigned:
            if negative or value > _UINT64_MAX:
                raise self.error(pos, "error parsing uint: " + text)
            return ("lit", pos, UInt(value))
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise self.error(pos, "error parsing int: " + ("-" if negative else "") + text)
        return ("lit", pos, value)

    def string(self, tok: str, pos: int):
        prefix = ""
        while tok[0] in "rRbB":
            prefix += tok[0].lower()
            tok = tok[1:]
        body = tok[3:-3] if tok[:3] in ('"""', "'''") else tok[1:-1]
        text = body if "r" in prefix else self.unescape(body, pos)
        if "b" in prefix:
            return text.encode("utf-8") if "r" in prefix else text.encode("latin-1", "surrogateescape")
        return text

    def unescape(self, body: str, pos: int) -> str:
        out, i = [], 0
        while i < len(body):
            c = body[i]
            if c != "\\":
                out.append(c)
                i += 1
                continue
            n = body[i + 1]
            if n in _ESCAPES:
                out.append(_ESCAPES[n])
                i += 2
            elif n in "xX":
                out.append(chr(int(body[i + 2:i + 4], 16)))
                i += 4
            elif n == "u":
                out.append(chr(int(body[i + 2:i + 6], 16)))
                i += 6
            elif n == "U":
                out.append(chr(int(body[i + 2:i + 10], 16)))
                i += 10
            elif n in "0123":
                out.append(chr(int(body[i + 1:i + 4], 8)))
                i += 4
            else:
                raise self.error(pos, f"Syntax error: token recognition error at: '\\{n}'")
        return "".join(out)


def parse(src: str):
    """The expression's tree (the module docstring's node kinds); raises CELCompileError."""
    return _Parser(src).parse()
