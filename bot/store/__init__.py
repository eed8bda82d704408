"""The history, behind one door: every table, query and helper the rest of judgebot uses is imported from here.

Inside, sub-packages by idea: tables and migrations (the schema), runs (runs and their rows), processes (what the
processes on one database do once between them), reads (the counting rule and figures), trust (labels, review,
revisions), chat (preferences, subscriptions, shared files, workspaces) and retention. Every query is a function
that takes the Store (bot.store.database) as its first argument."""

import lazy_loader

# Each name is imported from its module when first asked for: a command loads the tables and queries it uses, not
# the whole history's (the names and their modules are listed once, in __init__.pyi).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
