"""Rubrics: the model a rubric file is read into, its output field kinds, formulas, goldens, and loading."""

from bot.errors import FormulaError, RubricError
from bot.rubric.fields import FieldSpec, leaves
from bot.rubric.goldens import Golden, misses
from bot.rubric.loading import RubricSet, builtin_dir, load_rubrics
from bot.rubric.model import Rubric
from bot.rubric.rubric_file import load_rubric, rubric_from_text
from bot.rubric.scoring import Scoring

__all__ = ["FieldSpec", "FormulaError", "Golden", "Rubric", "RubricError", "RubricSet", "Scoring", "builtin_dir",
           "leaves", "load_rubric", "load_rubrics", "misses", "rubric_from_text"]
