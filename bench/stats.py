"""Figures the benchmarks print."""


def percentile(values: list[float], q: float) -> float:
    """The sample at quantile `q` (0 to 1) of `values`, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
