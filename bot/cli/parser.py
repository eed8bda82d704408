"""The command line's parser: every command and option, and the table that says which function runs each command
(its module is imported only when the command runs)."""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.cli.context import Context

# What runs each command, as "module:function": `judgebot --help` must not wait for the judge's client, the database
# layer or the digest to load (see docs/performance.md). A command with an action ("calibration check") is looked up
# with it first.
COMMANDS = {
    "serve": "bot.cli.serve:serve",
    "mcp": "bot.cli.agents:mcp",
    "view": "bot.cli.view:view",
    "judge": "bot.cli.judging:judge",
    "resume": "bot.cli.judging:resume",
    "rubrics": "bot.cli.rubrics:rubrics",
    "runs": "bot.cli.history:runs",
    "history": "bot.cli.history:history",
    "stats": "bot.cli.history:stats",
    "digest": "bot.cli.history:digest",
    "budget": "bot.cli.history:budget",
    "review": "bot.cli.review:review",
    "review label": "bot.cli.review:label",
    "calibration": "bot.cli.calibration:calibration",
    "calibration check": "bot.cli.check:check",
    "labels export": "bot.cli.labels:export",
    "labels import": "bot.cli.labels:import_labels",
    "judges compare": "bot.cli.judges:compare",
    "align": "bot.cli.align:align",
    "compare": "bot.cli.compare:compare",
    "retention": "bot.cli.retention:retention",
    "forget": "bot.cli.retention:forget",
    "secrets rotate": "bot.cli.secrets:rotate",
}


def command_of(args: argparse.Namespace) -> Callable[[Context], Coroutine[None, None, int]]:
    """The function that runs the command `args` name, its module imported now."""
    action = getattr(args, "action", None)
    target = COMMANDS.get(f"{args.command} {action}") or COMMANDS[args.command]
    module, _, name = target.partition(":")
    function: Callable[[Context], Coroutine[None, None, int]] = getattr(importlib.import_module(module), name)
    return function


