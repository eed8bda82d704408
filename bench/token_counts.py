"""Record how many o200k tokens (the tokenizer of gpt-4o, gpt-4.1, gpt-5 and the o-series) the judge requests of the
seed rubrics really hold, for tests/runs/test_estimate.py to hold the cost estimate against.

Run by hand when a seed rubric or the judge's prompt changes; it needs Node.js and the gpt-tokenizer package
(`npm install --prefix DIR gpt-tokenizer@2`), which bundles the tokenizer's tables and so counts offline:

    python bench/token_counts.py --tokenizer DIR > tests/data/o200k_counts.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from bot.judge.prompt import build_messages
from bot.records import Triple
from bot.rubric import load_rubrics
from bot.runs.estimate import BOUNDARY

COUNT_JS = """
const { encode } = require(process.argv[1] + '/node_modules/gpt-tokenizer/cjs/encoding/o200k_base');
const texts = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(texts.map((text) => encode(text).length)));
"""

SENTENCES = {
    "en": ("How do I register for exams?", "Register in myStudies during the registration period; late registration "
           "is not possible.", "Students must register for each examination in myStudies during the official "
           "registration period. Registration is binding; withdrawal is possible until the deadline published by "
           "the Examination Office. "),
    "de": ("Wie melde ich mich für Prüfungen an?", "Die Anmeldung erfolgt in myStudies während der Anmeldefrist; "
           "eine verspätete Anmeldung ist nicht möglich.", "Studierende müssen sich für jede Prüfung während der "
           "offiziellen Anmeldefrist in myStudies anmelden. Die Anmeldung ist verbindlich; ein Rücktritt ist bis zur "
           "veröffentlichten Frist möglich. "),
    "ru": ("Как зарегистрироваться на экзамен?", "Регистрация проходит в myStudies в течение периода регистрации; "
           "поздняя регистрация невозможна.", "Студенты должны зарегистрироваться на каждый экзамен в myStudies в "
           "течение официального периода регистрации. Регистрация является обязательной. "),
    "ar": ("كيف أسجل في الامتحانات؟", "سجل عبر بوابة الطالب خلال فترة التسجيل؛ لا يمكن التسجيل المتأخر.",
           "يجب على الطلاب التسجيل في كل امتحان عبر بوابة الطالب خلال فترة التسجيل الرسمية. التسجيل ملزم، ويمكن "
           "الانسحاب حتى الموعد النهائي. "),
    "zh": ("我如何报名考试？", "在注册期间通过学生门户报名考试；不接受逾期报名。",
           "学生必须在官方注册期间通过学生门户为每门考试报名。报名具有约束力；在考试办公室公布的截止日期之前可以退出。"),
}
LONG = 8  # a long answer repeats its sentences this many times (about 1,500 characters in English)


def cases() -> list[dict[str, str]]:
    """Every seed rubric with a short and a long answer in each language."""
    found = []
    for rubric in ("academic", "eth", "benchmark"):
        for language, (question, reference, answer) in SENTENCES.items():
            for length, times in (("short", 1), ("long", LONG)):
                found.append({"rubric": rubric, "language": language, "length": length, "question": question,
                              "reference": reference, "answer": (answer * times).strip()})
    return found


def request_text(case: dict[str, str]) -> str:
    """What a request of the case sends as text: its messages and the reply schema."""
    rubric = load_rubrics().get(case["rubric"])
    triple = Triple(question=case["question"], reference=case["reference"], answer=case["answer"])
    messages = build_messages(rubric, triple, BOUNDARY)
    return "".join(message["content"] for message in messages) + json.dumps(rubric.reply_schema, ensure_ascii=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokenizer", type=Path, required=True, help="the npm prefix holding gpt-tokenizer")
    args = parser.parse_args()
    found = cases()
    counted = subprocess.run(["node", "-e", COUNT_JS, str(args.tokenizer.resolve())], check=True, text=True,
                             capture_output=True, input=json.dumps([request_text(case) for case in found])).stdout
    for case, tokens in zip(found, json.loads(counted)):
        case["content_tokens"] = tokens
    json.dump({"tokenizer": "o200k_base (gpt-tokenizer 2)", "boundary": BOUNDARY, "cases": found}, sys.stdout,
              ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
