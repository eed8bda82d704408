"""The names of the history's one door, for type checkers and for the door's lazy loading (bot/store/__init__.py)."""


from .chat.preferences import (
    CostLimits,
    cost_limits,
    default_rubric,
    default_samples,
    remember_model,
    remembered_model,
    set_cost_limits,
    set_default_rubric,
    set_default_samples,
)
from .chat.sealing import Sealer, reseal_tokens, sealed, stored_tokens
from .chat.shares import (
    MOVES,
    claim_share,
    earlier_share,
    earlier_unread,
    get_share,
    move_share,
    share_of_run,
    sources,
    take_share,
    thread_rubric,
    unfinished_shares,
    update_share,
)
from .chat.subscriptions import (
    all_subscriptions,
    claim_week,
    last_posted,
    mark_posted,
    release_week,
    subscribe,
    subscription,
    unanswered_week,
    unsubscribe,
    week_taken,
)
from .chat.workspace_orgs import channel_teams, org_of, remember_org
from .clock import utcnow
from .connections import BUSY_TIMEOUT_MS, configure_sqlite, make_engine, store_problem
from .counts.billing import bill_judgments
from .counts.case_keys import REMOVED, case_key, judgment_case, removed_case, was_removed
from .counts.counting import Link, counted_case, replacements
from .counts.tallies import HOUR, KEY, KEY_LENGTH, add_judgments, hour_of, question_key
from .database import Store
from .migrations.cases import fill_replacements
from .migrations.latest import LATEST
from .migrations.upgrade import current_version, migrate
from .processes.deliveries import forget_deliveries, record_delivery
from .processes.endpoint_pauses import current_pauses, tell_pause
from .processes.leases import owner_gone, process_name
from .processes.listed_shutdowns import ListRead, keep_listed_shutdowns, listed_shutdowns
from .processes.rejudges import STALE, claim_rejudge, give_up_rejudge, rejudge_saved
from .processes.workflow_steps import drop_step, keep_step, step_run, waiting_steps
from .reads.browse import (
    FLAGS,
    OUTCOMES,
    SORTS,
    Channels,
    RowFacets,
    RowFilter,
    RunLine,
    WeekFigures,
    listed,
    queue_channels,
    row_channels,
    row_facets,
    run_lines,
    run_rows,
    weekly_figures,
)
from .reads.channel import (
    Billed,
    Spend,
    counted_in_channel,
    identical_rows,
    in_channel,
    month_spent,
    month_start,
    newest_judge,
    recent_by_user,
    recent_in_channel,
    recent_reasoning_tokens,
    recent_reply_tokens,
    run_billed,
    spend,
)
from .reads.graded import graded_answers
from .reads.label_counts import Said
from .reads.latest import ListedJudgment, latest_in_channel
from .reads.pairs import judged_pairs, orders_of, pair_case, pair_labels
from .reads.recent import recent_sample
from .reads.stats import Figures, channel_stats, model_of
from .reads.waiting import WaitingCase, waiting_cases
from .reads.weekly import first_judged, judges_used, lowest_scored, rubric_texts_used, score_drops, weekly_means
from .retention.revisions import Pruned
from .retention.texts import Removed, Shapes, forget_team, remove_old_texts, team_rows
from .runs.abandoned_loads import fail_abandoned_loads
from .runs.backgrounds import (
    add_background,
    background_window,
    open_backgrounds,
    update_background,
)
from .runs.batches import ENDED, SENT, UPLOADING, Slot, add_part, open_parts, pending_rows, slots_of, update_part
from .runs.listing import ListedRun, listed_runs
from .runs.records import (
    COST_NOT_AGREED,
    LOAD_LOST,
    beat_run,
    claim_run,
    create_run,
    get_run,
    interrupt_run,
    latest_unfinished_run,
    newer_results,
    recent_runs,
    unfinished_runs,
    update_run,
)
from .runs.row_claims import (
    CLAIM_STALE,
    cancel_requested,
    claim_rows,
    judged_elsewhere,
    pending_elsewhere,
    refresh_claims,
    release_claims,
    request_cancel,
    runs_to_help,
)
from .runs.rows import (
    ID_CHUNK,
    INSERT_BATCH,
    RowVerdict,
    add_rows,
    find_cached,
    find_cached_many,
    first_judgment,
    get_judgment,
    iter_columns,
    iter_judgments,
    next_pending,
    pending_texts,
    reset_rows,
    save_verdict,
    save_verdicts,
    set_run_message,
    status_counts,
    triple_of,
    unsure_count,
)
from .runs.samples import known_samples, sampled_in_channel, samples_by_judgment, samples_of, save_sample
from .tables import oauth  # noqa: F401  (slack_sdk's installation tables, in the schema)
from .tables.as_read import EndpointPause, Judgment, JudgmentSample, Run, RunBatch
from .tables.background import RunBackground
from .tables.chat import ChannelSetting, DigestPost, DigestSubscription, SharedFile, UserSetting
from .tables.history import (
    BilledTally,
    Feedback,
    JudgmentTally,
    table_of,
)
from .tables.oauth import BOTS, INSTALLATIONS, OAUTH_STATES
from .tables.processes import ListedShutdown, ModelListRead, Rejudge, WorkflowStep
from .tables.trust import ChannelJudge, Label, ReviewCase, ReviewNudge, RubricRevision
from .trust.channel_judges import channel_judge, judge_choices, judge_of_channel, set_channel_judge
from .trust.feedback import feedback_tally, record_feedback
from .trust.labels import (
    PassGroup,
    Scope,
    counted_passes,
    first_given,
    labeled_judgments,
    labeled_rubric_names,
    labels_of,
    save_label,
    trust_state,
)
from .trust.random_review import random_share_pairs
from .trust.review import (
    ANY_TEAM,
    DISAGREE,
    OFFER_FOR,
    OPEN,
    QueuedRow,
    QueueState,
    add_cases,
    drawn_by,
    offer_next,
    open_cases,
    queue_state,
    queued_of_run,
    queued_rows,
    release_case,
    review_case,
    skip_case,
    waiting_for,
)
from .trust.reviewers import (
    ReviewSetup,
    claim_nudge,
    mark_nudged,
    nudged_channels,
    release_nudge,
    review_setup,
    set_blind,
    set_nudge,
    set_reviewers,
    unanswered_nudge,
)
from .trust.revisions import (
    all_revisions,
    decide_revision,
    earlier_hashes,
    propose_revision,
    revision_by_hash,
    revision_in_force,
    revision_of,
    set_message,
)
from .trust.verdicts import LabeledItem, labeled_items
from .upserts import upsert

