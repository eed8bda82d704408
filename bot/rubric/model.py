"""The Rubric model: a rubric file's fields validated strictly, the prompt and hash it gives, and its load-time checks."""

from __future__ import annotations

import hashlib
import json
import re
import string
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from bot.errors import FormulaError, RubricError
from bot.rubric.examples import Example, example_problems, examples_text
from bot.rubric.fields import (
    LENIENT_NUMBERS,
    FieldSpec,
    build_model,
    field_paths,
    generation_ordered,
    json_schema,
    leaves,
    passage_problems,
    reads_passages,
    sample_reply,
)
from bot.rubric.formulas import did_you_mean, evaluate
from bot.rubric.goldens import Golden
from bot.rubric.scoring import (
    Derived,
    Headline,
    PartScoring,
    Rule,
    Scoring,
    formula_problems,
    score_part,
    score_reply,
)

TEMPLATE_NAMES = {"pointwise": {"question", "reference", "answer", "context"},
                  "pairwise": {"question", "reference", "answer_a", "answer_b", "context"}}
NEEDED_NAMES = {"pointwise": {"question", "answer"}, "pairwise": {"question", "answer_a", "answer_b"}}
WINNERS = ("A", "B", "tie")  # what a pairwise rubric's `winner` field says: the first answer shown, the second, or tie
NL = "\n"
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_-]*")


