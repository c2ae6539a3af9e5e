"""activity-check: the command line on top of the model, properties and counterexamples packages."""
__version__ = "0.1.0"


def console_main() -> None:
    """The ``activity-check`` console script: exit with :func:`activity_check.cli.main`'s code.
    The command line is imported here, so that a Ctrl-C while it loads exits 130 with one
    line, as one while it runs does, not with a traceback."""
    import sys
    try:
        from activity_check.cli import main
    except KeyboardInterrupt:
        print("activity-check: interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(main())
