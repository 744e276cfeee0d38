"""How long a download may wait on an unresponsive network, and one-line error descriptions."""
from __future__ import annotations

DOWNLOAD_TIMEOUT_S = 30.0


def describe_error(error: BaseException) -> str:
    """One line: the exception type and message, without a traceback."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")
