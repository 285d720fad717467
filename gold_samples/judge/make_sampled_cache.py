"""Makes gold_samples/judge/sampled_cache.jsonl: `judge run --samples 3` against the loopback test server
(tests/judge_server.py) answering as scripted_judge.py does, except that the second answer to the q3 prompt
says "no", and reporting OpenAI-shaped usage (prompt tokens = words of the prompt, one completion token,
the last 16 prompt tokens read from the server's prompt cache after the first answer to a prompt).
The entries are then written as a server at http://127.0.0.1:8000/v1 would have them (the test server
listens on a free port; the judge identity and so the keys name that address instead).

Run from the repository root: python gold_samples/judge/make_sampled_cache.py
"""

import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

import json  # noqa: E402

import judge_server  # noqa: E402

from rageval_min.cli import main  # noqa: E402
from rageval_min.judges.cache import _sha256, sample_key  # noqa: E402

IDENTITY = "openai-chat@http://127.0.0.1:8000/v1"

seen = Counter()


def answer(prompt, body):
    k = seen[prompt]
    r = prompt.split("Response:", 1)[1]
    if "could not find" in r:
        return "yes"
    if "do not say" in r:
        return "no" if k == 1 else "partial"
    return "no"


def usage(prompt, body):
    k = seen[prompt]
    seen[prompt] += 1
    words = len(prompt.split())
    return {"prompt_tokens": words, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 16 if k else 0}}


out = os.path.join(HERE, "sampled_cache.jsonl")
if os.path.exists(out):
    os.remove(out)
with judge_server.ChatServer(answer=lambda p, b: answer(p, b)) as server:
    server.usage = usage
    argv = ["judge", "run", "--input", os.path.join(HERE, "prompts.jsonl"), "--records", os.devnull]
    argv += ["--judge", server.base_url, "--judge-model", "judge-small", "--judge-cache", out]
    code = main(argv + ["--param", "temperature=0", "--samples", "3"])
with open(os.path.join(HERE, "prompts.jsonl"), encoding="utf-8") as fh:
    prompts = {_sha256(p): p for p in (json.loads(line)["prompt"] for line in fh)}
with open(out, encoding="utf-8") as fh:
    entries = [json.loads(line) for line in fh]
with open(out, "w", encoding="utf-8") as fh:
    for e in entries:
        prompt = prompts[e["prompt_sha256"]]
        e["key"] = sample_key(IDENTITY, e["model"], e["params"], prompt, e.get("sample", 0))
        e["judge"] = IDENTITY
        fh.write(json.dumps(e, ensure_ascii=False) + "\n")
sys.exit(code)