def _version() -> str:
    try:
        return importlib.metadata.version("judgebot")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = argparse.ArgumentParser(prog="judgebot", description="Grade LLM answers with LLM-as-judge rubrics.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)

    serve_cmd = commands.add_parser("serve", help="run the Slack bot (Socket Mode with SLACK_APP_TOKEN, else HTTP on "
                                    "PORT)")
    serve_cmd.add_argument("--workers-only", action="store_true", help="only judge rows of the runs the Slack "
                           "replicas on this DATABASE_URL hold: no Slack connection, nothing posted")

    mcp_cmd = commands.add_parser("mcp", help="serve the tools grade, rubrics, stats and calibration to agents over "
                                  "MCP (stdio, or streamable HTTP with --http)")
    mcp_cmd.add_argument("--http", action="store_true", help="streamable HTTP at http://HOST:PORT/mcp, for agents "
                         "that present MCP_TOKEN and, with SLACK_SIGNING_SECRET, for Slackbot (default: stdio, for an "
                         "agent this machine starts)")
    mcp_cmd.add_argument("--host", default="127.0.0.1", help="--http: the address to listen on (default 127.0.0.1)")
    mcp_cmd.add_argument("--port", type=int, default=8765, help="--http: the port (default 8765)")
    mcp_cmd.add_argument("--allow-remote", action="store_true", help="--http: listen on an address other machines "
                         "reach (--host 0.0.0.0), though it serves plain HTTP: only with a TLS proxy in front")

    view_cmd = commands.add_parser("view", help="the history in a browser: runs, rows, comparisons, calibration, the "
                                   "weekly trend and the review queue, with labels given there (http://127.0.0.1:8766/)")
    view_cmd.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1; an address "
                          "other machines reach is refused until Sign in with Slack is configured)")
    view_cmd.add_argument("--port", type=int, default=8766, help="the port (default 8766; 0: any free one)")

    judge_cmd = commands.add_parser("judge", help="judge a CSV of question/reference/answer rows, or one triple")
    judge_cmd.add_argument("file", nargs="?", type=Path, help="CSV or TSV file with question, reference, answer (or, "
                           "for a pairwise rubric, answer_a and answer_b)")
    judge_cmd.add_argument("--rubric", required=True, help="rubric name or alias (see `judgebot rubrics`)")
    judge_cmd.add_argument("--out", type=Path, help="results CSV (default: FILE.results.csv beside the input)")
    judge_cmd.add_argument("--model-name", help="the model under test, when the CSV has no model column")
    judge_cmd.add_argument("--columns", action="append", metavar="ROLE=COLUMN",
                           help="the column of a role (question, reference, answer, model, context) when its header "
                                "does not "
                                "say it or two headers could: answer=model_response (repeat, or separate with commas)")
    judge_cmd.add_argument("--no-swap", action="store_true", help="a pairwise rubric: judge each pair once (half of "
                           "them shown B first) rather than in both orders; halves the cost, measures no consistency")
    judge_cmd.add_argument("--concurrency", type=int, help="judge requests in flight (default: CONCURRENCY)")
    add_panel_options(judge_cmd)
    judge_cmd.add_argument("--fresh", action="store_true", help="judge again even when a cached verdict exists")
    judge_cmd.add_argument("--new-run", action="store_true", help="start a new run even when an unfinished run of the "
                           "same rows, rubric and judge waits for `judgebot resume`")
    judge_cmd.add_argument("--batch", action="store_true", help="judge through the Batch API: half the price, "
                           "results within 24 h; stop any time, `judgebot resume` goes on waiting")
    judge_cmd.add_argument("--background", choices=["2h", "8h"], help="judge in the background through OpenAI's "
                           "Responses API, within 2 h (30%% below the live price) or 8 h (40%% below); each response id "
                           "is saved as it is created: stop any time, `judgebot resume` polls them, never sends them "
                           "again")
    judge_cmd.add_argument("--yes", action="store_true", help="judge without asking, even when the estimate is above "
                           "CONFIRM_ABOVE_USD or over JUDGE_MONTHLY_BUDGET")
    judge_cmd.add_argument("-q", "--question", help="one question (with -r and -a instead of a file)")
    judge_cmd.add_argument("-r", "--reference", help="its reference answer")
    judge_cmd.add_argument("-a", "--answer", help="the answer to grade")
    judge_cmd.add_argument("--context", action="append", metavar="TEXT",
                           help="one passage the assistant retrieved for the question, for a rubric that reads "
                                "retrieved context ($context); repeat it for each passage, in the order retrieved")

    resume_cmd = commands.add_parser("resume", help="finish the pending rows of a paused or interrupted run")
    resume_cmd.add_argument("run_id", nargs="?", type=int, help="run id (default: the newest unfinished run)")
    resume_cmd.add_argument("--out", type=Path, help="results CSV (default: the run's own, where `judge` wrote it; "
                            "else run-ID.results.csv)")
    resume_cmd.add_argument("--concurrency", type=int, help="judge requests in flight (default: CONCURRENCY)")
    resume_cmd.add_argument("--yes", action="store_true", help="judge without asking, whatever the estimate")
    resume_cmd.add_argument("--batch", action="store_true", help="send the pending rows as a new batch (the Batch API, "
                            "half price, within 24 h) rather than live, or than in the run's background window")
    resume_cmd.add_argument("--background", choices=["2h", "8h"], help="ask the pending rows in the background "
                            "within 2 h or 8 h (the Responses API), rather than live. A run asked in a background "
                            "window resumes in it (its latest) without this, unless --batch or --background says "
                            "otherwise: its open responses are polled, never sent again")
    resume_cmd.add_argument("--retry-errors", action="store_true",
                            help="judge again the rows that ended in a judge error or an invalid reply")

    rubrics_cmd = commands.add_parser("rubrics", help="list rubrics; `rubrics check [NAME]` validates them and runs "
                                      "their goldens (exit 1 when a golden is missed, 2 while a file is broken)")
    rubrics_cmd.add_argument("action", nargs="?", choices=["list", "check"], default="list")
    rubrics_cmd.add_argument("name", nargs="?")
    add_json_option(rubrics_cmd, "rubrics", "not with check")

    runs_cmd = commands.add_parser("runs", help="list recent runs")
    runs_cmd.add_argument("-n", "--limit", type=int, default=20, help="how many (default 20)")
    add_json_option(runs_cmd, "runs")

    where = "a Slack channel id such as C0123456789 (default: the judgments made in a terminal)"
    history_cmd = commands.add_parser("history", help="the latest judgments of a Slack channel or of the terminal")
    history_cmd.add_argument("--channel", help=where)
    history_cmd.add_argument("-n", "--limit", type=int, default=20, help="how many (default 20)")
    add_json_option(history_cmd, "history")
    review_cmd = commands.add_parser("review", help="the cases of a Slack channel's review queue (or the terminal's) "
                                     "that wait for a person's label; `review label` takes labels from the keyboard, "
                                     "--out writes the cases as a CSV to fill in")
    review_cmd.add_argument("action", nargs="?", choices=["label"], help="label: the next case for you, its texts and "
                            "(unless the channel reviews blind) the judge's verdict; you give pass/fail, the tag and a "
                            "note, case by case, until none waits (q or the end of input stops)")
    review_cmd.add_argument("--channel", help=where)
    review_cmd.add_argument("-n", "--limit", type=int, default=20, help="how many (default 20)")
    review_cmd.add_argument("--out", type=Path, metavar="FILE", help="write the open cases of one rubric as a CSV "
                            "with empty human_pass, human_<tag> and note columns; `labels import FILE` (or judging it) "
                            "closes the cases it labels")
    review_cmd.add_argument("--rubric", help="--out: the rubric whose cases to write (needed when the queue holds "
                            "several)")
    review_cmd.add_argument("--as", dest="labeler", metavar="NAME", help="label: who labels (default: your login "
                            "name)")
    review_cmd.add_argument("--nudge", action="store_true", help="send today's nudge to the channel's reviewers now "
                            "(each gets one a day, whoever sends it); needs --channel and SLACK_BOT_TOKEN, or the "
                            "OAuth install")
    add_json_option(review_cmd, "review", "not with --nudge")
    stats_cmd = commands.add_parser("stats", help="per model and rubric figures of a Slack channel or the terminal")
    stats_cmd.add_argument("--channel", help=where)
    stats_cmd.add_argument("--days", type=int, default=30, help="the last N days (default 30; 0: all time)")
    stats_cmd.add_argument("--model", help="only this model under test")
    add_json_option(stats_cmd, "stats")
    digest_cmd = commands.add_parser("digest", help="a Slack channel's weekly digest (or the terminal's) as a table; "
                                     "--post posts a channel's")
    digest_cmd.add_argument("--channel", help="a Slack channel id such as C0123456789 (default: the judgments made in "
                            "a terminal)")
    digest_cmd.add_argument("--week", help="ISO week such as 2026-W47 (default: last week)")
    digest_cmd.add_argument("--timezone", help="where the week's days begin (default: the channel's digest "
                            "timezone, else DIGEST_TIMEZONE)")
    digest_cmd.add_argument("--post", action="store_true", help="post it in the channel too (needs SLACK_BOT_TOKEN "
                            "or the OAuth install; a week is posted once, whoever posts it)")
    add_json_option(digest_cmd, "digest")
    budget_cmd = commands.add_parser("budget", help="what the terminal's judging spent this month, against "
                                     "JUDGE_MONTHLY_BUDGET and CONFIRM_ABOVE_USD")
    add_json_option(budget_cmd, "budget")
    retention_cmd = commands.add_parser("retention", help="remove the texts of judgments older than RETENTION_DAYS "
                                        "(their figures stay); the bot does it once a day when it is set")
    retention_cmd.add_argument("--days", type=int, metavar="N", help="older than N days (default: RETENTION_DAYS)")
    forget_cmd = commands.add_parser("forget", help="delete every row of one Slack workspace, after typing its id "
                                     "again")
    forget_cmd.add_argument("--team", required=True, metavar="T", help="the workspace id, such as T0123ABCD")
    forget_cmd.add_argument("--yes", action="store_true", help="do not ask (a script, or no terminal)")
    secrets_cmd = commands.add_parser("secrets", help="`secrets rotate` encrypts the OAuth install's stored Slack "
                                      "tokens anew with the first key of SECRETS_KEY (and any stored unencrypted)")
    secrets_cmd.add_argument("action", choices=["rotate"])
    add_calibration_commands(commands)
    add_judges_commands(commands)
    return parser