__all__ = [
    "ANY_TEAM", "BOTS", "BUSY_TIMEOUT_MS", "Billed", "BilledTally", "CLAIM_STALE", "COST_NOT_AGREED", "ChannelJudge",
    "ChannelSetting", "CostLimits", "DISAGREE", "DigestPost", "DigestSubscription", "ENDED", "EndpointPause",
    "ListRead", "ListedShutdown", "ModelListRead", "Feedback", "Figures", "HOUR", "ID_CHUNK", "INSERT_BATCH",
    "INSTALLATIONS", "ListedJudgment", "ListedRun", "Judgment", "JudgmentSample", "JudgmentTally", "KEY",
    "KEY_LENGTH", "LATEST", "LOAD_LOST",
    "Label", "Link", "WaitingCase", "waiting_cases", "MOVES", "OAUTH_STATES", "OFFER_FOR", "OPEN", "PassGroup",
    "Pruned", "QueueState", "QueuedRow",
    "REMOVED", "Rejudge", "Removed", "ReviewCase", "ReviewNudge", "ReviewSetup", "RowVerdict", "RubricRevision",
    "Run", "RunBackground", "RunBatch", "SENT", "STALE", "Said", "Scope", "Sealer", "Shapes", "SharedFile", "Slot",
    "Spend", "Store",
    "UPLOADING", "UserSetting", "WorkflowStep", "add_background", "add_cases", "add_judgments", "add_part", "add_rows",
    "all_revisions", "all_subscriptions", "background_window", "beat_run", "bill_judgments", "cancel_requested",
    "case_key", "channel_judge",
    "channel_stats", "channel_teams", "claim_nudge", "claim_rejudge", "claim_rows", "claim_run", "claim_share",
    "claim_week", "configure_sqlite", "cost_limits", "counted_case", "counted_in_channel", "counted_passes",
    "create_run", "current_pauses", "keep_listed_shutdowns", "listed_shutdowns", "current_version",
    "decide_revision", "default_rubric", "default_samples", "drawn_by", "drop_step", "earlier_hashes",
    "earlier_share", "latest_in_channel", "listed_runs", "earlier_unread", "fail_abandoned_loads", "feedback_tally",
    "fill_replacements", "find_cached",
    "find_cached_many", "first_judged", "first_judgment", "forget_deliveries", "forget_team", "get_judgment",
    "get_run", "get_share", "give_up_rejudge", "graded_answers", "hour_of", "identical_rows", "in_channel",
    "interrupt_run", "iter_columns", "iter_judgments", "judge_choices", "judge_of_channel", "judged_elsewhere",
    "judged_pairs", "judges_used", "judgment_case", "keep_step", "known_samples", "labeled_items", "LabeledItem", "first_given",
    "trust_state",
    "labeled_judgments", "labeled_rubric_names", "labels_of", "last_posted", "latest_unfinished_run",
    "lowest_scored", "make_engine", "mark_nudged", "mark_posted", "migrate", "model_of", "month_spent",
    "month_start", "move_share", "newer_results", "newest_judge", "next_pending", "nudged_channels", "offer_next",
    "open_backgrounds", "open_cases", "open_parts", "orders_of", "org_of", "owner_gone", "pair_case", "pair_labels",
    "pending_elsewhere", "pending_rows", "pending_texts", "process_name", "propose_revision", "question_key",
    "queue_state", "queued_of_run", "queued_rows", "random_share_pairs", "recent_by_user", "recent_in_channel",
    "recent_reasoning_tokens", "recent_reply_tokens", "recent_runs", "recent_sample", "record_delivery",
    "record_feedback", "refresh_claims", "rejudge_saved", "release_case", "release_claims", "release_nudge",
    "release_week", "remember_model", "remember_org", "remembered_model", "remove_old_texts", "removed_case",
    "replacements", "request_cancel", "reseal_tokens", "reset_rows", "review_case", "review_setup",
    "revision_by_hash", "revision_in_force", "revision_of", "rubric_texts_used", "run_billed", "runs_to_help",
    "sampled_in_channel", "samples_by_judgment", "samples_of", "save_label", "save_sample", "save_verdict",
    "save_verdicts", "score_drops", "sealed", "set_blind", "set_channel_judge", "set_cost_limits",
    "set_default_rubric", "set_default_samples", "set_message", "set_nudge", "set_reviewers", "set_run_message",
    "share_of_run", "skip_case", "slots_of", "sources", "spend", "status_counts", "step_run", "store_problem",
    "stored_tokens", "subscribe", "subscription", "table_of", "take_share", "team_rows", "tell_pause",
    "thread_rubric", "triple_of", "unanswered_nudge", "unanswered_week", "unfinished_runs", "unfinished_shares",
    "unsubscribe", "unsure_count", "update_background",
    "update_part", "update_run", "update_share", "upsert", "utcnow", "waiting_for",
    "waiting_steps", "was_removed", "week_taken", "weekly_means",
    "Channels", "FLAGS", "OUTCOMES", "RowFacets", "RowFilter", "RunLine", "SORTS", "WeekFigures", "listed",
    "queue_channels", "row_channels", "row_facets", "run_lines", "run_rows", "weekly_figures",
]
