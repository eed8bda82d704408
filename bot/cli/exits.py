"""The exit codes of every command, in one place: what a script or a CI job running judgebot can act on."""

EXIT_OK = 0  # done, every row scored (or nothing to judge)
EXIT_UNSCORED = 1  # done, but rows were left without a score; a calibration check below --min-agreement; goldens missed
EXIT_USAGE = 2  # a problem the person can fix, said in a sentence; nothing judged that was not agreed to
EXIT_INTERNAL = 3  # an unexpected error: rows already judged are saved
EXIT_INTERRUPTED = 130  # Ctrl-C: rows not yet judged stay pending for `judgebot resume`