def add_json_option(command: argparse.ArgumentParser, anchor: str, scope: str = "") -> None:
    """--json: what a reading command shows, as one JSON document on stdout (its keys: docs/json.md#ANCHOR)."""
    only = f" ({scope})" if scope else ""
    command.add_argument("--json", action="store_true", help=f"print one JSON document on standard output instead "
                         f"of tables{only}, its keys as docs/json.md#{anchor} documents them; anything else said "
                         "goes to standard error")


def add_panel_options(command: argparse.ArgumentParser, scope: str = "") -> None:
    """--samples, --judges and --judges-file: who judges each row, and how many times."""
    command.add_argument("--samples", type=int, metavar="N",
                         help=f"{scope}judge each row N times (1-9; default: the rubric's own, else 1); the verdict is "
                         "the one closest to the others, and rows whose samples split are marked unsure")
    command.add_argument("--judges", metavar="M1,M2", help=f"{scope}a jury of judge models on the configured endpoint, "
                         "each optionally with its reasoning effort after a space ('gpt-6-luna low,gpt-6.2-sol medium'; "
                         "default: JUDGES, else JUDGE_MODEL alone)")
    command.add_argument("--judges-file", type=Path, metavar="YAML", help=f"{scope}a jury across endpoints: per judge a "
                         "model, a base_url, the key_env naming the variable with its key and an effort (its reasoning "
                         "effort) (default: JUDGES_FILE)")


