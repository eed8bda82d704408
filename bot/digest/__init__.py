"""Weekly digests: the week, a channel's figures against the week before, the schedule that posts them, charts."""

from bot.digest.charts import differences_png, score_distribution_png, trend_png, win_rates_png
from bot.digest.schedule import DigestScheduler, next_posting
from bot.digest.week import WEEK, Period
from bot.digest.week_figures import Digest, Example, JudgeChange, Line, Regression, build_digest, signed
from bot.errors import WeekError

__all__ = ["WEEK", "Digest", "DigestScheduler", "Example", "JudgeChange", "Line", "Period", "Regression", "WeekError",
           "build_digest", "differences_png", "next_posting", "score_distribution_png", "signed", "trend_png", "win_rates_png"]
