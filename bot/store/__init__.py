"""The history: engine set-up, tables, migrations, tallies, leases, and every query the rest of judgebot needs."""

from bot.errors import SchemaTooNew, StoreUnavailable
from bot.store.engine import BUSY_TIMEOUT_MS, configure_sqlite, make_engine
from bot.store.feedback import feedback_tally, record_feedback
from bot.store.history import (
                               Figures,
                               channel_stats,
                               counted_in_channel,
                               in_channel,
                               model_of,
                               newest_on_message,
                               recent_by_user,
                               recent_in_channel,
)
from bot.store.judgments import INSERT_BATCH, Store
from bot.store.leases import owner_gone, process_name
from bot.store.models import (
                              ChannelSetting,
                              DigestPost,
                              DigestSubscription,
                              Feedback,
                              Judgment,
                              JudgmentTally,
                              Run,
                              SharedFile,
                              UserSetting,
                              utcnow,
)
from bot.store.preferences import default_rubric, remember_model, remembered_model, set_default_rubric
from bot.store.shares import (
                              claim_share,
                              earlier_share,
                              get_share,
                              move_share,
                              share_of_run,
                              take_share,
                              thread_rubric,
                              unfinished_shares,
                              update_share,
)
from bot.store.subscriptions import (
                                     all_subscriptions,
                                     claim_week,
                                     last_posted,
                                     mark_posted,
                                     release_week,
                                     subscribe,
                                     subscription,
                                     unsubscribe,
                                     week_taken,
)
from bot.store.tallies import HOUR, hour_of

__all__ = ["BUSY_TIMEOUT_MS", "HOUR", "INSERT_BATCH", "ChannelSetting", "DigestPost", "DigestSubscription", "Feedback",
           "Figures", "Judgment", "JudgmentTally", "Run", "SchemaTooNew", "SharedFile", "Store", "StoreUnavailable",
           "UserSetting", "all_subscriptions", "channel_stats", "claim_share", "claim_week", "configure_sqlite",
           "counted_in_channel", "default_rubric", "earlier_share", "feedback_tally", "get_share", "hour_of", "in_channel",
           "last_posted", "make_engine", "mark_posted", "model_of", "move_share", "newest_on_message", "owner_gone",
           "process_name", "recent_by_user", "recent_in_channel", "record_feedback", "release_week", "remember_model",
           "remembered_model", "set_default_rubric", "share_of_run", "subscribe", "subscription", "take_share",
           "thread_rubric", "unfinished_shares", "unsubscribe", "update_share", "utcnow", "week_taken"]
