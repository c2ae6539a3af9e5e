"""``activity-check``: the command line. It only wires the packages together.

Commands, one module per command group (:data:`COMMANDS`):

* ``run`` (:mod:`activity_check.cmd_run`): the main job: search conformant traces for
  ambiguities of the draft, shrink and export each finding, replay the bundled field cases, write
  ``DIR/findings`` and ``DIR/summary.json`` (the pipeline is
  :func:`counterexamples.pipeline.run_pipeline`).
* ``replay FILE`` (:mod:`activity_check.cmd_replay`): the verdict of one trace file under a
  reading (or every reading).
* ``clauses``, ``readings`` (:mod:`activity_check.cmd_registry`): the clause registry with what
  covers each clause; the knobs (open questions), their options and the named readings.
* ``explore`` (:mod:`activity_check.cmd_explore`): exhaustive breadth-first search to a depth.
* ``corpus check|update`` (:mod:`activity_check.cmd_run`): replay the committed corpus, or
  rewrite it from a run.
* ``spec clauses|coverage|diff`` (:mod:`activity_check.cmd_spec`): the normative sentences of
  spec pages, matched to the registry.
* ``export FINDING --format F`` (:mod:`activity_check.cmd_export`): a finding as JSON lines, JSON,
  ITF, Mermaid or pytest.
* ``peer check|search`` (:mod:`activity_check.cmd_peer`), ``smt QUERY``
  (:mod:`activity_check.cmd_smt`).
* ``lint [FILE|-] [--url URL]`` (:mod:`activity_check.cmd_lint`): every producer obligation a
  stream breaks, in text, JSON, JUnit or SARIF.

This module keeps the parser wiring, what the command modules share (the console, the usage
error, JSON printing, the output-directory check, the vocabulary file) and :func:`main`. The
command modules import the packages they drive inside their command functions, so that start-up
(building the parser) imports neither the search nor Hypothesis.

Exit codes: 0 when the command ran (a fatal verdict is data), 2 for unusable input or arguments
and for an output that cannot be written (one line on stderr, no traceback), 1 when a check the
command makes fails (``corpus check``, ``peer --fail-on``) or for an internal error, 130 after a
Ctrl-C, 143 after a SIGTERM.

Every string that comes from outside (a trace, a finding, a vocabulary, an adapter's answer, a
file name) is data on the terminal too: inside markup it goes through :func:`shown`, in a table
as a :func:`cell` (a :class:`rich.text.Text`, never parsed as markup), both with control
characters escaped and long values cut (:func:`model.text.visible`); ``--json`` prints it
whole.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator, Optional, Sequence

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from activity_check import __version__
from activity_check.process import SIGTERMS_RECEIVED, Terminated
from model.text import DEFAULT_LIMIT, TEXT_WIDTH, columns, visible

EXIT_USAGE = 2
"""The exit code of a usage error (:class:`UsageError`)."""

ERROR_LIMIT = 2000
"""The longest error line printed, in characters of its text (a value it quotes may be huge)."""

EXIT_INTERRUPTED = 130
"""The exit code after a Ctrl-C (128 + SIGINT), also a command's own when it stops early."""

COMMANDS: tuple[tuple[str, str], ...] = (
    ("run", "activity_check.cmd_run"),
    ("replay", "activity_check.cmd_replay"),
    ("clauses", "activity_check.cmd_registry"),
    ("explore", "activity_check.cmd_explore"),
    ("corpus", "activity_check.cmd_run"),
    ("spec", "activity_check.cmd_spec"),
    ("readings", "activity_check.cmd_registry"),
    ("export", "activity_check.cmd_export"),
    ("peer", "activity_check.cmd_peer"),
    ("smt", "activity_check.cmd_smt"),
    ("lint", "activity_check.cmd_lint"),
    ("producers", "activity_check.cmd_producers"),
    ("questions", "activity_check.cmd_questions"),
    ("conformance", "activity_check.cmd_conformance"),
    ("resolve", "activity_check.cmd_resolve"),
)
"""``(command, module)`` in the order ``--help`` lists them. Each module has ``PARSERS``,
``{command: add(subparsers)}``: ``add`` adds the command's parser with ``set_defaults(func=...)``;
a command function takes the parsed arguments, returns the exit code and raises
:class:`UsageError` for unusable input."""