class Rubric(BaseModel):
    """One rubric file."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    name: str
    kind: Literal["pointwise", "pairwise"] = Field(
        "pointwise", description="pointwise grades one answer; pairwise reads two answers to one question "
        "($answer_a and $answer_b in the template) and says which is better in a `winner` field (A, B or tie).")
    aliases: list[str] = []
    version: str
    title: str
    description: str
    system: str
    user_template: str
    output: dict[str, FieldSpec]
    derived: dict[str, Derived] = {}
    rules: list[Rule] = []
    lenient_numbers: bool = Field(False, description='Take "2" and 2.0 as 2 in integer fields (a boolean never).')
    headline: Headline
    goldens: list[Golden] = []
    guidelines: list[str] = Field([], description="Short lines that sharpen the instructions, sent with them.")
    examples: list[Example] = Field([], description="Worked examples sent to the judge as data: a triple and the "
                                    "values a person expects of some or all fields, with an optional note.")
    samples: int = Field(1, ge=1, le=9, description="How many times the judge judges each row unless a run says: "
                         "its samples agree or split, and the row's verdict is the one closest to the others.")
    generation_order: list[str] | None = Field(
        None, description="Output fields (dotted paths) the judge writes before their siblings, in this order: the "
        "schema it is sent lists them first. Replies, results and cards keep the order of `output`.")
    content_free: Literal["fail", "flag"] = Field(
        "fail", description='An answer with nothing to grade (empty, only punctuation, only an opener such as '
        '"Thought process:", the question repeated): failed without asking the judge, with why; or flag: judged, '
        "with a flag (for a rubric that does not grade the answer).")

    _source: Path | None = PrivateAttr(None)
    _model: type[BaseModel] = PrivateAttr()
    _schema: dict[str, Any] = PrivateAttr()
    _hash: str = PrivateAttr()
    _system_prompt: str = PrivateAttr()
    _examples_text: str = PrivateAttr("")
    _uses_context: bool = PrivateAttr(False)
    _reads_passages: bool = PrivateAttr(False)

    @model_validator(mode="before")
    @classmethod
    def _older_setting(cls, data: Any) -> Any:
        """`bare_answers`, the setting's older name: judge is flag now, and malformed (left out of the figures) is
        fail (counted as a failure)."""
        if isinstance(data, dict) and "bare_answers" in data and "content_free" not in data:
            older = {"judge": "flag", "malformed": "fail"}
            data = {**{k: v for k, v in data.items() if k != "bare_answers"},
                    "content_free": older.get(str(data["bare_answers"]), data["bare_answers"])}
        return data

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_written(cls, value: Any) -> Any:
        if isinstance(value, float):  # YAML reads 1.10 as the number 1.1: the version would not be the one written
            raise PydanticCustomError("version_number", "{value} was read as a number, so 1.10 would become 1.1: "
                                      'quote it, such as version: "1.10"', {"value": repr(value)})
        return value

    @field_validator("name")
    @classmethod
    def _name_fits(cls, value: str) -> str:
        # The name is typed after /judge, and the judge is sent the reply's schema as "<name>_verdict": OpenAI takes
        # schema names of letters, digits, "_" and "-" only (the length is checked with the file name).
        if not NAME_PATTERN.fullmatch(value):
            raise PydanticCustomError("name_pattern", "{name} is not a rubric name: use lowercase letters a-z, digits, "
                                      '"-" and "_", starting with a letter (it is typed after /judge and names the '
                                      "schema the judge is sent)", {"name": repr(value)})
        return value

    @field_validator("description")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value.strip():
            raise ValueError("the description is one line")
        return value.strip()

    @field_validator("user_template")
    @classmethod
    def _template_valid(cls, value: str) -> str:
        if not string.Template(value).is_valid():
            raise ValueError("invalid $ placeholder (write $$ for a literal dollar sign)")
        return value

    @model_validator(mode="after")
    def _template_names(self) -> Rubric:
        """The placeholders of the template are those of the rubric's kind (a reference and a context are
        optional)."""
        used = set(string.Template(self.user_template).get_identifiers())
        known = TEMPLATE_NAMES[self.kind]
        if unknown := used - known:
            hint = " (a pairwise rubric's template shows $answer_a and $answer_b)" if self.kind == "pairwise" else ""
            raise PydanticCustomError("template_names", "user_template: unknown placeholder(s) {unknown}; use {known}"
                                      "{hint}", {"unknown": sorted(unknown), "hint": hint,
                                                 "known": ", ".join(f"${name}" for name in sorted(known))})
        if missing := NEEDED_NAMES[self.kind] - used:  # a rubric may grade without a reference or context
            raise PydanticCustomError("template_names", "user_template: missing placeholder(s) {missing}",
                                      {"missing": sorted("$" + m for m in missing)})
        return self

    @property
    def pairwise(self) -> bool:
        """Whether the rubric compares two answers (kind: pairwise) rather than grading one."""
        return self.kind == "pairwise"

    @property
    def uses_reference(self) -> bool:
        """Whether the judge is shown a reference answer (the template holds $reference): without one, a file needs
        no reference column and a triple no reference."""
        return "reference" in string.Template(self.user_template).get_identifiers()

    @property
    def uses_context(self) -> bool:
        """Whether the judge is shown the passages a RAG assistant retrieved (the template holds $context): then a
        file needs a context column and a triple its passages."""
        return self._private("_uses_context")

    def model_post_init(self, _context: Any) -> None:
        self._uses_context = "context" in string.Template(self.user_template).get_identifiers()
        self._reads_passages = reads_passages(self.output)
        self._model = build_model(f"{self.name.title().replace('-', '_')}Reply", self.output)
        self._schema = json_schema(generation_ordered(self.output, self.generation_order or []))
        # Left out while off, so that the hash of a rubric written before the setting existed stays the same.
        unset = set() if self.lenient_numbers else {LENIENT_NUMBERS}
        unset |= {"content_free"} if self.content_free == "fail" else set()
        unset |= {"generation_order"} if self.generation_order is None else set()
        unset |= {"kind"} if self.kind == "pointwise" else set()
        unset |= {name for name in ("guidelines", "examples") if not getattr(self, name)}
        # How many samples a run takes changes no single judgment: like the wording of the title, not hashed.
        shown_only = {"goldens", "title", "description", "aliases", "samples"}
        content = self.model_dump(mode="json", exclude={*shown_only, *unset})
        schema_text = json.dumps(self._schema, ensure_ascii=False, separators=(",", ":"))
        guidelines = "".join(f"\n- {line.strip()}" for line in self.guidelines)
        self._system_prompt = (
            f"{self.system.rstrip()}{f'{NL}{NL}Guidelines:{guidelines}' if guidelines else ''}\n\nYour reply is one "
            f"JSON object that follows this JSON schema exactly:\n{schema_text}"
        )
        self._examples_text = examples_text(self.examples, self.uses_reference, self.uses_context)
        self._hash = hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]

    def _private(self, name: str) -> Any:
        """A private attribute, read from pydantic's own dict of them: reading it as an attribute goes through the
        model's `__getattr__`, about 5 µs, and a judged row reads several."""
        return self.__pydantic_private__[name]  # type: ignore[index]

    @property
    def source(self) -> Path | None:
        """The file this rubric was read from."""
        return self._private("_source")

    def loaded_from(self, path: Path) -> None:
        """Remember the file this rubric was read from, for messages that name it."""
        self._source = path

    @property
    def content_hash(self) -> str:
        """A hash of everything that shapes a judgment (not the goldens or the wording of the title)."""
        return self._private("_hash")

    @property
    def system_prompt(self) -> str:
        """The system message: the rubric's instructions, then the JSON schema of the reply."""
        return self._private("_system_prompt")

    @property
    def examples_prompt(self) -> str:
        """The worked examples as the judge reads them ("" without any); sent inside the data boundary."""
        return self._private("_examples_text")

    @property
    def reply_schema(self) -> dict[str, Any]:
        """The strict JSON schema of a reply."""
        return self._private("_schema")

    def criteria(self) -> list[str]:
        """Numeric paths a summary averages: reply fields, then derived values."""
        numeric = [path for path, spec in leaves(self.output) if spec.summary and spec.kind.summary == "mean"]
        return numeric + list(self.derived)

    def tags(self) -> list[str]:
        """Enum paths a summary counts."""
        return [path for path, spec in leaves(self.output) if spec.summary and spec.kind.summary == "count"]

    def validate_reply(self, data: Any, *, passages: int | None = None) -> tuple[dict[str, Any] | None, list[str]]:
        """Check a parsed reply against the schema and the rules, and (given how many `passages` the row's context
        holds) its passage numbers against them; return (output, problems)."""
        try:
            output = self._private("_model").model_validate(data, context={LENIENT_NUMBERS: self.lenient_numbers}).model_dump(
                by_alias=True)
        except ValidationError as err:
            return None, [describe(error) for error in err.errors(include_url=False)]
        problems: list[str] = []
        if passages is not None and self._private("_reads_passages"):
            problems += passage_problems(self.output, output, passages)
        for rule in self.rules:
            try:
                ok = evaluate(rule.check, output)
            except FormulaError as err:
                ok, problems = False, [*problems, f"rule could not be checked: {err}"]
                continue
            if not ok:
                problems.append(rule.message)
        return output, problems

    def score(self, output: dict[str, Any]) -> Scoring:
        """Compute derived values, headline, pass/fail and label of a valid reply; FormulaError if one fails."""
        try:
            return score_reply(self.derived, self.headline, output)
        except FormulaError:
            raise
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError) as err:
            raise FormulaError(f"{type(err).__name__}: {err}") from None

    def score_alone(self, values: dict[str, Any]) -> PartScoring:
        """Pass/fail and the headline by the rubric's formulas on these values alone (nested, as a reply holds them)
        and the derived values they give: each None when its formula reads a value they do not hold, so that nothing
        is filled in from elsewhere (a person's label is never made whole from the judge's reply)."""
        return score_part(self.derived, self.headline, values)

    def self_check(self) -> None:
        """Raise RubricError naming every problem `problems` finds, so a typo in a name fails at load, not mid-run."""
        if found := self.problems():
            raise RubricError("; ".join(found))

    def problems(self) -> list[str]:
        """Every problem of the load-time checks, each naming its field: weights, the generation order and the tag
        naming no fitting field, a pairwise rubric's winner, every formula tried on a sample reply, the examples and
        the goldens."""
        paths = dict(leaves(self.output))
        named: list[str] = []  # fields the formulas read that are not there: the formulas are tried once they are
        for key, spec in self.derived.items():
            for path in spec.weights or {}:
                if paths.get(path) is None or not paths[path].kind.numeric:
                    named.append(f"derived.{key}.weights: {path!r} is not a number field of the output."
                                 f"{did_you_mean(path, paths)}")
                elif paths[path].nullable:
                    named.append(f"derived.{key}.weights: {path!r} is nullable; a weighted mean needs a value")
        tag = self.headline.tag
        if tag and tag not in paths:
            named.append(f"headline.tag: no field {tag!r} in the output.{did_you_mean(tag, paths)}")
        elif tag and paths[tag].type != "enum":
            named.append(f"headline.tag: {tag!r} is of type {paths[tag].type}; the tag must be an enum field (one of a "
                         "few values, counted in summaries)")
        found = [*named, *self._generation_order_problems()]
        if self.pairwise and (paths.get("winner") is None or paths["winner"].type != "enum"
                              or sorted(paths["winner"].values or []) != sorted(WINNERS)):
            found.append("output: a pairwise rubric has an output field winner: {type: enum, values: [A, B, tie]}: "
                         "A for the answer shown first, B for the second, tie when neither is better")
        if self.pairwise and self.examples:
            found.append("examples: a pairwise rubric takes no worked examples (each shows one answer); say what you "
                         "expect in guidelines instead")
        output, invalid = self.validate_reply(sample_reply(self.output))
        if output is None:
            found += invalid
        else:
            for index, rule in enumerate(self.rules):
                try:
                    evaluate(rule.check, output)
                except FormulaError as err:
                    found.append(f"rules.{index}.check: rule could not be checked: {err}")
            if not named:
                found += formula_problems(self.derived, self.headline, output)
        found += example_problems(self.examples, self.output, self.rules)
        unread = "has a context, but the template has no $context: the judge would never see it"
        if self._private("_reads_passages") and not self.uses_context:
            found.append("output: a field takes passage_number or one_per_passage, but the template has no $context: "
                         "the judge is shown no passages to number")
        found += [f"examples.{index}: {unread}" for index, example in enumerate(self.examples)
                  if example.context is not None and not self.uses_context]
        for golden in self.goldens:
            if (problem := golden.problem(self.pairwise)) is not None:
                found.append(f"goldens.{golden.name}: {problem}")
            if golden.context is not None and not self.uses_context:
                found.append(f"goldens.{golden.name}: {unread}")
            for path in golden.expect:
                if path not in {"headline", "passed", *self.derived} and path not in paths:
                    found.append(f"goldens.{golden.name}.expect: no field {path!r}."
                                 f"{did_you_mean(path, [*paths, 'headline', 'passed', *self.derived])}")
        return found

    def _generation_order_problems(self) -> list[str]:
        """A path of `generation_order` that names no output field, or one named twice."""
        known = field_paths(self.output)
        found = []
        for index, path in enumerate(self.generation_order or []):
            if path not in known:
                found.append(f"generation_order.{index}: no field {path!r} in the output (nested fields are written "
                             f"a.b).{did_you_mean(path, known)}")
            elif path in (self.generation_order or [])[:index]:
                found.append(f"generation_order.{index}: {path!r} is listed twice")
        return found


def describe(error: Any) -> str:
    """A pydantic error as `path.to.field: message`."""
    where = ".".join(str(part) for part in error["loc"]) or "reply"
    return f"{where}: {error['msg']}"
