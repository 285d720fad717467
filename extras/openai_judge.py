"""Judge through the official ``openai`` client (``pip install 'rageval-min[openai]'``).

``OpenAIJudge(model)`` speaks chat completions like the stdlib
:class:`rageval_min.judges.HttpJudge`, but through the client library, so the
client's own environment (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, proxies,
organisation headers) applies.  ``base_url`` points it at any compatible
server.  The client's own retries are switched off: the rageval_min runner
retries, so that every judge behaves the same way.  The API key is never part
of the identity, the cache or a message.
"""

import os
from typing import Any, Dict, Mapping, Optional

from rageval_min.errors import ScoringError
from rageval_min.judges import DEFAULT_TIMEOUT, JudgeAnswer, JudgeError, chat_messages

from ._common import missing_extra

__all__ = ["OpenAIJudge", "PIP_COMMAND"]

PIP_COMMAND = "pip install 'rageval-min[openai]'"


def _client_module() -> Any:
    try:
        import openai
    except ImportError:
        raise missing_extra("openai", PIP_COMMAND) from None
    return openai


class OpenAIJudge:
    """Chat completions through ``openai.OpenAI``.

    ``api_key_env`` names the variable holding the key (default: the
    client's ``OPENAI_API_KEY``).  ``client`` may be passed ready-made.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        api_key_env: Optional[str] = None,
        client: Any = None,
    ) -> None:
        openai = _client_module()
        self._openai = openai
        self.model = model
        self.timeout = timeout
        if client is None:
            kwargs: Dict[str, Any] = {"timeout": timeout, "max_retries": 0}
            if base_url is not None:
                kwargs["base_url"] = base_url
            if api_key_env:
                key = os.environ.get(api_key_env)
                if not key:
                    raise ScoringError(f"openai judge: the environment variable {api_key_env} is not set")
                kwargs["api_key"] = key
            try:
                client = openai.OpenAI(**kwargs)
            except openai.OpenAIError as exc:
                raise ScoringError(f"openai judge: {exc}") from None
        self._client = client
        self.base_url = str(client.base_url).rstrip("/")
        self.identity = "openai-chat@" + self.base_url

    def __repr__(self) -> str:
        return f"OpenAIJudge(model={self.model!r}, base_url={self.base_url!r})"

    def __call__(self, prompt: str, params: Mapping[str, Any]) -> str:
        return self.answer_full(prompt, params).text

    def answer_full(self, prompt: str, params: Mapping[str, Any], sample: int = 0) -> JudgeAnswer:
        """The answer and the response's ``usage`` (as the client parsed it; ``None`` without one)."""
        openai = self._openai
        messages, rest = chat_messages(prompt, params)
        try:
            resp = self._client.chat.completions.create(
                model=self.model, messages=messages, timeout=self.timeout, **rest
            )
        except openai.APITimeoutError:
            raise JudgeError(f"timed out after {self.timeout:g}s waiting for {self.base_url}", retryable=True) from None
        except openai.APIConnectionError as exc:
            raise JudgeError(f"cannot reach {self.base_url}: {exc.__class__.__name__}", retryable=True) from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            retryable = status == 429 or 500 <= status <= 599
            after = None
            try:
                ra = exc.response.headers.get("retry-after")
                after = float(ra) if ra else None
            except (TypeError, ValueError, AttributeError):
                after = None
            raise JudgeError(f"HTTP {status} from {self.base_url}", retryable=retryable, retry_after=after) from None
        except openai.OpenAIError as exc:  # malformed responses and the like
            raise JudgeError(f"bad response from {self.base_url}: {exc.__class__.__name__}") from None
        except ValueError as exc:  # JSON decoding inside the client
            raise JudgeError(f"malformed JSON from {self.base_url}: {exc.__class__.__name__}") from None
        try:
            content = resp.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            raise JudgeError(f"no choices[0].message.content in the response from {self.base_url}") from None
        if not isinstance(content, str):
            raise JudgeError(f"choices[0].message.content from {self.base_url} is not a string")
        return JudgeAnswer(content, _usage(getattr(resp, "usage", None)))


def _usage(usage: Any) -> Optional[Dict[str, Any]]:
    """The client's usage object as the plain JSON object the server sent (``None`` without one)."""
    dump = getattr(usage, "model_dump", None)
    if not callable(dump):
        return None
    try:
        value = dump(exclude_none=True)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None