class UsageError(Exception):
    """A problem with the user's input or arguments: printed as one line, exit 2."""


MAX_SECONDS = 1e9
"""The largest number of seconds a float option takes (about 31 years): ``--timeout 1e308``
overflowed the platform's ``time_t`` in a thread's wait, a traceback."""


def finite_float(text: str) -> float:
    """argparse ``type`` of every float option (each a number of seconds): a number, refused
    (one line, exit 2) when it is not one, is NaN or an infinity (``--timeout nan`` used to end
    in a traceback), or is larger than :data:`MAX_SECONDS`."""
    import math
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    if abs(value) > MAX_SECONDS:  # a wait that long overflows the platform's time_t
        raise argparse.ArgumentTypeError(f"{text!r} is too large (at most {MAX_SECONDS:.0f} "
                                         "seconds)")
    return value


def float_or_inf(text: str) -> float:
    """argparse ``type`` of an option where ``inf`` means no limit (``--budget``): a finite
    number or an infinity; NaN refused (one line, exit 2)."""
    import math
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if math.isnan(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number")
    return value


def positive_int(text: str) -> int:
    """argparse ``type`` of a count or size bound: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def add_input_limits(parser) -> None:
    """Add ``--max-bytes`` and ``--max-lines``, the bounds on one input file or stdin
    (:data:`model.wire.INPUT_LIMITS`, set by :func:`main`; docs/limits.md)."""
    parser.add_argument("--max-bytes", type=positive_int, default=None, metavar="N",
                        help="read at most N bytes of one input file or stdin (default 512 MiB; "
                             "more is refused, exit 2)")
    parser.add_argument("--max-lines", type=positive_int, default=None, metavar="N",
                        help="at most N lines in one input file or stdin (default 10,000,000)")


class _Console(Console):
    """rich's console, except that a reader closing the pipe (``| head``) ends the command the
    way plain output does (:func:`main` turns it into a quiet exit 0) rather than with rich's
    exit status 1, which this tool keeps for internal errors."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def console(stderr: bool = False, wide: Optional[bool] = None) -> Console:
    """A rich console on stdout (or stderr). ``wide`` None: when the output is not a terminal,
    wide enough (160 columns) that ids do not wrap; False: tables fit :data:`TEXT_WIDTH`
    columns (or the terminal, when narrower), and printed lines wrap there at word boundaries;
    True (``--wide``): tables at their full width, nothing folded."""
    stream = sys.stderr if stderr else sys.stdout
    if wide:
        width: Optional[int] = 100_000
    elif wide is False:
        width = min(TEXT_WIDTH, shutil.get_terminal_size((TEXT_WIDTH, 24)).columns) \
            if stream.isatty() else TEXT_WIDTH
    else:
        width = None if stream.isatty() else 160
    return _Console(stderr=stderr, highlight=False, soft_wrap=wide is not False, width=width)


def id_column(table, name: str, ids) -> None:
    """Add a column of ids to a rich ``table``: never wrapped nor cut, as wide as its longest
    id (``ids``: the cells it will hold) in terminal columns (:func:`model.text.columns`, rich's
    ``cell_len``: an id of wide characters needs two columns for each)."""
    table.add_column(name, no_wrap=True,
                     min_width=max([columns(name)] + [columns(str(i)) for i in ids]))


def id_list_column(table, name: str, cells) -> None:
    """Add a column of id lists (``"P30-x, P42-y; knob: Q8"``) to a rich ``table``: as wide as
    its longest word in terminal columns (:func:`model.text.columns`), so that it folds at
    spaces only and never breaks an id, one of wide characters included (``cells``: the
    strings it will hold). The column is fixed at that width: narrowing the table folds the
    other columns instead."""
    words = [w for c in cells for w in str(c).split()]
    table.add_column(name, width=max([columns(name)] + [columns(w) for w in words]),
                     overflow="fold")


def progress_bar(bar: bool = True):
    """A transient progress display on stderr: the task's description, a bar with done/total
    when ``bar``, and the elapsed time. Shown only when stderr is a terminal: elsewhere (a file,
    a pipe, CI) it would leave only a blank line, which would come before a one-line error."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, \
        TimeElapsedColumn
    err = console(stderr=True)
    columns = [TextColumn("{task.description}")]
    if bar:
        columns += [BarColumn(), MofNCompleteColumn()]
    return Progress(*columns, TimeElapsedColumn(), console=err, transient=True,
                    disable=not err.is_terminal)


def dump(obj) -> str:
    """``obj`` as the JSON every command prints and writes: indented by 2, non-ASCII kept, keys
    in insertion order."""
    return json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False)


def prepare_out(out_dir: str, summary_name: str, owner: str,
                files_of: Callable[[dict], Optional[list]], inputs: Sequence[str] = ()):
    """Check that ``out_dir`` is ours to write (new, empty, or an earlier output of ours) and
    that a staging directory can be made beside it, before the command does its work; nothing
    is removed (see :mod:`counterexamples.outdir`: the new output replaces the earlier one only
    when it is complete, and what the user added to it is carried over).

    Args:
        out_dir: the directory the user named with ``--out``.
        summary_name: the summary file an earlier output left there (``summary.json``).
        owner: what wrote it, for the refusal (``"activity-check"``, ``"'activity-check
            peer'"``).
        files_of: the earlier summary -> the finding files it lists (paths relative to
            ``out_dir``), None when the summary is not one of this command's; raises
            ValueError when it is, but not in the form the command writes.
        inputs: the files and folders the command reads: one inside ``out_dir`` that is, or
            holds, a file the earlier output wrote (which the new output removes) is refused,
            since the output would replace it. (A file of the user's there is carried over,
            or, where the new output writes its name, stops the write: nothing is lost.)

    Returns:
        The :class:`counterexamples.outdir.OutputPlan`, to write through :func:`write_out`.

    Raises:
        UsageError: naming the directory and why it is refused or cannot be written.
    """
    from counterexamples.outdir import OutputRefused, plan_output
    try:
        plan = plan_output(out_dir, summary_name, files_of, owner)
    except OutputRefused as exc:
        raise UsageError(f"--out {out_dir}: {exc}") from None
    target = os.path.realpath(out_dir)
    for path in inputs:
        if path in ("", "-"):
            continue
        rel = os.path.relpath(os.path.realpath(path), target)
        if rel == os.pardir or rel.startswith(os.pardir + os.sep):
            continue  # outside the directory
        inside = "" if rel == os.curdir else rel + os.sep
        if rel in plan.replaced or any(r.startswith(inside) for r in plan.replaced):
            raise UsageError(f"--out {out_dir}: {path} is read as input and the output "
                             "replaces it there; copy it out of the directory first")
    try:
        plan.check_writable()
    except OSError as exc:
        raise UsageError(f"--out {out_dir}: cannot create the directory: "
                         f"{exc.strerror or exc}") from None
    return plan


@contextmanager
def write_out(plan) -> Iterator[str]:
    """``with write_out(plan) as directory:`` write a command's whole output into
    ``directory``, swapped in for ``plan.target`` when the block ends (see
    :meth:`counterexamples.outdir.OutputPlan.staged`).

    Raises:
        UsageError: an OSError while writing or swapping (full disk, read-only, permission),
            in one line naming ``--out`` and saying that the earlier output, if any, is as it
            was. A KeyboardInterrupt propagates (the earlier output is as it was too).
    """
    try:
        with plan.staged() as directory:
            yield directory
    except OSError as exc:
        left = "the earlier output there is unchanged" if plan.earlier else "nothing was written"
        raise UsageError(f"--out {plan.target}: cannot write the output: "
                         f"{exc.strerror or exc}; {left}") from None


def add_timings_option(parser) -> None:
    """Add ``--timings`` to a command whose text output would otherwise hold no wall-clock
    figure: without it the same seed and inputs print the same bytes (the searches are
    deterministic, their durations are not); with it the text says how long the work took and
    ``--json`` adds the member ``seconds``."""
    parser.add_argument("--timings", action="store_true",
                        help="also print how long it took (wall seconds; with --json: the "
                             "member 'seconds'); without it the output is the same bytes for "
                             "the same seed and inputs")


def add_generation_options(p, examples: int, bfs_depth: int, per: str) -> None:
    """Add the options of the generated traces to parser ``p`` (``peer search``, ``peer
    matrix``): ``--seed`` (Hypothesis seed, default 0), ``--examples`` (stateful traces, default
    ``examples``; ``per`` words what they are counted by, e.g. ``"per peer"``) and
    ``--bfs-depth`` (depth of the breadth-first traces, default ``bfs_depth``; 0: none)."""
    p.add_argument("--seed", type=int, default=0, help="Hypothesis seed (default 0)")
    p.add_argument("--examples", type=int, default=examples,
                   help=f"stateful traces {per} (default {examples})")
    p.add_argument("--bfs-depth", type=int, default=bfs_depth,
                   help=f"depth of the breadth-first traces (default {bfs_depth}; 0: none)")


def reading_option(text: str, parse: Optional[Callable] = None):
    """The ``--reading`` option's value parsed by ``parse`` (default
    :func:`model.readings.parse_reading`). Raises UsageError naming the option (one line) when it
    is not a reading."""
    from model.readings import ReadingError, parse_reading
    try:
        return (parse or parse_reading)(text)
    except ReadingError as exc:
        raise UsageError(f"--reading: {exc}") from None


def write_new_output(path: str, text: str, option: str = "--out") -> None:
    """Write ``text`` to the new file ``path`` (an ``--out FILE``) whole or not at all, never
    over anything there and never through a symbolic link
    (:func:`counterexamples.outdir.write_new_file`). Raises UsageError (one line, naming
    ``option``, the flag that gave ``path``)."""
    from counterexamples.outdir import write_new_file
    try:
        write_new_file(path, text)
    except FileExistsError:
        raise UsageError(f"{option} {path}: already exists; not overwritten") from None
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write the file: "
                         f"{exc.strerror or exc}; nothing was written") from None


def shown(value, limit: Optional[int] = DEFAULT_LIMIT) -> str:
    """``value`` ready to go inside a rich markup string: its control characters written as
    escapes and cut at ``limit`` (:func:`model.text.visible`), then its markup escaped
    (:func:`rich.markup.escape`), so that a trace's ``[/]`` or ``[link=...]`` is shown as
    written."""
    return escape(visible(value, limit))


def cell(value, limit: Optional[int] = DEFAULT_LIMIT, style: str = "") -> Text:
    """``value`` as a table cell: a :class:`rich.text.Text` (never parsed as markup) of
    :func:`model.text.visible` (control characters escaped, cut at ``limit``)."""
    return Text(visible(value, limit), style=style)


def cell_lines(values: Iterable, limit: Optional[int] = DEFAULT_LIMIT) -> Text:
    """Several values as one table cell, one per line (each as :func:`cell` shows it)."""
    return Text("\n".join(visible(v, limit) for v in values))


def read_vocabulary(path: str, base=None):
    """The producer vocabulary in the JSON file ``path`` (see :func:`model.producer.load_vocabulary`);
    members the file leaves out take ``base``'s (default: the search's default vocabulary).

    Raises:
        UsageError: one line naming ``--vocabulary``, the file and what is wrong: unreadable, not
            UTF-8, not strict JSON (with line and column; a member named twice, with the JSON
            path of its object), or a value the producer cannot use (with the member and index).
    """
    from model.producer import load_vocabulary
    from model.wire import TraceFormatError, loads_json, read_text

    try:
        text = read_text(path, listed=True)  # a regular file, not through a link, bounded
    except TraceFormatError as exc:
        raise UsageError(f"--vocabulary {exc}") from None
    try:
        doc = loads_json(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--vocabulary {path}:{exc.lineno}:{exc.colno}: "
                         f"not valid JSON: {exc.msg}") from None
    try:
        return load_vocabulary(doc, base)
    except ValueError as exc:
        raise UsageError(f"--vocabulary {path}: {exc}") from None


# --- entry point --------------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand of :data:`COMMANDS`, in that order."""
    p = _Parser(prog="activity-check", description="Model checker for the AG-UI Activity draft.")
    p.add_argument("--version", action="version", version=f"activity-check {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for command, module in COMMANDS:
        importlib.import_module(module).PARSERS[command](sub)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``activity-check`` console script (see
    :func:`activity_check.console.console_main`). Returns the exit code: 0, 2 (a usage error, or an
    output that cannot be written: one line on stderr, its control characters escaped), 130
    (interrupted), or the command's own (1: ``corpus check`` found a change, or ``peer
    --fail-on`` names a condition that holds; an uncaught exception, a bug of ours, also exits
    1, with its traceback)."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        args = build_parser().parse_args(argv)
        _refuse_empty_paths(args)
        with _hypothesis_storage_aside(), _input_limits(args):
            return args.func(args)
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except UsageError as exc:
        print(f"activity-check: error: {visible(exc, ERROR_LIMIT)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        # a SIGTERM is reported by console_main, also when a search ended itself on it and the
        # command raised a plain KeyboardInterrupt after (terminated())
        if not isinstance(exc, Terminated) and not terminated():
            print("activity-check: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader stopped reading (``| head``): not an error of ours
        try:  # nothing more can reach it; keep the interpreter's last flush from failing too
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except OSError as exc:  # e.g. the output device is full: one line, no traceback
        where = f" {exc.filename}" if exc.filename else ""
        try:
            print(f"activity-check: error: cannot write{visible(where, None)}: "
                  f"{visible(exc.strerror or exc, None) or type(exc).__name__}",
                  file=sys.stderr)
        except OSError:
            pass
        return EXIT_USAGE


_PATH_OPTIONS = ("out", "graph", "junit", "spec", "checkpoint", "official", "proposal",
                 "run_input", "vocabulary", "adapter", "cluster", "url")
"""The options (by ``dest``) whose value names a file, a directory, a command or an address:
an empty one is refused (:func:`_refuse_empty_paths`)."""


def _refuse_empty_paths(args) -> None:
    """Raise UsageError for an option of :data:`_PATH_OPTIONS` given as the empty string
    (``--out "$DIR"`` with ``DIR`` unset), which a command would otherwise take for the option
    not given and write nothing, or write into the working directory."""
    for dest in _PATH_OPTIONS:
        if getattr(args, dest, None) == "":
            raise UsageError(f"--{dest.replace('_', '-')}: an empty value (an unset shell "
                             "variable?); give the path, command or address")


def terminated() -> bool:
    """Whether a SIGTERM (``kill``, ``timeout``) has reached the process while the command ran,
    and was not lost in a callback Python does not let stop the program: a search that ends
    itself on an interrupt (:func:`properties.search.explore.explore`'s ``stopped_by="interrupted"``)
    cannot tell a SIGTERM from a Ctrl-C, and the command says which it was from this. Always
    False when the command did not start from :func:`activity_check.console.console_main` (a test
    calling :func:`main`), whose handler records them (:data:`activity_check.process.SIGTERMS_RECEIVED`)."""
    return bool(SIGTERMS_RECEIVED)


@contextmanager
def _input_limits(args):
    """While a command runs, the bounds of ``--max-bytes`` and ``--max-lines`` (where the
    command has them) are :data:`model.wire.INPUT_LIMITS`; the defaults are put back after, so
    that a process calling :func:`main` several times (a test) never keeps one command's."""
    from model.wire import set_input_limits
    set_input_limits(getattr(args, "max_bytes", None), getattr(args, "max_lines", None))
    try:
        yield
    finally:
        set_input_limits()


@contextmanager
def _hypothesis_storage_aside():
    """While a command runs, point Hypothesis's storage at a temporary directory, removed
    afterwards, unless ``HYPOTHESIS_STORAGE_DIRECTORY`` names one: Hypothesis caches what it
    reads of the local source under ``./.hypothesis`` even with ``database=None``, and a
    command writes only where the user says (the searches' inputs do not depend on the cache:
    a missing entry is computed again from the source)."""
    if os.environ.get(_HYPOTHESIS_STORAGE):
        yield
        return
    # Through the environment, read when Hypothesis first needs its storage: a command that
    # never imports Hypothesis does not pay for importing it.
    aside = tempfile.mkdtemp(prefix="activity-check-hypothesis-")
    os.environ[_HYPOTHESIS_STORAGE] = aside
    try:
        yield
    finally:
        del os.environ[_HYPOTHESIS_STORAGE]
        configuration = sys.modules.get("hypothesis.configuration")
        if configuration is not None:
            # decided again (environment, then ./.hypothesis) if this process (a test calling
            # main) uses Hypothesis after the command, not from the removed directory
            configuration.set_hypothesis_home_dir(None)
        shutil.rmtree(aside, ignore_errors=True)


_HYPOTHESIS_STORAGE = "HYPOTHESIS_STORAGE_DIRECTORY"


if __name__ == "__main__":  # pragma: no cover
    # ``python -m activity_check.cli``: the command modules import this module by its name, so
    # run that one's main (whose UsageError is the one they raise), not this copy's
    from activity_check.cli import main as _main
    sys.exit(_main())
