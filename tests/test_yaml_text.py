"""YAML written for people to diff (bot.yaml_text.dump_yaml): texts of several lines as blocks, and every text read
back exactly, whatever its spaces, line breaks or characters."""

from __future__ import annotations

import random

from bot.yaml_text import dump_yaml, load_yaml

ODD = ["a\nb", "trailing space \nb", "ends\n", "two\n\n", "\n leading", " leading\nx", "tab\tin\nx", "a\r\nb",
       "\x85 next line\nx", "a\u2028b\nc", "...\n---", "# not a comment\n- not a list", "\ufeffmark\nx", "   \n   ", ""]


def test_texts_of_several_lines_are_blocks_and_read_back_exactly() -> None:
    written = dump_yaml({"system": "You audit answers.\n\n1. correctness\n   2 = names the portal\n", "name": "eth"})
    assert written == "system: |\n  You audit answers.\n\n  1. correctness\n     2 = names the portal\nname: eth\n"
    rnd = random.Random(7)
    alphabet = "ab \n\t\r#:-'\"|>\x85\u2028é\x00\x7f\ufeff[]{}\U0001F600"
    texts = ODD + ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12))) for _ in range(3000)]
    for text in texts:
        data = {"text": text, "list": [text], text: 1}
        assert load_yaml(dump_yaml(data)) == data, repr(text)
