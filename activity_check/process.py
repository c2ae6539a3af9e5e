"""What the process remembers of the signals it received while a command ran: the console script
(:mod:`activity_check.console`) records them here, the command line (:mod:`activity_check.cli`)
reads them. A leaf module, so that neither imports the other for it."""


class Terminated(KeyboardInterrupt):
    """Raised where the command is when the process receives SIGTERM (``kill``, ``timeout``): a
    kind of KeyboardInterrupt, so that it unwinds as a Ctrl-C does (Hypothesis, too, lets one
    through untouched) and the same clean-up runs."""


SIGTERMS_RECEIVED: list = []
"""The SIGTERMs :func:`activity_check.console.console_main`'s handler took while the command ran, less those lost inside
a callback Python does not let stop the program (read by :func:`activity_check.cli.terminated`)."""
