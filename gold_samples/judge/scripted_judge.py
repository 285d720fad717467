"""A scripted stand-in judge used to make gold_samples/judge/cache.jsonl (prompt on stdin, label on stdout)."""

import sys

r = sys.stdin.read().split("Response:", 1)[1]
if "could not find" in r:
    print("yes", end="")
elif "do not say" in r:
    print("partial", end="")
else:
    print("no", end="")
