"""Bound how long a download may wait on an unresponsive network."""
from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

DOWNLOAD_TIMEOUT_S = 30.0


@contextmanager
def socket_timeout(seconds: float = DOWNLOAD_TIMEOUT_S) -> Iterator[None]:
    """Give sockets without their own timeout this one for the duration of the block."""
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(seconds if previous is None else min(previous, seconds))
    try:
        yield
    finally:
        socket.setdefaulttimeout(previous)


def describe_error(error: BaseException) -> str:
    """One line: the exception type and message, without a traceback."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")
