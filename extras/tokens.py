"""cl100k_base token lengths for ``rageval-min pairwise score --lengths tokens``.

DevBench SubEval reports answer lengths in tiktoken ``cl100k_base`` tokens.
Two backends give those counts; the first that loads is used:

1. ``bpe-openai`` (the default of ``pip install 'rageval-min[tokens]'``): the
   cl100k vocabulary ships inside the package, so it works offline.  Its counts
   reproduce the reference's ``length_stats.csv`` files exactly (tested).
2. ``tiktoken``: the reference's own tokenizer.  It downloads the BPE file on
   first use unless ``TIKTOKEN_CACHE_DIR`` holds it, so it needs network access
   or a pre-filled cache.
"""

from typing import Callable, List

from rageval_min.errors import ScoringError

INSTALL = "pip install 'rageval-min[tokens]'"


def _encoder_bpe_openai() -> Callable[[str], List[int]]:
    import bpe_openai  # type: ignore[import-not-found]

    enc = bpe_openai.get_encoding("cl100k_base")
    return enc.encode  # type: ignore[no-any-return]


def _encoder_tiktoken() -> Callable[[str], List[int]]:
    import tiktoken  # type: ignore[import-not-found]

    enc = tiktoken.get_encoding("cl100k_base")
    return enc.encode  # type: ignore[no-any-return]


def cl100k_length() -> Callable[[str], int]:
    """A function returning the number of cl100k_base tokens of a text."""
    failures = []
    encode = None
    for name, loader in (("bpe-openai", _encoder_bpe_openai), ("tiktoken", _encoder_tiktoken)):
        try:
            encode = loader()
            break
        except ImportError:
            failures.append(f"{name} is not installed")
        except Exception as exc:  # e.g. tiktoken cannot download its BPE file
            failures.append(f"{name} could not load cl100k_base ({type(exc).__name__}: {exc})")
    if encode is None:
        raise ScoringError(f"token lengths need a cl100k tokenizer: {INSTALL} ({'; '.join(failures)})")

    def length(text: str) -> int:
        try:
            return len(encode(text))
        except ValueError as exc:  # special tokens such as <|endoftext|> in the text
            raise ScoringError(f"the tokenizer cannot encode an answer: {exc}") from None

    return length
