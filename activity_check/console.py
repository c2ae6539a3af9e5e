"""The ``activity-check`` console script (the ``[project.scripts]`` entry point)."""
from activity_check.process import SIGTERMS_RECEIVED, Terminated


def console_main() -> None:
    """The ``activity-check`` console script: exit with :func:`activity_check.cli.main`'s code.

    The command line is imported here, so that a Ctrl-C while it loads exits 130 with one line,
    as one while it runs does, not with a traceback. A SIGTERM unwinds the command as a Ctrl-C
    does (:class:`Terminated`), so that its clean-up runs (a temporary directory removed, a
    partial file deleted, a child process stopped), and exits 143. A signal that lands inside a
    callback whose exceptions Python ignores is lost (as Python loses a Ctrl-C there): one line
    says so, instead of Python's traceback, and the command goes on."""
    import signal
    import sys

    received = SIGTERMS_RECEIVED
    received.clear()

    def terminated(signum, frame):
        # raised at every SIGTERM, as a KeyboardInterrupt at every Ctrl-C: one raised inside a
        # callback whose exceptions Python ignores (a garbage-collection callback, a __del__)
        # is lost, and the next signal stops the command instead
        received.append(signum)
        raise Terminated

    default_hook = sys.unraisablehook

    def unraisable(info):
        # Python prints an exception raised inside such a callback with a traceback and goes
        # on: one line instead, saying that the signal was lost
        if isinstance(info.exc_value, KeyboardInterrupt):
            lost_term = isinstance(info.exc_value, Terminated)
            if lost_term and received:
                received.pop()  # it unwound nothing: a later Ctrl-C is still an interrupt
            what = "a SIGTERM" if lost_term else "a Ctrl-C"
            print(f"activity-check: {what} arrived inside a callback that Python does not let "
                  "stop the program, and was lost; send it again", file=sys.stderr)
            return
        default_hook(info)

    sys.unraisablehook = unraisable
    signal.signal(signal.SIGTERM, terminated)
    try:
        from activity_check.cli import main
        code = main()
    except KeyboardInterrupt as exc:
        code = 130
        if not isinstance(exc, Terminated):
            print("activity-check: interrupted", file=sys.stderr)
    if received and code == 130:  # unwound by a SIGTERM (one that was lost changes nothing)
        print("activity-check: terminated", file=sys.stderr)
        code = 128 + signal.SIGTERM
    sys.exit(code)