def add_calibration_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`calibration [check]` and `labels export`: how far to trust the judge, from people's labels."""
    calibration_cmd = commands.add_parser("calibration", help="how far the judge agrees with people's labels; "
                                          "`calibration check` judges the labeled rows again with today's judge")
    calibration_cmd.add_argument("action", nargs="?", choices=["check"], help="judge the labeled rows again")
    calibration_cmd.add_argument("--rubric", required=True, help="rubric name or alias")
    calibration_cmd.add_argument("--channel", help="only the labels of this Slack channel (default: every channel "
                                 "and the terminal); with check, judge this channel's labeled judgments")
    calibration_cmd.add_argument("--since", help="7d, 30d, all or a date such as 2026-11-01 (default: all)")
    calibration_cmd.add_argument("--judge-model", help="only labels of this judge's verdicts; with check, the one "
                                 "judge to measure (default: the configured jury, else JUDGE_MODEL)")
    add_panel_options(calibration_cmd, "check: ")
    calibration_cmd.add_argument("--labels", type=Path, metavar="FILE", help="check: a CSV with human_ columns, such "
                                 "as `judgebot labels export` writes")
    calibration_cmd.add_argument("--min-agreement", type=float, metavar="SHARE",
                                 help="check: exit 1 unless the 95%% interval of agreement on pass/fail lies above "
                                 "this (its lower bound; default 0.8)")
    calibration_cmd.add_argument("--min-labels", type=int, metavar="N", help="check: exit 1 with fewer distinct "
                                 "labeled cases than this (default 20; a second person's label of a case is not "
                                 "another case): a handful proves nothing")
    calibration_cmd.add_argument("--min-kappa", type=float, metavar="KAPPA", help="check: exit 1 unless the 95%% "
                                 "interval of kappa on pass/fail lies above this (a judge that passes everything has "
                                 "no kappa)")
    calibration_cmd.add_argument("--point", action="store_true", help="check: hold agreement itself to "
                                 "--min-agreement, not its interval's lower bound")
    calibration_cmd.add_argument("--yes", action="store_true", help="check: judge without asking, however many rows")
    calibration_cmd.add_argument("--batch", action="store_true", help="check: judge through the Batch API: half the "
                                 "price, within 24 h, rather than live")
    calibration_cmd.add_argument("--fresh", action="store_true", help="check: judge again even when a cached "
                                 "verdict of the same judge exists")
    add_json_option(calibration_cmd, "calibration", "with check: the check's figures and gate, its keys as "
                    "docs/json.md#calibration-check documents them")
    compare_cmd = commands.add_parser("compare", help="is B better than A? two runs, or two models under test, paired "
                                      "on the same questions (no judge is asked)")
    compare_cmd.add_argument("runs", nargs="*", type=int, metavar="RUN", help="two run ids: A then B")
    compare_cmd.add_argument("--model", action="append", metavar="NAME", help="a model under test; give two: A then B")
    compare_cmd.add_argument("--run", type=int, help="with --model: the models of this run")
    compare_cmd.add_argument("--channel", help="with --model: a Slack channel's history (default: the terminal's)")
    compare_cmd.add_argument("--since", help="with --model: 7d, 30d, all or a date such as 2026-11-01 (default: all)")
    compare_cmd.add_argument("--rubric", help="only answers graded with this rubric (default: each rubric compared on "
                             "its own)")
    compare_cmd.add_argument("--judge", metavar="RUBRIC", help="then ask a pairwise judge which answer of each pair is "
                             "better (a pairwise rubric, such as pairwise), each pair in both orders")
    compare_cmd.add_argument("--no-swap", action="store_true", help="--judge: each pair once (every other one B first)")
    compare_cmd.add_argument("--out", type=Path, help="--judge: the results CSV (default: compare.results.csv)")
    compare_cmd.add_argument("--concurrency", type=int, help="--judge: judge requests in flight (default: CONCURRENCY)")
    add_panel_options(compare_cmd, "--judge: ")
    compare_cmd.add_argument("--batch", action="store_true", help="--judge: through the Batch API (half the price)")
    compare_cmd.add_argument("--fresh", action="store_true", help="--judge: judge again even when a verdict is cached")
    compare_cmd.add_argument("--yes", action="store_true", help="--judge: judge without asking, whatever the estimate")
    add_json_option(compare_cmd, "compare", "not with --judge")

    align_cmd = commands.add_parser("align", help="a candidate rubric with worked examples from people's corrections, "
                                    "measured on held-out cases against the rubric as it is, written beside it")
    align_cmd.add_argument("--rubric", required=True, help="rubric name or alias")
    align_cmd.add_argument("--channel", help="the labels of this Slack channel (default: every label)")
    align_cmd.add_argument("--labels", type=Path, help="a CSV with human_ columns, such as `labels export` writes")
    align_cmd.add_argument("--folds", type=int, default=5, help="cross-validation folds (default 5)")
    align_cmd.add_argument("--examples", type=int, default=6, help="examples the candidate holds (default 6)")
    align_cmd.add_argument("--out", type=Path, help="where the candidate goes: a folder or a .yaml file (default: "
                           "RUBRICS_DIR, else here)")
    align_cmd.add_argument("--judge-model", help="judge with this model instead of the configured judges")
    align_cmd.add_argument("--judges", help=argparse.SUPPRESS)
    align_cmd.add_argument("--judges-file", type=Path, help=argparse.SUPPRESS)
    align_cmd.add_argument("--samples", type=int, help=argparse.SUPPRESS)
    align_cmd.add_argument("--yes", action="store_true", help="judge without asking, whatever the estimate")
    align_cmd.add_argument("--batch", action="store_true", help="judge through the Batch API: half the price, within "
                           "24 h, rather than live")
    align_cmd.add_argument("--fresh", action="store_true", help="judge again even where the history has the verdict")

    labels_cmd = commands.add_parser("labels", help="people's labels; `labels export` writes them as a CSV, `labels "
                                     "import FILE` saves a filled-in review file's")
    labels_cmd.add_argument("action", choices=["export", "import"])
    labels_cmd.add_argument("file", nargs="?", type=Path, help="import: a CSV with human_ columns, such as "
                            "`judgebot review --out` writes; each labeled row closes the open case of the queue it "
                            "names (exit 1 when a labeled row matches none)")
    labels_cmd.add_argument("--rubric", help="rubric name or alias (export: required; import: for rows without a "
                            "rubric cell)")
    labels_cmd.add_argument("--channel", help="export: only the labels of this Slack channel (default: all); import: "
                            "the cases of this channel's queue (default: the terminal's)")
    labels_cmd.add_argument("--out", type=Path, help="export: the CSV file to write (default: standard output)")


