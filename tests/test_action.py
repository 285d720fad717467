"""action.yml, run without GitHub: its steps' scripts run with bash and the variables a runner sets.

The action is read with a tiny parser for the YAML subset it is written in (and
checked against PyYAML when that is installed).  ``${{ inputs.X }}`` and
``${{ github.action_path }}`` are substituted the way the runner does, the
``run:`` script is executed as ``bash --noprofile --norc -eo pipefail`` (what
``shell: bash`` means on a runner), and the job summary, the step outputs
and the exit codes 0, 1 and 2 are checked.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

import pytest
from conftest import ROOT

ACTION = os.path.join(ROOT, "action.yml")
GOLD = os.path.join(ROOT, "gold_samples")


# ---------------------------------------------------------------------------
# a parser for the YAML subset of action.yml


def _scalar(text: str) -> Any:
    text = text.strip()
    if text.startswith('"'):
        return json.loads(text)
    if text.startswith("'"):
        return text[1:-1].replace("''", "'")
    if text in ("true", "false"):
        return text == "true"
    return text


def _strip_comment(line: str) -> str:
    return "" if line.lstrip().startswith("#") else line


def parse_yaml_subset(text: str) -> Any:
    """Mappings, lists of mappings, ``|`` block scalars and quoted or plain scalars."""
    lines = [(len(raw) - len(raw.lstrip(" ")), raw) for raw in text.splitlines()]
    pos = 0

    def block(indent: int) -> Any:
        nonlocal pos
        result: Any = None
        while pos < len(lines):
            ind, raw = lines[pos]
            line = _strip_comment(raw)
            if not line.strip():
                pos += 1
                continue
            if ind < indent:
                break
            assert ind == indent, f"line {pos + 1}: unexpected indent"
            body = line.strip()
            if body.startswith("- "):
                result = [] if result is None else result
                # a list item holding a mapping: re-read its first line as a key at a deeper indent
                lines[pos] = (ind + 2, " " * (ind + 2) + body[2:])
                result.append(block(ind + 2))
                continue
            key, sep, rest = body.partition(":")
            assert sep, f"line {pos + 1}: expected KEY: VALUE"
            result = {} if result is None else result
            rest = rest.strip()
            pos += 1
            if rest == "|":
                chunk: List[str] = []
                base: Optional[int] = None
                while pos < len(lines):
                    ind2, raw2 = lines[pos]
                    if raw2.strip() and ind2 <= indent:
                        break
                    if raw2.strip() and base is None:
                        base = ind2
                    chunk.append(raw2[base:] if raw2.strip() and base is not None else "")
                    pos += 1
                while chunk and not chunk[-1]:
                    chunk.pop()
                result[key.strip()] = "\n".join(chunk) + "\n"
            elif rest:
                result[key.strip()] = _scalar(rest)
            else:
                result[key.strip()] = block(_next_indent(pos, indent))
        return result

    def _next_indent(p: int, indent: int) -> int:
        while p < len(lines) and not _strip_comment(lines[p][1]).strip():
            p += 1
        return lines[p][0] if p < len(lines) and lines[p][0] > indent else indent + 2

    return block(0)


def load_action() -> Dict[str, Any]:
    with open(ACTION, encoding="utf-8") as fh:
        return parse_yaml_subset(fh.read())


def test_subset_parser_agrees_with_pyyaml():
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        pytest.skip("PyYAML is not installed (the subset parser is used alone)")
    with open(ACTION, encoding="utf-8") as fh:
        text = fh.read()
    assert parse_yaml_subset(text) == yaml.safe_load(text)


def test_action_shape():
    action = load_action()
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) >= {"args", "summary", "junit", "html"}
    assert action["inputs"]["args"]["required"] is True
    assert set(action["outputs"]) >= {"exit-code", "junit", "html", "markdown"}
    for step in action["runs"]["steps"]:
        assert step["shell"] == "bash"
        # inputs reach the script through env only, never pasted into the script text
        assert "${{" not in step["run"]


# ---------------------------------------------------------------------------
# a runner


_EXPR = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def substitute(text: str, context: Dict[str, str]) -> str:
    def one(m: "re.Match[str]") -> str:
        expr = m.group(1)
        if expr not in context:
            raise KeyError(f"expression not provided by the test runner: {expr}")
        return context[expr]

    return _EXPR.sub(one, text)


def read_outputs(path: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh.read().splitlines():
            if line:
                k, _, v = line.partition("=")
                out[k] = v
    return out


class ActionRun:
    def __init__(self, code: int, outputs: Dict[str, str], summary: str, stdout: str, stderr: str) -> None:
        self.code, self.outputs, self.summary, self.stdout, self.stderr = code, outputs, summary, stdout, stderr


def run_action(
    inputs: Dict[str, str],
    workspace: str,
    *,
    action_path: str = ROOT,
    check_required: bool = True,
    runner_env: Optional[Dict[str, str]] = None,
) -> ActionRun:
    """Run the composite action's steps the way a runner does."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not available")
    action = load_action()
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    for name in inputs:
        assert name in values, f"unknown input {name}"
    values["python"] = sys.executable  # hermetic: the interpreter running the tests (a runner has python3)
    values.update(inputs)
    for name, spec in action["inputs"].items():
        if check_required and spec.get("required") and not values.get(name):
            raise AssertionError(f"required input {name} missing")
    runner = os.path.join(workspace, "_runner")
    os.makedirs(runner, exist_ok=True)
    summary_path = os.path.join(runner, "step_summary.md")
    open(summary_path, "w").close()
    context = {f"inputs.{k}": v for k, v in values.items()}
    context["github.action_path"] = action_path
    context["github.workspace"] = workspace
    step_outputs: Dict[str, Dict[str, str]] = {}
    code = 0
    stdout, stderr = "", ""
    for i, step in enumerate(action["runs"]["steps"]):
        output_path = os.path.join(runner, f"output_{i}")
        open(output_path, "w").close()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "PYTHON"))}
        env.update(
            {
                "GITHUB_ACTIONS": "true",
                "GITHUB_WORKSPACE": workspace,
                "GITHUB_ACTION_PATH": action_path,
                "GITHUB_STEP_SUMMARY": summary_path,
                "GITHUB_OUTPUT": output_path,
                "RUNNER_TEMP": runner,
                **(runner_env or {}),
            }
        )
        for k, v in (step.get("env") or {}).items():
            env[k] = substitute(str(v), context)
        cwd = os.path.join(workspace, substitute(step.get("working-directory", "."), context))
        script = os.path.join(runner, f"step_{i}.sh")
        with open(script, "w", encoding="utf-8") as fh:
            fh.write(substitute(step["run"], context))
        proc = subprocess.run(
            [bash, "--noprofile", "--norc", "-eo", "pipefail", script],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        stdout += proc.stdout
        stderr += proc.stderr
        if "id" in step:
            step_outputs[step["id"]] = read_outputs(output_path)
        if proc.returncode != 0:
            code = proc.returncode
            break
    for sid, outs in step_outputs.items():
        for k, v in outs.items():
            context[f"steps.{sid}.outputs.{k}"] = v
    outputs: Dict[str, str] = {}
    for name, spec in action["outputs"].items():
        try:
            outputs[name] = substitute(spec["value"], context)
        except KeyError:
            outputs[name] = ""  # an output the step never set is empty on a runner
    with open(summary_path, encoding="utf-8") as fh:
        summary = fh.read()
    return ActionRun(code, outputs, summary, stdout, stderr)


def _workspace(tmp_path: Any, family: str) -> str:
    ws = str(tmp_path / "ws")
    shutil.copytree(os.path.join(GOLD, family), ws)
    return ws


# ---------------------------------------------------------------------------
# the three exit codes


def test_pass_exit_0(tmp_path: Any) -> None:
    ws = _workspace(tmp_path, "grounding")
    run = run_action(
        {"args": 'grounding --gold gold.jsonl --trace trace.jsonl --gate "precision >= 0.5" --gate chr>=0.5'}, ws
    )
    assert run.code == 0, run.stderr
    assert run.outputs["exit-code"] == "0"
    assert run.outputs["junit"] == os.path.join(ws, "rageval-min-junit.xml")
    assert run.outputs["html"] == os.path.join(ws, "rageval-min-report.html")
    assert run.outputs["json"] == ""
    junit = open(run.outputs["junit"], encoding="utf-8").read()
    assert 'failures="0"' in junit and "precision&gt;=0.5" in junit
    html = open(run.outputs["html"], encoding="utf-8").read()
    assert html.startswith("<!DOCTYPE html>") and 'data-pass="true"' in html
    assert run.summary.startswith("### rageval-min grounding: PASS")
    assert "rageval-min grounding" in run.stdout and "result: PASS" in run.stdout  # the text report in the log
    assert "::error" not in run.stdout


def test_gate_failure_exit_1(tmp_path: Any) -> None:
    ws = _workspace(tmp_path, "grounding")
    run = run_action(
        {
            "args": "grounding --gold gold.jsonl --trace trace.jsonl --gate precision>=0.9",
            "junit": "reports/junit.xml",
            "html": "reports/report.html",
            "json": "reports/report.json",
        },
        ws,
    )
    assert run.code == 1
    assert run.outputs["exit-code"] == "1"
    assert run.outputs["junit"] == os.path.join(ws, "reports", "junit.xml")
    assert 'failures="1"' in open(run.outputs["junit"], encoding="utf-8").read()
    report = json.load(open(run.outputs["json"], encoding="utf-8"))
    assert report["pass"] is False
    assert 'data-pass="false"' in open(run.outputs["html"], encoding="utf-8").read()
    assert run.summary.startswith("### rageval-min grounding: FAIL")
    assert "| `precision>=0.9` |" in run.summary and "FAIL" in run.summary
    assert "::error title=rageval-min::gate precision>=0.9 failed: 0.6667" in run.stdout
    assert run.outputs["markdown"] and os.path.exists(run.outputs["markdown"])


def test_input_error_exit_2(tmp_path: Any) -> None:
    ws = _workspace(tmp_path, "grounding")
    # a stale report from an earlier run must not be reported as this run's
    with open(os.path.join(ws, "rageval-min-junit.xml"), "w") as fh:
        fh.write("stale")
    run = run_action({"args": "grounding --gold missing.jsonl --trace trace.jsonl"}, ws)
    assert run.code == 2
    assert run.outputs["exit-code"] == "2"
    assert run.outputs["junit"] == "" and run.outputs["html"] == "" and run.outputs["markdown"] == ""
    assert not os.path.exists(os.path.join(ws, "rageval-min-junit.xml"))
    assert run.summary.startswith("### rageval-min: error (exit 2)")
    assert "missing.jsonl" in run.summary
    assert "::error title=rageval-min::" in run.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        ("", "the args input is empty"),
        ('grounding --gold "gold.jsonl', "cannot split the args input"),
    ],
)
def test_bad_args_exit_2(tmp_path: Any, args: str, message: str) -> None:
    ws = _workspace(tmp_path, "grounding")
    # a runner refuses a missing required input; an explicit empty string still reaches the script
    run = run_action({"args": args}, ws, check_required=bool(args))
    assert run.code == 2
    assert run.outputs["exit-code"] == "2"
    assert message in run.stderr
    assert f"::error title=rageval-min::rageval-min action: {message}" in run.stdout
    assert run.summary.startswith("### rageval-min: error (exit 2)") and message in run.summary


