"""A per-principal token bucket, in memory: `rate` requests a second, bursts of `burst`."""

import threading
import time
from collections import OrderedDict

MAX_BUCKETS = 10_000


class RateLimiter:
    """Token buckets by key (org and actor); thread-safe, bounded in memory.

    The least recently used buckets are dropped beyond `MAX_BUCKETS`; a dropped bucket
    comes back full, which only ever errs towards letting a request through.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # tokens, at

    def take(self, key: str, rate: float, burst: int) -> float:
        """Takes one token; returns 0 when granted, else the seconds until one is due."""
        if rate <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            tokens, at = self._buckets.pop(key, (float(burst), now))
            tokens = min(float(burst), tokens + (now - at) * rate)
            granted = tokens >= 1
            self._buckets[key] = (tokens - 1 if granted else tokens, now)
            while len(self._buckets) > MAX_BUCKETS:
                self._buckets.popitem(last=False)
        return 0.0 if granted else (1 - tokens) / rate
