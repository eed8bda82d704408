"""judgebot for agents: the tools grade, rubrics, stats and calibration served over MCP (stdio and streamable HTTP)."""