def add_judges_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`judges compare`: a candidate judge against the judge in use, before switching."""
    judges_cmd = commands.add_parser("judges", help="`judges compare` measures a candidate judge against the judge in "
                                     "use on people's labels and recent judgments, before switching")
    judges_cmd.add_argument("action", choices=["compare"])
    judges_cmd.add_argument("--batch", action="store_true", help="judge through the Batch API: half the price, within "
                            "24 h, rather than live")
    judges_cmd.add_argument("--rubric", required=True, help="rubric name or alias")
    judges_cmd.add_argument("--to", required=True, metavar="MODEL", help="the candidate judge model")
    judges_cmd.add_argument("--from", dest="from_model", metavar="MODEL", help="the judge in use (default: the "
                            "channel's own judge, else JUDGE_MODEL)")
    judges_cmd.add_argument("--labels", type=Path, metavar="FILE", help="labeled cases: a CSV with human_ columns, "
                            "such as `judgebot labels export` writes")
    judges_cmd.add_argument("--channel", help="a Slack channel id: its labeled judgments, and its recent judgments "
                            "for the sample (default: the terminal's judgments for the sample)")
    judges_cmd.add_argument("--history", type=int, metavar="N", help="recent judgments judged again by both, picked "
                            "at random (default 200; 0: none)")
    judges_cmd.add_argument("--yes", action="store_true", help="judge without asking, whatever the estimate")
    judges_cmd.add_argument("--fresh", action="store_true", help="judge again even when a cached verdict of the same "
                            "judge exists")
    add_json_option(judges_cmd, "judges-compare")
