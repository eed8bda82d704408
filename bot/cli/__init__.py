"""The command line: a parser with one lazy dispatch table, one module per command family; what the terminal shows in views/."""
