"""The placement-constraint language's syntax (SPEC section 1, "Constraint expressions").

The tokenizer and the recursive-descent parser, which turn a constraint's text into a tree of
the node classes of :mod:`fairshare.cluster.constraint_tree`. The grammar and the semantics
are in :mod:`fairshare.cluster.constraints`, which compiles the tree for evaluation. The text
is never run as code: only those node classes can come out of :func:`parse_tree`.

Examples
--------
>>> from fairshare.cluster.constraint_syntax import parse_tree
>>> tree = parse_tree("gpu and rack != 'r3'")
>>> type(tree).__name__
'And'
>>> tree.operands[1]
Comparison(op='!=', left=MachineRack(), right=LiteralValue(value='r3'))
"""

from __future__ import annotations

import re
from typing import NamedTuple

from fairshare.cluster.constraint_tree import (
    And,
    Attribute,
    CompareOp,
    Comparison,
    Expr,
    LiteralList,
    LiteralValue,
    MachineName,
    MachineRack,
    Not,
    Operand,
    Or,
    Scalar,
    Truth,
)
from fairshare.errors import FairshareError

__all__ = [
    "MAX_DEPTH",
    "And",
    "Attribute",
    "CompareOp",
    "Comparison",
    "ConstraintSyntaxError",
    "Expr",
    "LiteralList",
    "LiteralValue",
    "MachineName",
    "MachineRack",
    "Not",
    "Operand",
    "Or",
    "Scalar",
    "Truth",
    "parse_tree",
]


MAX_DEPTH = 100
"""Nesting limit for parentheses plus ``not`` (keeps parsing and evaluation off the
interpreter's recursion limit).
"""

_ALLOWED = (
    "allowed: attribute names, name, rack, literals (numbers, 'strings', true/false, [lists]), "
    "== != < <= > >= in, not in, and, or, not, parentheses"
)


class ConstraintSyntaxError(FairshareError, ValueError):
    """A constraint that is not in the language (SPEC section 1).

    ``str(error)`` is the one-line ``message`` (what is wrong and what is allowed); callers
    add the column and the field path when they report it (the loader's ``ScenarioError``).

    Parameters
    ----------
    message : str
        What is wrong and what is allowed, on one line.
    column : int
        The 1-based column of the problem in the constraint's text.

    Examples
    --------
    >>> from fairshare.cluster.constraint_syntax import ConstraintSyntaxError, parse_tree
    >>> try:
    ...     parse_tree("cores = 4")
    ... except ConstraintSyntaxError as error:
    ...     print(error.column, error.message.split(";")[0])
    7 use '==' to compare ('=' alone is not allowed)
    """

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


# --------------------------------------------------------------------------------------------
# Tokenizer.


class _Token(NamedTuple):
    """One token: its kind, its text, its value (for literals) and its 1-based column."""

    kind: str  # ident name rack num str bool op and or not in ( ) [ ] , end error
    text: str
    value: Scalar
    column: int


_TOKEN_RE = re.compile(
    r"""
      (?P<ws>\s+)
    | (?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
    | (?P<ident>[A-Za-z_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_])?)
    | (?P<op>==|!=|<=|>=|<|>)
    | (?P<punct>[()\[\],])
    | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    """,
    re.VERBOSE | re.DOTALL,
)
_ESCAPE_RE = re.compile(r"\\(.)", re.DOTALL)
_WORDS: dict[str, tuple[str, Scalar]] = {
    "and": ("and", ""),
    "or": ("or", ""),
    "not": ("not", ""),
    "in": ("in", ""),
    "true": ("bool", True),
    "True": ("bool", True),
    "false": ("bool", False),
    "False": ("bool", False),
    "name": ("name", ""),
    "rack": ("rack", ""),
}
_CHAR_HINTS: dict[str, str] = {
    "=": "use '==' to compare ('=' alone is not allowed)",
    "!": "use 'not' for negation ('!' is only allowed in '!=')",
    "&": "use 'and' instead of '&'",
    "|": "use 'or' instead of '|'",
    ".": "attribute access ('.') is not allowed ('.' may only appear inside an attribute name)",
    "+": "arithmetic is not allowed ('+' and '-' are only allowed as the sign of a number)",
    "-": "arithmetic is not allowed ('+' and '-' are only allowed as the sign of a number)",
    "*": "arithmetic is not allowed",
    "/": "arithmetic is not allowed",
    "%": "arithmetic is not allowed",
}


