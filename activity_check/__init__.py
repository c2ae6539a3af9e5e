"""activity-check: the command line on top of the model, properties and counterexamples packages.

The console script is :func:`activity_check.console.console_main`; the commands are wired in
:mod:`activity_check.cli`."""
__version__ = "0.1.0"
