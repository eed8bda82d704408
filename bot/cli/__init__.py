"""The command line: a parser with one lazy dispatch table, one module per command family, the terminal views."""
