"""Rubric formulas compiled once to Python code, for the expressions simpleeval evaluates alike: a reply's rules,
derived values and headline then take microseconds each rather than a walk over each expression's tree. Whatever is
not compiled here, and every evaluation that raises, is left to simpleeval (bot.rubric.formulas), so a formula's
value and its error are the same either way."""

from __future__ import annotations

import ast
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from simpleeval import (
    DISALLOW_FUNCTIONS,
    DISALLOW_METHODS,
    DISALLOW_PREFIXES,
    MAX_COMPREHENSION_LENGTH,
    MAX_STRING_LENGTH,
    safe_add,
    safe_lshift,
    safe_mult,
    safe_power,
    safe_rshift,
)

# simpleeval's own guarded operators, called as it calls them; the other operators it takes are Python's own.
_GUARDED = {ast.Add: ("jb.add", safe_add), ast.Mult: ("jb.mult", safe_mult), ast.Pow: ("jb.power", safe_power),
            ast.LShift: ("jb.lshift", safe_lshift), ast.RShift: ("jb.rshift", safe_rshift)}
_PLAIN_BINARY = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.BitXor, ast.BitOr, ast.BitAnd)
_UNARY = (ast.Not, ast.USub, ast.UAdd, ast.Invert)
_COMPARE = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot)
_FUNCTION = "jb.call."  # a function named in a call: always the function, whatever a reply's field is called
_LOAD = ast.Load()


class _LeftToSimpleeval(Exception):
    """An expression (or a part of one) this module does not compile."""


class _TooMany(Exception):
    """More elements than simpleeval lets comprehensions make in one evaluation (it then says so itself)."""


_DICT_ATTRIBUTES = frozenset(dir(dict))


def _attribute(value: Any, name: str) -> Any:
    """`value.name` as simpleeval reads it: the attribute, else the item of that name (a reply's object is a dict:
    its item is read at once unless a dict has an attribute of that name, `keys` say, which simpleeval reads first)."""
    if type(value) is dict and name not in _DICT_ATTRIBUTES:
        return value[name]
    try:
        item = getattr(value, name)
    except (AttributeError, TypeError):
        item = value[name]
    if isinstance(item, types.ModuleType) or (callable(item) and item in DISALLOW_FUNCTIONS):
        raise _LeftToSimpleeval(name)
    return item


class _Counted:
    """The elements an evaluation's comprehensions go through, counted across all of them as simpleeval counts."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, iterable: Iterable[Any]) -> Iterable[Any]:
        if type(iterable) in (list, tuple, dict, str):  # gone through whole: counted at once, by its length
            self.count += len(iterable)  # type: ignore[arg-type]
            if self.count > MAX_COMPREHENSION_LENGTH:
                raise _TooMany
            return iterable
        return self._one_by_one(iterable)

    def _one_by_one(self, iterable: Iterable[Any]) -> Iterator[Any]:
        for item in iterable:
            self.count += 1
            if self.count > MAX_COMPREHENSION_LENGTH:
                raise _TooMany
            yield item


class _Compiler(ast.NodeTransformer):
    """The tree of one expression made into the same expression in Python, its attribute reads, guarded operators,
    calls and comprehensions made simpleeval's way; any other node leaves the expression to simpleeval."""

    def __init__(self, functions: Mapping[str, Any]) -> None:
        self.functions = functions

    def generic_visit(self, node: ast.AST) -> ast.AST:
        raise _LeftToSimpleeval(type(node).__name__)

    def visit_Expression(self, node: ast.Expression) -> ast.AST:
        node.body = self.visit(node.body)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, (str, bytes)) and len(node.value) > MAX_STRING_LENGTH:
            raise _LeftToSimpleeval("a long literal")
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if not isinstance(node.ctx, ast.Load):
            raise _LeftToSimpleeval("an assignment")
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        left, right = self.visit(node.left), self.visit(node.right)
        if type(node.op) in _GUARDED:
            return ast.Call(ast.Name(_GUARDED[type(node.op)][0], _LOAD), [left, right], [])
        if not isinstance(node.op, _PLAIN_BINARY):
            raise _LeftToSimpleeval(type(node.op).__name__)
        node.left, node.right = left, right
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        if not isinstance(node.op, _UNARY):
            raise _LeftToSimpleeval(type(node.op).__name__)
        node.operand = self.visit(node.operand)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        node.values = [self.visit(value) for value in node.values]
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        if not all(isinstance(op, _COMPARE) for op in node.ops):
            raise _LeftToSimpleeval("a comparison")
        node.left = self.visit(node.left)
        node.comparators = [self.visit(value) for value in node.comparators]
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        node.test, node.body, node.orelse = self.visit(node.test), self.visit(node.body), self.visit(node.orelse)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if node.attr.startswith(tuple(DISALLOW_PREFIXES)) or node.attr in DISALLOW_METHODS:
            raise _LeftToSimpleeval(node.attr)
        return ast.Call(ast.Name("jb.attribute", _LOAD), [self.visit(node.value), ast.Constant(node.attr)], [])

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        node.value, node.slice = self.visit(node.value), self.visit(node.slice)
        return node

    def visit_Slice(self, node: ast.Slice) -> ast.AST:
        node.lower, node.upper, node.step = (None if part is None else self.visit(part)
                                             for part in (node.lower, node.upper, node.step))
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and node.func.id in self.functions:
            node.func = ast.Name(_FUNCTION + node.func.id, _LOAD)
        elif isinstance(node.func, ast.Attribute):
            node.func = self.visit(node.func)
        else:
            raise _LeftToSimpleeval("a call")
        if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
            raise _LeftToSimpleeval("unpacked arguments")
        node.args = [self.visit(arg) for arg in node.args]
        for keyword in node.keywords:
            keyword.value = self.visit(keyword.value)
        return node

    def visit_List(self, node: ast.List) -> ast.AST:
        node.elts = [ast.Starred(self.visit(item.value), _LOAD) if isinstance(item, ast.Starred) else self.visit(item)
                     for item in node.elts]
        return node

    def visit_Tuple(self, node: ast.Tuple) -> ast.AST:
        node.elts = [self.visit(item) for item in node.elts]
        return node

    def visit_Set(self, node: ast.Set) -> ast.AST:
        node.elts = [self.visit(item) for item in node.elts]
        return node

    def visit_Dict(self, node: ast.Dict) -> ast.AST:
        node.keys = [None if key is None else self.visit(key) for key in node.keys]
        node.values = [self.visit(value) for value in node.values]
        return node

    def visit_ListComp(self, node: ast.ListComp) -> ast.AST:
        node.generators = [self._generator(generator) for generator in node.generators]
        node.elt = self.visit(node.elt)
        return node

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> ast.AST:
        # simpleeval makes a list of a generator expression: `len(x for x in xs)` works there, and so here
        return self.visit_ListComp(ast.ListComp(node.elt, node.generators))

    def visit_DictComp(self, node: ast.DictComp) -> ast.AST:
        node.generators = [self._generator(generator) for generator in node.generators]
        node.key, node.value = self.visit(node.key), self.visit(node.value)
        return node

    def _generator(self, generator: ast.comprehension) -> ast.comprehension:
        if generator.is_async or not _plain_target(generator.target):
            raise _LeftToSimpleeval("a comprehension's target")
        generator.iter = ast.Call(ast.Name("jb.counted", _LOAD), [self.visit(generator.iter)], [])
        generator.ifs = [self.visit(condition) for condition in generator.ifs]
        return generator


