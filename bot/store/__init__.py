"""The history: engine set-up, tables, migrations, tallies, leases, and every query the rest of judgebot needs."""

from bot.errors import SchemaTooNew, StoreUnavailable
from bot.store.engine import BUSY_TIMEOUT_MS, configure_sqlite, make_engine
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

__all__ = ["BUSY_TIMEOUT_MS", "INSERT_BATCH", "ChannelSetting", "DigestPost", "DigestSubscription", "Feedback",
           "Judgment", "JudgmentTally", "Run", "SchemaTooNew", "SharedFile", "Store", "StoreUnavailable",
           "UserSetting", "configure_sqlite", "make_engine", "owner_gone", "process_name", "utcnow"]
