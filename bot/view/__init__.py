"""The web view: the history read in a browser (runs, rows, comparisons, calibration, the weekly trend, the review
queue) and cases labeled there; server-rendered pages, SVG charts, no script."""

from bot.view.app import make_view_app
from bot.view.serving import refuse_remote, serve_view
from bot.view.viewer import Viewer, local_viewer

__all__ = ["Viewer", "local_viewer", "make_view_app", "refuse_remote", "serve_view"]
