"""Writing output files: each appears whole or not at all, and a run's files all or none.

:func:`atomic_writer` writes a file through a temporary in the same directory, renamed into
place when the writing ends; :func:`commit_together` holds the renames of one run until its
end, so that a run that fails leaves no output; :func:`open_output` is a file or standard
output.
"""

from __future__ import annotations

import contextvars
import os
import sys
from contextlib import contextmanager

from .errors import ScoringError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterator, List, Optional, TextIO, Tuple

__all__ = ["OutputGroup", "atomic_writer", "commit_together", "open_output"]

_TMP_PREFIX = ".rageval-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _remove_stale_temporaries(directory: str, base: str) -> None:
    """Remove ``.rageval-<base>.<pid>.*.tmp`` files left by a killed run (their pid is gone)."""
    head = f"{_TMP_PREFIX}{base}."
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not (name.startswith(head) and name.endswith(".tmp")):
            continue
        pid_text = name[len(head) :].split(".", 1)[0]
        if pid_text.isdigit() and int(pid_text) != os.getpid() and not _pid_alive(int(pid_text)):
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def atomic_writer(path: str, *, encoding: str = "utf-8", alone: bool = False) -> Iterator[TextIO]:
    """Open ``path`` for writing so that it appears whole or not at all.

    The text goes to a temporary file ``.rageval-<name>.<pid>.<random>.tmp`` in
    the same directory, which is flushed, fsync'd and renamed over ``path``
    when the block ends normally.  If the block raises (or the process gets
    SIGTERM/SIGHUP, which the CLI turns into an exception), the temporary file
    is removed and ``path`` is untouched; temporaries of a run that was killed
    outright (SIGKILL) are removed by the next write to the same name.

    * An existing file keeps its permission bits; a new one gets the usual
      ``0666 & ~umask``.
    * A symbolic link is followed: the file it points to is replaced (as a
      plain ``open(path, "w")`` would write through it); the link stays.
    * A path that exists but is not a regular file (``/dev/null``, a FIFO, a
      terminal) is written directly, never renamed over.
    * Within :func:`commit_together`, the rename waits for the end of the
      group, with those of the other files written in it -- unless ``alone``:
      a file meant to appear even though the run then fails (the judged
      records of a run whose failed calls a rerun resumes).
    """
    target = os.path.realpath(path)
    if os.path.exists(target) and not os.path.isfile(target):
        if os.path.isdir(target):
            raise ScoringError("cannot write: is a directory", path=path)
        try:
            with open(target, "w", encoding=encoding, newline="") as fh:
                yield fh
        except OSError as exc:
            raise ScoringError(f"cannot write: {exc.strerror or exc}", path=path) from None
        return
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise ScoringError("cannot write: the directory does not exist", path=path)
    base = os.path.basename(target)
    _remove_stale_temporaries(directory, base)
    import tempfile  # only when a file is written: it is slow to import

    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{_TMP_PREFIX}{base}.{os.getpid()}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise ScoringError(f"cannot write: {exc.strerror or exc}", path=path) from None
    ok = False
    try:
        try:
            mode = os.stat(target).st_mode & 0o7777
        except OSError:
            mode = _new_file_mode()
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w", encoding=encoding, newline="") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        group = None if alone else _PENDING.get()
        if group is not None:  # renamed with the run's other outputs, see commit_together
            group.pending.append((tmp, target, path))
        else:
            os.replace(tmp, target)
        ok = True
    except OSError as exc:
        raise ScoringError(f"cannot write: {exc.strerror or exc}", path=path) from None
    finally:
        if not ok:
            try:
                os.unlink(tmp)
            except OSError:
                pass


class OutputGroup:
    """The files of one :func:`commit_together` block: finished temporaries waiting to be renamed,
    ``(temporary, target, path)`` in the order they were written."""

    def __init__(self) -> None:
        self.pending: List[Tuple[str, str, str]] = []
        self.discarded = False

    def discard(self) -> None:
        """Write none of the group's files (the run ends with exit 2 after all)."""
        self.discarded = True


#: The group of the running command, see :func:`commit_together`.
_PENDING: "contextvars.ContextVar[Optional[OutputGroup]]" = contextvars.ContextVar(
    "rageval_min_pending_outputs", default=None
)


@contextmanager
def commit_together() -> Iterator[OutputGroup]:
    """All the outputs of one run, or none: within the block, files written through
    :func:`atomic_writer` stay temporaries until the block ends normally, then are renamed into
    place together.  If the block raises (an input error, Ctrl-C, SIGTERM) or the group is
    discarded, every temporary is removed and no output appears; files at those paths are
    untouched.  A group inside a group (``demo`` running each gold case through the CLI) commits
    its own files at its own end.

    The renames happen one after the other at the end, in the order the files were written; only
    a rename itself failing (rare: same directory, same file system) can leave the first ones done.
    """
    group = OutputGroup()
    token = _PENDING.set(group)
    ok = False
    try:
        yield group
        ok = not group.discarded
    finally:
        _PENDING.reset(token)
        if not ok:
            _discard(group.pending)
    if not ok:
        return
    for i, (tmp, target, path) in enumerate(group.pending):
        try:
            os.replace(tmp, target)
        except OSError as exc:
            _discard(group.pending[i:])
            raise ScoringError(f"cannot write: {exc.strerror or exc}", path=path) from None


def _discard(pending: List[Tuple[str, str, str]]) -> None:
    for tmp, _, _ in pending:
        try:
            os.unlink(tmp)
        except OSError:
            pass


@contextmanager
def open_output(path: Optional[str], stdout: Optional[TextIO] = None) -> Iterator[TextIO]:
    """Give a writer for ``path`` (atomic), or ``stdout`` when path is None or ``-``."""
    if path is None or path == "-":
        yield stdout if stdout is not None else sys.stdout
        return
    with atomic_writer(path) as fh:
        yield fh