def _tokenize(text: str) -> list[_Token]:
    """Split ``text`` into tokens. A bad character ends the list with an ``error`` token, so
    that the parser reports the leftmost problem first."""
    tokens: list[_Token] = []
    append = tokens.append
    match = _TOKEN_RE.match
    pos = 0
    n = len(text)
    while pos < n:
        m = match(text, pos)
        if m is None:
            append(_bad_char(text, pos))
            return tokens
        kind = m.lastgroup
        tok = m.group()
        col = pos + 1
        end = m.end()
        if kind == "ident":
            word = _WORDS.get(tok)
            if word is None:
                append(_Token("ident", tok, tok, col))
            else:
                append(_Token(word[0], tok, word[1], col))
        elif kind == "op":
            append(_Token("op", tok, tok, col))
        elif kind == "punct":
            append(_Token(tok, tok, tok, col))
        elif kind == "num":
            if end < n and (text[end].isalnum() or text[end] in "_."):
                bad = re.match(r"[\w.+-]*", text[end:])
                whole = tok + (bad.group() if bad else "")
                message = f"malformed number {whole!r}; quote text and version numbers, e.g. "
                message += "kernel >= '5.4.2'"
                append(_Token("error", message, "", col))
                return tokens
            append(_number(tok, col))
        elif kind == "str":
            append(_string(tok, col))
        pos = end
    append(_Token("end", "", "", n + 1))
    return tokens


def _bad_char(text: str, pos: int) -> _Token:
    """An ``error`` token for the character at ``pos``, with a hint for the usual mistakes."""
    char = text[pos]
    col = pos + 1
    if char in "'\"":
        message = (
            f"unterminated string: the quote {char} at column {col} is never closed; "
            f"end the string with {char} (write \\{char} for a quote inside it)"
        )
    else:
        hint = _CHAR_HINTS.get(char, f"unexpected character {char!r}")
        message = f"{hint}; {_ALLOWED}"
    return _Token("error", message, "", col)


def _number(text: str, col: int) -> _Token:
    """A ``num`` token, or an ``error`` one for a number Python cannot hold."""
    if any(c in text for c in ".eE"):
        value: float | int = float(text)
        if value in (float("inf"), float("-inf")):
            return _Token("error", f"number {text} is out of range", "", col)
    else:
        try:
            value = int(text)
        except ValueError:  # more digits than Python converts
            return _Token("error", f"number {text[:20]}... has too many digits", "", col)
    return _Token("num", text, value, col)


def _string(text: str, col: int) -> _Token:
    """A ``str`` token with its escapes resolved, or an ``error`` one for an unknown escape."""
    body = text[1:-1]
    if "\\" not in body:
        return _Token("str", text, body, col)
    for esc in _ESCAPE_RE.finditer(body):
        if esc.group(1) not in "\\'\"":
            message = (
                f"unknown escape {esc.group()!r} in a string; only \\' \\\" and \\\\ are allowed"
            )
            return _Token("error", message, "", col + 1 + esc.start())
    return _Token("str", text, _ESCAPE_RE.sub(r"\1", body), col)


# --------------------------------------------------------------------------------------------
# Parser.

_OPERAND_KINDS = frozenset({"ident", "name", "rack", "num", "str", "bool"})
_SCALAR_KINDS = frozenset({"num", "str", "bool"})


def _describe(tok: _Token) -> str:
    """A token as an error message names it (cut when long, control characters escaped)."""
    if tok.kind == "end":
        return "the end of the constraint"
    text = tok.text if len(tok.text) <= 30 else tok.text[:27] + "..."
    text = text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    if tok.kind == "str":
        return f"the string {text}"
    return f"'{text}'"


