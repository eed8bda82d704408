"""Why a case waits in a review queue: the reasons, and how each is said (a list of the queue loads nothing else)."""

from __future__ import annotations

from bot.records import DISAGREE

# Why a case is queued, the first that applies; a case picked at random is marked so whatever its reason.
SPLIT, UNSURE, RANDOM = "split", "unsure", "random"
INCONSISTENT = "inconsistent"  # a pair whose winner changed with the order the judge saw its answers in
REASONS = {DISAGREE: "the judge and a person's label disagree", SPLIT: "the jury split", UNSURE: "the samples split",
           RANDOM: "picked at random", INCONSISTENT: "the judge's winner changed with the order of the answers"}