def test_args_are_never_expanded(tmp_path: Any) -> None:
    ws = _workspace(tmp_path, "grounding")
    run = run_action({"args": "grounding --gold $(touch pwned)gold.jsonl --trace `touch pwned2` $HOME"}, ws)
    assert run.code == 2
    assert not os.path.exists(os.path.join(ws, "pwned")) and not os.path.exists(os.path.join(ws, "pwned2"))
    assert "$(touch" in run.stderr or "`touch" in run.stderr or "$HOME" in run.stderr


def test_summary_off_and_working_directory(tmp_path: Any) -> None:
    ws = str(tmp_path / "ws")
    shutil.copytree(os.path.join(GOLD, "grounding"), os.path.join(ws, "data"))
    run = run_action(
        {
            "args": "grounding --gold gold.jsonl --trace trace.jsonl",
            "summary": "false",
            "working-directory": "data",
            "html": "",
        },
        ws,
    )
    assert run.code == 1  # the reference's own gates fail on the gold sample
    assert run.summary == ""
    assert run.outputs["html"] == ""
    assert run.outputs["junit"] == os.path.join(ws, "data", "rageval-min-junit.xml")


def test_action_runs_from_its_own_checkout(tmp_path: Any) -> None:
    """Nothing installed: the package is found through github.action_path only."""
    ws = _workspace(tmp_path, "grounding")
    copy = str(tmp_path / "action")
    os.makedirs(copy)
    shutil.copy(ACTION, copy)
    shutil.copytree(os.path.join(ROOT, "rageval_min"), os.path.join(copy, "rageval_min"))
    run = run_action(
        {"args": "grounding --gold gold.jsonl --trace trace.jsonl --gate precision>=0.5"}, ws, action_path=copy
    )
    assert run.code == 0, run.stderr


