"""Slack's size limits, in one place: every view keeps within them (slack_sdk's models check most on to_dict())."""

MESSAGE_BLOCKS = 50  # blocks in one message
VIEW_BLOCKS = 100  # blocks in a modal or the Home tab
VIEW_BYTES = 240_000  # bytes of a modal's JSON: Slack refuses one much above 250 kB (views.open: invalid_arguments)
# Slack refuses a message whose blocks add up to much more than 12,000 characters (msg_blocks_too_long), a limit
# it does not document; every message stays under this.
MESSAGE_CHARS = 11_500
SECTION_LIMIT = 3000  # characters of one section's text
FIELD_LIMIT = 2000  # characters of one section field
SECTION_FIELDS = 10  # fields in one section
HEADER_LIMIT = 150  # characters of a header
BUTTON_LIMIT = 75  # characters of a button's or an option's label
BUTTONS_PER_ROW = 25  # elements in one actions block
INPUT_LIMIT = 3000  # characters a plain-text input takes
SELECT_OPTIONS = 100  # options in a select menu
ERROR_LIMIT = 150  # characters of an error shown under a form's input
MODEL_ROOM = 80  # characters of a model's name shown in a message (a CSV column: any length)
TEXT_LIMIT = 40_000  # characters of a message's fallback text
LABEL_ROOM = 300  # characters of a judgment's label in a history entry, leaving room for its question and link
TABLE_ROWS = 100  # rows of a table block, its header included (and one table block in a message)
TABLE_CELLS = 20  # cells in a table's row, and column settings
TABLE_TEXT = 10_000  # characters of text over all of a table's cells, as others have found Slack to refuse above
TABLE_CELL = 500  # characters of one cell: ours, so that a name never takes a table's room from its figures