class _Parser:
    """The recursive-descent parser of the module docstring's grammar, one method per rule; the
    first problem raises a :class:`ConstraintSyntaxError` with its column.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0
        self.depth = 0

    # -- token access ---------------------------------------------------------------------
    def peek(self) -> _Token:
        """The next token; a tokenizer error token raises its error here."""
        tok = self.tokens[self.pos]
        if tok.kind == "error":
            raise ConstraintSyntaxError(tok.text, tok.column)
        return tok

    def advance(self) -> _Token:
        """Consume and return the next token."""
        tok = self.peek()
        self.pos += 1
        return tok

    def at_comparison(self) -> bool:
        """Whether the next tokens are ``==``-like, ``in`` or ``not in``."""
        kind = self.peek().kind
        if kind in ("op", "in"):
            return True
        return kind == "not" and self.tokens[self.pos + 1].kind == "in"

    def previous(self) -> str:
        """Where the parser is, for a message: at the start, or after the last token."""
        if self.pos == 0:
            return "at the start"
        return f"after {_describe(self.tokens[self.pos - 1])}"

    # -- grammar --------------------------------------------------------------------------
    def parse(self) -> Expr:
        """``constraint := or_expr END``."""
        if self.peek().kind == "end":
            raise ConstraintSyntaxError(
                "empty constraint: write a condition such as gpu and rack != 'r3'; " + _ALLOWED,
                1,
            )
        expr = self.parse_or()
        tok = self.peek()
        if tok.kind != "end":
            raise self.trailing(tok)
        return expr

    def parse_or(self) -> Expr:
        """``or_expr := and_expr ("or" and_expr)*``."""
        first = self.parse_and()
        if self.peek().kind != "or":
            return first
        items = [first]
        while self.peek().kind == "or":
            self.advance()
            items.append(self.parse_and())
        return Or(tuple(items))

    def parse_and(self) -> Expr:
        """``and_expr := not_expr ("and" not_expr)*``."""
        first = self.parse_not()
        if self.peek().kind != "and":
            return first
        items = [first]
        while self.peek().kind == "and":
            self.advance()
            items.append(self.parse_not())
        return And(tuple(items))

    def parse_not(self) -> Expr:
        """``not_expr := "not" not_expr | primary``, counted against :data:`MAX_DEPTH`."""
        count = 0
        while self.peek().kind == "not":
            tok = self.advance()
            count += 1
            self.enter(tok)
        expr = self.parse_primary()
        self.depth -= count
        for _ in range(count):
            expr = Not(expr)
        return expr

    def enter(self, tok: _Token) -> None:
        """One level deeper (a ``(`` or a ``not``); past :data:`MAX_DEPTH` an error."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ConstraintSyntaxError(
                f"the constraint nests too deeply (more than {MAX_DEPTH} levels of parentheses "
                "and not)",
                tok.column,
            )

    def parse_primary(self) -> Expr:
        """``primary := "(" or_expr ")" | operand [comparison]``."""
        tok = self.peek()
        kind = tok.kind
        if kind in _OPERAND_KINDS:
            return self.parse_comparison(self.parse_operand())
        if kind == "(":
            self.advance()
            self.enter(tok)
            expr = self.parse_or()
            close = self.peek()
            if close.kind == "end":
                raise ConstraintSyntaxError(
                    f"unbalanced parentheses: '(' at column {tok.column} is never closed; add ')'",
                    tok.column,
                )
            if close.kind != ")":
                raise ConstraintSyntaxError(
                    f"expected ')', 'and' or 'or', found {_describe(close)}", close.column
                )
            self.advance()
            self.depth -= 1
            if self.at_comparison():
                nxt = self.peek()
                raise ConstraintSyntaxError(
                    f"a parenthesised condition cannot be compared ({_describe(nxt)} after ')'); "
                    "compare attribute names, name, rack or literals, e.g. cores >= 4",
                    nxt.column,
                )
            return expr
        if kind == "[":
            raise ConstraintSyntaxError(
                "a list is only allowed on the right of in / not in, e.g. zone in ['a', 'b']",
                tok.column,
            )
        if kind == ")" and self.depth == 0:
            raise ConstraintSyntaxError(
                f"unbalanced parentheses: ')' at column {tok.column} has no matching '('",
                tok.column,
            )
        if kind == "end":
            raise ConstraintSyntaxError(
                f"the constraint ends too early: expected a condition {self.previous()}",
                tok.column,
            )
        raise ConstraintSyntaxError(
            f"expected a condition (an attribute name, name, rack, true/false, a comparison or "
            f"'(') {self.previous()}, found {_describe(tok)}",
            tok.column,
        )

    def parse_operand(self) -> Operand:
        """``operand``; a call or an index after it is an error with a hint."""
        tok = self.advance()
        node: Operand
        if tok.kind == "ident":
            node = Attribute(tok.text)
        elif tok.kind == "name":
            node = MachineName()
        elif tok.kind == "rack":
            node = MachineRack()
        else:
            node = LiteralValue(tok.value)
        nxt = self.peek()
        if nxt.kind == "(":
            raise ConstraintSyntaxError(
                f"function calls are not allowed ('(' after {_describe(tok)}); a constraint is "
                f"never run as code; {_ALLOWED}",
                nxt.column,
            )
        if nxt.kind == "[":
            raise ConstraintSyntaxError(
                f"indexing is not allowed ('[' after {_describe(tok)}); to test membership "
                f"write x in [...]; {_ALLOWED}",
                nxt.column,
            )
        return node

    def parse_comparison(self, left: Operand) -> Expr:
        """The comparison after ``left``, or ``left`` alone as a condition."""
        first = self.tokens[self.pos - 1]
        tok = self.peek()
        right: Operand | LiteralList
        op: CompareOp
        if tok.kind == "op":
            self.advance()
            op = _COMPARE_OPS[tok.text]
            right = self.parse_right_operand(tok)
        elif tok.kind == "in":
            self.advance()
            op = "in"
            right = self.parse_membership(tok)
        elif tok.kind == "not" and self.tokens[self.pos + 1].kind == "in":
            self.advance()
            self.advance()
            op = "not in"
            right = self.parse_membership(tok)
        else:
            if isinstance(left, LiteralValue) and not isinstance(left.value, bool):
                raise ConstraintSyntaxError(
                    f"{_describe(first)} alone is not a condition; compare it, e.g. cores >= 4",
                    first.column,
                )
            return Truth(left)
        if self.at_comparison():
            nxt = self.peek()
            raise ConstraintSyntaxError(
                f"comparisons cannot be chained ({_describe(nxt)} after a comparison); "
                "write a < b and b < c instead of a < b < c",
                nxt.column,
            )
        return Comparison(op, left, right)

    def parse_right_operand(self, op_tok: _Token) -> Operand:
        """The operand right of a comparison operator."""
        tok = self.peek()
        if tok.kind in _OPERAND_KINDS:
            return self.parse_operand()
        after = f"after '{op_tok.text}'"
        if tok.kind == "[":
            message = (
                f"a list is only allowed after in / not in, not {after}; "
                "write x in [...] to compare with several values"
            )
        elif tok.kind == "end":
            message = (
                f"the constraint ends too early: expected an attribute name or a literal {after}"
            )
        elif tok.kind == "(":
            message = (
                f"expected an attribute name or a literal {after}, found '('; "
                "parentheses group conditions, not values"
            )
        else:
            message = f"expected an attribute name or a literal {after}, found {_describe(tok)}"
        raise ConstraintSyntaxError(message, tok.column)

    def parse_membership(self, in_tok: _Token) -> LiteralValue | LiteralList:
        """The list or string right of ``in`` / ``not in``."""
        tok = self.peek()
        if tok.kind == "[":
            return self.parse_list()
        if tok.kind == "str":
            node = self.parse_operand()
            assert isinstance(node, LiteralValue)
            return node
        op = "not in" if in_tok.kind == "not" else "in"
        raise ConstraintSyntaxError(
            f"the right side of '{op}' must be a list such as ['a', 'b'] or a 'string' "
            f"(substring test), found {_describe(tok)}",
            tok.column,
        )

    def parse_list(self) -> LiteralList:
        """``list := "[" [scalar ("," scalar)* [","]] "]"``."""
        open_tok = self.advance()
        items: list[Scalar] = []
        while True:
            tok = self.peek()
            if tok.kind == "]":
                self.advance()
                return LiteralList(tuple(items))
            if tok.kind in _SCALAR_KINDS:
                self.advance()
                items.append(tok.value)
                sep = self.peek()
                if sep.kind == ",":
                    self.advance()
                elif sep.kind not in ("]", "end"):
                    raise ConstraintSyntaxError(
                        f"expected ',' or ']' in the list, found {_describe(sep)}", sep.column
                    )
                continue
            if tok.kind == "end":
                message = f"unbalanced brackets: '[' at column {open_tok.column} is never closed"
            elif tok.kind == "[":
                message = "lists cannot be nested; a list holds numbers, 'strings' and true/false"
            elif tok.kind == ",":
                message = "expected a list item before ','; a list is [item, item, ...]"
            else:
                message = (
                    "a list may only hold literals (numbers, 'strings', true/false), "
                    f"found {_describe(tok)}"
                )
            raise ConstraintSyntaxError(message, tok.column)

    def trailing(self, tok: _Token) -> ConstraintSyntaxError:
        """The error for a token left after a complete condition."""
        if tok.kind == ")":
            return ConstraintSyntaxError(
                f"unbalanced parentheses: ')' at column {tok.column} has no matching '('",
                tok.column,
            )
        if tok.kind == "not":
            message = (
                "unexpected 'not' after a complete condition; did you mean 'not in' or 'and not'?"
            )
        elif tok.kind == "ident" and tok.text.lower() in ("and", "or", "not", "in"):
            message = f"unexpected {_describe(tok)}; keywords are lower-case: {tok.text.lower()}"
        else:
            message = (
                f"unexpected {_describe(tok)} after a complete condition; "
                "join conditions with and / or"
            )
        return ConstraintSyntaxError(message, tok.column)


_COMPARE_OPS: dict[str, CompareOp] = {
    "==": "==",
    "!=": "!=",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
}


def parse_tree(text: str) -> Expr:
    """The syntax tree of a constraint's text.

    Parameters
    ----------
    text : str
        A constraint expression (SPEC section 1).

    Returns
    -------
    Expr
        The tree of the node classes of this module.

    Raises
    ------
    ConstraintSyntaxError
        ``text`` is not a constraint of the grammar; the error has the column.

    Examples
    --------
    >>> from fairshare.cluster.constraint_syntax import parse_tree
    >>> parse_tree("zone in ['a', 'b']")
    Comparison(op='in', left=Attribute(name='zone'), right=LiteralList(items=('a', 'b')))
    >>> parse_tree("not (cores >= 4)")
    Not(operand=Comparison(op='>=', left=Attribute(name='cores'), right=LiteralValue(value=4)))
    """
    return _Parser(text).parse()