def _outputs_of(run: ActionRun) -> Tuple[str, ...]:
    return tuple(sorted(run.outputs))


def test_outputs_are_declared(tmp_path: Any) -> None:
    ws = _workspace(tmp_path, "grounding")
    run = run_action({"args": "grounding --gold gold.jsonl --trace trace.jsonl"}, ws)
    assert _outputs_of(run) == ("exit-code", "html", "json", "junit", "markdown")


def test_docs_workflow_compare_with_fail_on_regression(tmp_path: Any) -> None:
    """The docs/ci.md flow: score baseline and candidate with --per-item, then compare them."""
    ws = _workspace(tmp_path, "rouge")
    base = run_action({"args": "rouge --input pairs.jsonl --summary --per-item base.jsonl", "html": ""}, ws)
    assert base.code == 0, base.stderr
    rows = [json.loads(line) for line in open(os.path.join(ws, "base.jsonl"), encoding="utf-8")]
    with (
        open(os.path.join(ws, "base.jsonl"), "w", encoding="utf-8") as b,
        open(os.path.join(ws, "cand.jsonl"), "w", encoding="utf-8") as c,
    ):
        for rep in range(3):
            for row in rows:
                row = dict(row, id=f"{row['id']}-{rep}")
                b.write(json.dumps(row) + "\n")
                worse = {k: (v - 0.2 if k.startswith("rouge2.") else v) for k, v in row.items()}
                c.write(json.dumps(worse) + "\n")
    run = run_action(
        {
            "args": "compare --baseline base.jsonl --candidate cand.jsonl --key id --fail-on-regression",
            "html": "compare.html",
        },
        ws,
    )
    if run.code == 2 and "compare" in run.stderr and "invalid choice" in run.stderr:
        pytest.skip("the compare command is not available in this tree")
    assert run.code == 1, run.stderr
    assert run.outputs["exit-code"] == "1"
    html = open(run.outputs["html"], encoding="utf-8").read()
    assert "Per-item regressions" in html and 'data-pass="false"' in html
    assert run.summary.startswith("### rageval-min compare: FAIL")


