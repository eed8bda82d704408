"""judgebot: grade LLM answers with LLM-as-judge rubrics, from a terminal or from Slack."""
