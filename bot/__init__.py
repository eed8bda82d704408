"""judgebot: grade LLM answers with LLM-as-judge rubrics, from a terminal or from Slack."""

__version__ = "0.1.0"