def test_args_demo_runs_as_given(tmp_path: Any) -> None:
    """A command without report options is run without the action's --output options."""
    ws = str(tmp_path / "ws")
    os.makedirs(ws)
    run = run_action({"args": "demo"}, ws)
    assert run.code == 0, run.stderr
    assert "all families reproduce their expected outputs" in run.stdout
    assert "--output" not in run.stderr and run.summary.startswith("### rageval-min demo: done (exit 0)")


def test_default_report_paths_are_unique_per_step(tmp_path: Any) -> None:
    """Two steps of one job (GITHUB_ACTION differs) keep each other's reports."""
    ws = _workspace(tmp_path, "grounding")
    args = {"args": 'grounding --gold gold.jsonl --trace trace.jsonl --gate "precision>=0.5"'}
    first = run_action(args, ws, runner_env={"GITHUB_ACTION": "__rageval-min"})
    second = run_action(args, ws, runner_env={"GITHUB_ACTION": "__rageval-min_2"})
    assert first.code == second.code == 0
    assert first.outputs["junit"] == os.path.join(ws, "rageval-min-__rageval-min-junit.xml")
    assert second.outputs["junit"] != first.outputs["junit"]
    for run in (first, second):
        assert os.path.exists(run.outputs["junit"]) and os.path.exists(run.outputs["html"])
