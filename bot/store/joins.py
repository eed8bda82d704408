"""Joins taken in the order written: the database starts from the left side (people's few labels, votes or review
cases) and finds the right side's rows by key, whatever conditions there are on them."""

from __future__ import annotations

import itertools
from typing import Any

from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import Join


class InOrder(Join):
    """An inner join whose left side the database starts from: SQLite's CROSS JOIN, which its planner never turns
    round (without statistics it may scan a million judgments for a condition on them, and look each one's labels
    up); a plain JOIN elsewhere, where the planner's statistics see the left side is the small one."""

    inherit_cache = True


@compiles(InOrder)
def _join(element: InOrder, compiler: Any, **kw: Any) -> str:
    return str(compiler.visit_join(element, **kw))


@compiles(InOrder, "sqlite")
def _cross_join(element: InOrder, compiler: Any, from_linter: Any = None, **kw: Any) -> str:
    """`visit_join` of SQLAlchemy's compiler, saying CROSS JOIN."""
    kw.pop("asfrom", None)
    if from_linter:  # the two sides are joined: no cartesian product to warn of
        from_linter.edges.update(itertools.product(element.left._from_objects, element.right._from_objects))
    return (compiler.process(element.left, asfrom=True, from_linter=from_linter, **kw) + " CROSS JOIN "
            + compiler.process(element.right, asfrom=True, from_linter=from_linter, **kw) + " ON "
            + compiler.process(element.onclause, from_linter=from_linter, **kw))
