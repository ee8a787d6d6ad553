"""The line a run shows while it waits for its first worker (a batch job, or
one joining ``--scheduler``)."""

from __future__ import annotations

import time

from .terminal import verbosity

__all__ = ["WaitingLine"]


class WaitingLine:
    """A status line while the run waits for its first worker (a batch job, or
    one joining ``--scheduler``): updated in place on a terminal, else printed
    when it changes and every ``EVERY_S`` seconds (logs)."""

    EVERY_S = 30.0

    def __init__(self, console, target) -> None:
        self.console, self.status, self.started, self.printed = console, None, False, None
        if (target.batch or target.scheduler) and verbosity() >= 0:
            self.status = console.status("")
            target.on_wait = self.update

    def update(self, text: str) -> None:
        if not self.console.is_terminal:  # a new state at once, the same one every EVERY_S
            state = text.rsplit(" (", 1)[0]
            if self.printed is None or state != self.printed[0] or time.monotonic() - self.printed[1] >= self.EVERY_S:
                self.console.print(text, highlight=False, soft_wrap=True)
                self.printed = (state, time.monotonic())
            return
        if not self.started:
            self.status.start()
            self.started = True
        self.status.update(text)

    def __enter__(self) -> "WaitingLine":
        return self

    def __exit__(self, *exc) -> None:
        if self.status is not None:
            self.status.stop()
