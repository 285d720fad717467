"""tiktoken ``cl100k_base`` token lengths for ``rageval-min pairwise score --lengths tokens``.

DevBench SubEval reports answer lengths in cl100k_base tokens.  tiktoken
downloads the BPE file on first use (from openaipublic.blob.core.windows.net)
unless it is cached (``TIKTOKEN_CACHE_DIR``), so this needs network access or a
pre-filled cache.  Install with ``pip install 'rageval-min[tokens]'``.
"""

from typing import Callable

from rageval_min.errors import ScoringError

INSTALL = "pip install 'rageval-min[tokens]'"


def cl100k_length() -> Callable[[str], int]:
    """A function returning the number of cl100k_base tokens of a text."""
    try:
        import tiktoken
    except ImportError:
        raise ScoringError(f"token lengths need tiktoken: {INSTALL}") from None
    try:
        enc = tiktoken.get_encoding("cl100k_base")
    except Exception as exc:  # network or cache failure inside tiktoken
        raise ScoringError(
            "tiktoken could not load cl100k_base (it downloads the BPE file on first use; "
            f"set TIKTOKEN_CACHE_DIR to a cache that has it): {type(exc).__name__}: {exc}"
        ) from None

    def length(text: str) -> int:
        try:
            return len(enc.encode(text))
        except ValueError as exc:  # special tokens such as <|endoftext|> in the text
            raise ScoringError(f"tiktoken cannot encode an answer: {exc}") from None

    return length
