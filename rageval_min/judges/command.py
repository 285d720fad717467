"""Pipeline step: the ``cmd:`` judge transport -- one program run per prompt, prompt on stdin, answer on stdout.

Spec ``cmd:PROGRAM ARGS``: the command is split with :func:`shlex.split` (no
shell) and run once per prompt.  Exit status 75 (``EX_TEMPFAIL``) is retried,
any other non-zero status is a failed call.  The API key variables are not
passed to the program unless ``--judge-pass-env`` is given.

Each program runs in a process group of its own (POSIX), which is killed whole
-- the program and anything it started -- on a timeout, on Ctrl-C or SIGTERM
(:meth:`CommandJudge.cancel`, or an interruption of the call itself): no judge
process outlives the run.
"""

import json
import os
import shlex
import signal
import subprocess
import threading
from typing import (
    Any,
    Dict,
    Mapping,
    Optional,
    Set,
)

from ..errors import ScoringError
from .interface import (
    DEFAULT_TIMEOUT,
    EX_TEMPFAIL,
    JudgeError,
    _check_timeout,
    _env_secrets,
    key_env_names,
    redact,
)

__all__ = ["CommandJudge"]


class CommandJudge:
    """Run a program per prompt: prompt (UTF-8) on stdin, answer on stdout.

    The command is split with :func:`shlex.split` and run without a shell.
    The model name and the step parameters are passed as the environment
    variables ``RAGEVAL_MIN_JUDGE_MODEL`` and ``RAGEVAL_MIN_JUDGE_PARAMS``
    (JSON).  The API key variables (``RAGEVAL_MIN_JUDGE_API_KEY``,
    ``OPENAI_API_KEY`` and ``api_key_env``) are removed from the program's
    environment unless ``pass_env`` is set (``--judge-pass-env``).  stdout is
    returned as is (decoded as UTF-8).  Exit status 75 and a timeout (the
    whole run of the program) are retryable failures; any other non-zero
    status is a failure that is not retried.
    """

    def __init__(
        self,
        command: str,
        *,
        model: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        api_key_env: Optional[str] = None,
        pass_env: bool = False,
    ) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise ScoringError(f"cannot split judge command {command!r}: {exc}") from None
        if not self.argv:
            raise ScoringError('cmd: judge needs a program, e.g. cmd:"python my_judge.py"')
        self.command = command
        self.model = model
        self.timeout = _check_timeout(timeout)
        self.api_key_env = api_key_env
        self.pass_env = pass_env
        self.identity = "cmd:" + " ".join(shlex.quote(a) for a in self.argv)
        self._live: Set["subprocess.Popen[bytes]"] = set()
        self._live_lock = threading.Lock()
        self._cancelled = False

    def __repr__(self) -> str:
        return f"CommandJudge(command={self.command!r}, model={self.model!r})"

    def environment(self, params: Mapping[str, Any]) -> Dict[str, str]:
        """The program's environment: ours, less the API keys (unless ``pass_env``), plus model and params."""
        env = dict(os.environ)
        if not self.pass_env:
            for name in key_env_names(self.api_key_env):
                env.pop(name, None)
        env["RAGEVAL_MIN_JUDGE_MODEL"] = self.model
        env["RAGEVAL_MIN_JUDGE_PARAMS"] = json.dumps(dict(params), ensure_ascii=False, sort_keys=True)
        return env

    def cancel(self) -> None:
        """Kill every program still running, with whatever it started, and any started from now on
        (used on Ctrl-C and SIGTERM: the judge is not used again)."""
        with self._live_lock:
            self._cancelled = True
            live = list(self._live)
        for proc in live:
            _kill_group(proc)

    def __call__(self, prompt: str, params: Mapping[str, Any]) -> str:
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.environment(params),
                start_new_session=os.name == "posix",  # its own process group, killed whole
            )
        except OSError as exc:
            raise ScoringError(f"cannot run judge command {self.argv[0]!r}: {exc.strerror or exc}") from None
        with self._live_lock:
            self._live.add(proc)
            cancelled = self._cancelled
        try:
            if cancelled:  # cancel() ran while this program was starting
                raise JudgeError("the judge was cancelled")
            out, err = proc.communicate(prompt.encode("utf-8"), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            raise JudgeError(f"judge command timed out after {self.timeout:g}s", retryable=True) from None
        except BaseException:  # Ctrl-C, SIGTERM or a failed pipe: the program does not outlive the call
            _kill_group(proc)
            raise
        finally:
            with self._live_lock:
                self._live.discard(proc)
        if proc.returncode != 0:
            lines = err.decode("utf-8", "replace").strip().splitlines()
            tail = redact(lines[-1], _env_secrets(self.api_key_env)) if lines else ""
            raise JudgeError(
                f"judge command exited with status {proc.returncode}" + (f": {tail}" if tail else ""),
                retryable=proc.returncode == EX_TEMPFAIL,
            )
        try:
            return out.decode("utf-8")
        except UnicodeDecodeError:
            raise JudgeError("judge command wrote non-UTF-8 output") from None


def _kill_group(proc: "subprocess.Popen[bytes]") -> None:
    """Kill ``proc`` and its process group (its own, see ``start_new_session``), then reap it."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - no process groups
            proc.kill()
    except OSError:  # already gone
        pass
    try:
        proc.wait(timeout=5)
    except (subprocess.TimeoutExpired, OSError):  # pragma: no cover - SIGKILL cannot be ignored
        pass