def _plain_target(target: ast.expr) -> bool:
    """A name, or names in tuples or lists: what a comprehension assigns the way simpleeval does."""
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(_plain_target(item) for item in target.elts)


_COUNTED = "jb.counted"  # the parameter that takes an evaluation's count of comprehension elements


@dataclass(frozen=True)
class Compiled:
    """An expression made a Python function of the names it reads (`names`, then the count of its comprehensions'
    elements)."""

    function: Callable[..., Any]
    names: tuple[str, ...]


class CompiledFormulas:
    """Expressions compiled over one set of functions, each once (up to CACHED of them; then anew)."""

    CACHED = 1024

    def __init__(self, functions: Mapping[str, Any]) -> None:
        self.functions = dict(functions)
        self.made: dict[str, Compiled | None] = {}
        self.helpers = {"__builtins__": {}, "jb.attribute": _attribute, **dict(_GUARDED.values()),
                        **{_FUNCTION + name: function for name, function in self.functions.items()}}

    def compiled(self, expression: str) -> Compiled | None:
        """The expression as a Python function of the names it reads, or None when it is left to simpleeval."""
        if expression in self.made:
            return self.made[expression]
        if len(self.made) >= self.CACHED:
            self.made.clear()
        made = self.made[expression] = self._compile(expression)
        return made

    def _compile(self, expression: str) -> Compiled | None:
        try:
            tree = _Compiler(self.functions).visit(ast.parse(expression.strip(), mode="eval"))
            names = tuple(sorted(_free(tree)))
            arguments = ast.arguments(posonlyargs=[], args=[ast.arg(name) for name in (*names, _COUNTED)],
                                      kwonlyargs=[], kw_defaults=[], defaults=[])
            made = ast.FunctionDef(name="formula", args=arguments, body=[ast.Return(tree.body)], decorator_list=[])
            namespace = dict(self.helpers)
            exec(compile(ast.fix_missing_locations(ast.Module([made], [])), "<formula>", "exec"), namespace)
        except (SyntaxError, ValueError, TypeError, RecursionError, _LeftToSimpleeval):
            return None
        return Compiled(namespace["formula"], names)

    def run(self, formula: Compiled, values: Mapping[str, Any]) -> Any:
        """A compiled expression's value over a reply's values: each name it reads is the reply's (`out` the whole
        reply), else a function's, as simpleeval looks them up. Raises whatever the evaluation raises (a name
        neither holds: NameError): the caller asks simpleeval then."""
        arguments = []
        for name in formula.names:
            if name == "out":
                arguments.append(values)
            elif name in values:
                arguments.append(values[name])
            elif name in self.functions:
                arguments.append(self.functions[name])
            else:
                raise NameError(name)
        return formula.function(*arguments, _Counted())


def _free(node: ast.AST, bound: frozenset[str] = frozenset()) -> set[str]:
    """The names an expression reads from outside it (not its own helpers, nor what its comprehensions assign)."""
    if isinstance(node, ast.Name):
        return set() if node.id in bound or node.id.startswith("jb.") else {node.id}
    if isinstance(node, (ast.ListComp, ast.DictComp)):
        found: set[str] = set()
        for generator in node.generators:  # each iterable read where the comprehension stands, or its generator before
            found |= _free(generator.iter, bound)
            bound = bound | {name.id for name in ast.walk(generator.target) if isinstance(name, ast.Name)}
            for condition in generator.ifs:
                found |= _free(condition, bound)
        parts = [node.elt] if isinstance(node, ast.ListComp) else [node.key, node.value]
        return found.union(*(_free(part, bound) for part in parts))
    return set().union(*(_free(child, bound) for child in ast.iter_child_nodes(node)))
